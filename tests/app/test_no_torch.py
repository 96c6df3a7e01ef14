"""Without torch and transformers: everything but training imports and runs, and training
says in one line how to install it (CLI exit code 2, the wizard a message instead)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from app.cli import main
from app.training_extra import INSTALL_HINT, missing_training_packages
from engine.config import DataPaths
from engine.models import set_active
from helpers import NO_TORCH as BLOCKER
from tiny_models import register_tiny_model

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLE_DIR = REPO_ROOT / "resources" / "sample"
EVERYTHING_BUT_TRAINING = BLOCKER + textwrap.dedent("""
    import importlib, json, pkgutil
    import app, app.cli, app.gui, engine

    imported = []
    for package in (engine, app):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not info.name.endswith("__main__"):
                importlib.import_module(info.name)
                imported.append(info.name)

    from app.cli import main

    sample, first, second = sys.argv[1:4]
    codes = {
        "index": main(["index", sample]),
        "search": main(["search", "how do bees make honey"]),
        "mine": main(["mine", first, second, "--same-language", "--margin", "absolute",
                      "--threshold", "0.5", "--json"]),
        "train": main(["train", "--corpus", sample, "--out", "mine"]),
    }
    leaked = sorted(m for m in sys.modules if m.partition(".")[0] in ("torch", "transformers"))
    print(json.dumps({"codes": codes, "imported": len(imported), "leaked": leaked}))
""")


@pytest.fixture
def tiny_active_model(babelfind_home):
    """A tiny registered model, active, so the commands load no bundled model."""
    paths = DataPaths(babelfind_home)
    register_tiny_model(paths, "tiny")
    set_active("tiny", paths)
    return paths


@pytest.mark.slow
def test_index_search_and_mine_run_with_torch_unimportable(tiny_active_model, tmp_path):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    lines = "The cat sat on the mat.\nThe dog runs fast.\nA red house and a green tree.\n"
    first.write_text(lines, encoding="utf-8")
    second.write_text(lines, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", EVERYTHING_BUT_TRAINING, str(SAMPLE_DIR), str(first), str(second)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["codes"] == {"index": 0, "search": 0, "mine": 0, "train": 2}
    assert result["imported"] > 100  # every module of engine and app, not a few
    assert result["leaked"] == []
    assert "babelfind train needs torch and transformers" in done.stderr
    assert INSTALL_HINT in done.stderr


@pytest.fixture
def no_training(monkeypatch):
    """torch and transformers unimportable in this process (None in sys.modules blocks an
    import even when another test imported them already)."""
    for name in ("torch", "transformers"):
        monkeypatch.setitem(sys.modules, name, None)


def test_blocked_packages_count_as_missing(no_training):
    assert missing_training_packages() == ["torch", "transformers"]


def test_train_without_torch_is_one_line_and_exit_code_2(no_training, tmp_path, capsys):
    assert main(["train", "--corpus", str(SAMPLE_DIR), "--out", "notes"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("babelfind: error: babelfind train needs torch and transformers, which this "
                   f"install leaves out; install them with: {INSTALL_HINT}")


def test_train_laser_without_torch_is_one_line_and_exit_code_2(no_training, capsys):
    assert main(["train-laser", "--corpus", str(SAMPLE_DIR), "--out", "notes-laser"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("babelfind: error: babelfind train-laser needs torch and transformers, which "
                   f"this install leaves out; install them with: {INSTALL_HINT}")


@pytest.mark.parametrize("source", ["file", "folder"])
def test_import_laser_without_torch_says_how_to_install(source, no_training, tmp_path, capsys):
    checkpoint, spm, vocab = (tmp_path / n for n in ("laser2.pt", "laser2.spm", "laser2.cvocab"))
    for path in (checkpoint, spm, vocab):
        path.write_bytes(b"x")
    given = ([str(checkpoint), "--spm", str(spm), "--cvocab", str(vocab), "--name", "laser2"]
             if source == "file" else [str(tmp_path)])
    code = main(["models", "import-laser", *given])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert "importing a LASER checkpoint needs torch and transformers" in err and INSTALL_HINT in err
    assert len(err.splitlines()) == 1


def test_train_with_torch_present_passes_the_check(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    assert missing_training_packages() == []
