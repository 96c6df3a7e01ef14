"""`embed` and `mine` on hostile inputs: one line and exit code 1, never a hang or a traceback."""

from __future__ import annotations

import os

import numpy as np
import pytest
from mining_fakes import ENGLISH, TranslationEncoder

from app.cli import main
from app.cli import mine_command
from engine.errors import InputError

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
needs_dev_zero = pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")


def one_error_line(argv, capsys, code: int = 1) -> str:
    capsys.readouterr()
    assert main(argv) == code
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("babelfind") and ": error: " in err[0], err
    return err[0]


def test_embed_reads_cr_only_line_breaks_as_lines(home_with_tiny, tmp_path):
    source = tmp_path / "old-mac.txt"
    source.write_bytes(b"the cat sat\rthe dog runs\r\rred house\r\nblue tree\n")
    out = tmp_path / "out.npy"
    assert main(["embed", str(source), "-o", str(out), "--variant", "fp32"]) == 0
    assert np.load(out).shape == (5, 32)  # the empty line keeps its row
    assert not list(tmp_path.glob("*.part*"))


def test_embed_failing_midway_leaves_no_part_file(home_with_tiny, tmp_path, monkeypatch, capsys):
    import app.cli.model_commands as commands
    from engine.models import load_encoder

    source = tmp_path / "in.txt"
    source.write_text("\n".join(f"line {i}" for i in range(100)), encoding="utf-8")
    encoder = load_encoder("tiny", variant="fp32")
    calls = []

    class FailsOnSecondChunk:
        dim = encoder.dim

        def encode(self, texts, kind):
            calls.append(len(texts))
            if len(calls) == 2:
                raise InputError("the encoder gave up")
            return encoder.encode(texts, kind=kind)

    monkeypatch.setattr("engine.models.load_encoder", lambda *a, **k: FailsOnSecondChunk())
    monkeypatch.setattr(commands, "EMBED_CHUNK", 32)
    out = tmp_path / "out.npy"
    assert "the encoder gave up" in one_error_line(["embed", str(source), "-o", str(out)], capsys)
    assert not out.exists() and not list(tmp_path.glob("*.part*"))


@needs_fifo
@pytest.mark.timeout(60)
def test_embed_on_a_fifo_is_one_line(home_with_tiny, tmp_path, capsys):
    os.mkfifo(tmp_path / "pipe.txt")
    # refused while the command line is read, before anything is opened or loaded
    line = one_error_line(["embed", str(tmp_path / "pipe.txt"), "-o", str(tmp_path / "o.npy")],
                          capsys, code=2)
    assert "is not a regular file" in line
    assert not list(tmp_path.glob("*.part*"))


@pytest.fixture
def fake_encoder(monkeypatch):
    encoder = TranslationEncoder()
    monkeypatch.setattr(mine_command, "get_encoder", lambda model: encoder)
    return encoder


@needs_fifo
@needs_dev_zero
@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_mine_on_a_fifo_or_dev_zero_is_one_line(fake_encoder, tmp_path, capsys, kind):
    good = tmp_path / "en.txt"
    good.write_text("\n".join(ENGLISH[:6]) + "\n", encoding="utf-8")
    hostile = tmp_path / "de.txt"
    if kind == "fifo":
        os.mkfifo(hostile)
    else:
        os.symlink("/dev/zero", hostile)
    assert "not a regular file" in one_error_line(["mine", str(hostile), str(good)], capsys, code=2)
