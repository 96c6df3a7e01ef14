"""The command line on a real folder: forget/reindex, files without a known extension,
Moses-named mining inputs, honest progress figures and paths that do not exist."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers import WordEncoder, run_cli as run
from mining_fakes import ENGLISH, GERMAN, TranslationEncoder

from app.cli import library_commands, main, mine_command
from engine.config import data_paths
from engine.library import Library


@pytest.fixture
def word_library(monkeypatch):
    """`babelfind index/forget/reindex` over a model-free encoder (fast, deterministic).

    No bundled model is installed either: an active e5 would make `reindex` re-encode
    the words-encoder library with it."""
    monkeypatch.setattr(
        library_commands, "open_library",
        lambda args: Library.open(data_paths(), db_url=args.db, encoder=WordEncoder()),
    )
    monkeypatch.setattr("app.cli.model_setup.prepare_models", lambda paths, which: None)


@pytest.fixture
def corpus(tmp_path):
    root = tmp_path / "corpus"
    (root / "mining").mkdir(parents=True)
    (root / "notes.txt").write_text("Honey bees collect nectar from flowers.")
    (root / "LICENSE").write_text("Permission is hereby granted, free of charge, to any person.")
    (root / "README").write_text("Babelfind searches your documents by meaning.")
    (root / "de.po").write_text('msgid "Open file"\nmsgstr "Datei öffnen"\n')
    (root / "de.mo").write_bytes(b"\xde\x12\x04\x95" + bytes(range(256)) * 8)
    for i in range(4):
        (root / "mining" / f"part{i}.txt").write_text(f"Parallel sentence number {i}.")
    return root


def test_forget_subfolder_survives_reindex(word_library, corpus, capsys):
    code, out, _ = run(capsys, "index", str(corpus))
    assert code == 0 and out.startswith("indexed 8, unchanged 0, removed 0, skipped 1")
    code, out, _ = run(capsys, "forget", str(corpus / "mining"))
    assert code == 0 and "removed 4 documents" in out
    code, out, _ = run(capsys, "reindex")
    assert code == 0 and out.startswith("indexed 0, unchanged 4, removed 0, skipped 1")
    code, out, _ = run(capsys, "status", "--json")
    assert '"documents": 4' in out and f'"excluded": [\n    "{corpus / "mining"}"' in out
    code, out, _ = run(capsys, "status")
    assert f"  forgotten: {corpus / 'mining'}" in out.splitlines()
    code, out, _ = run(capsys, "index", str(corpus / "mining"))
    assert code == 0 and out.startswith("indexed 4")  # named again: it is back


def test_every_file_not_indexed_gets_a_reason(word_library, corpus, capsys):
    code, out, _ = run(capsys, "index", str(corpus / "de.mo"))
    assert code == 0
    assert out.splitlines() == [
        "indexed 0, unchanged 0, removed 0, skipped 1 (0 passages written)",
        f"  skipped {corpus / 'de.mo'}: not a supported format: .mo",
    ]
    code, out, _ = run(capsys, "status", "--json")
    assert '"roots": []' in out  # the refused file left no empty folder behind


def test_progress_counts_stored_files(word_library, corpus, monkeypatch):
    seen = []
    real_drive = library_commands.drive

    def watching_drive(events, show_progress=True):
        def spy():
            for event in events:
                seen.append(event)
                yield event
        return real_drive(spy(), show_progress)

    monkeypatch.setattr(library_commands, "drive", watching_drive)
    assert main(["index", str(corpus)]) == 0
    progress = [e for e in seen if hasattr(e, "files_done")]
    assert progress[-1].files_done == progress[-1].files_total == 9  # every file, .mo too
    assert {e.unit for e in progress} == {"files"}


def test_mine_reads_moses_named_files(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(mine_command, "get_encoder", lambda model: TranslationEncoder())
    german, english = GERMAN[:6] + GERMAN[:1], ENGLISH[:6] + ENGLISH[:1]  # one repeated line each
    (tmp_path / "corpus.de").write_text("\n".join(german) + "\n")
    (tmp_path / "corpus.en").write_text("\n".join(english) + "\n")
    code, out, err = run(capsys, "mine", str(tmp_path / "corpus.de"), str(tmp_path / "corpus.en"), "--align", "off")
    assert code == 0, err
    assert len(out.splitlines()) == 6
    assert "from 7 and 7 sentences (6 and 6 distinct)" in err


def test_mine_refuses_binary_with_a_reason(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(mine_command, "get_encoder", lambda model: TranslationEncoder())
    (tmp_path / "train.src").write_bytes(bytes(range(256)) * 16)
    (tmp_path / "train.tgt").write_text("\n".join(ENGLISH[:6]))
    code, _, err = run(capsys, "mine", str(tmp_path / "train.src"), str(tmp_path / "train.tgt"))
    assert code == 1 and "not a supported format: .src" in err


def test_db_in_a_missing_folder_is_refused(default_models, tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'missing' / 'dir' / 'x.db'}"
    code, _, err = run(capsys, "--db", url, "status")
    assert code == 1 and f"the folder {tmp_path / 'missing' / 'dir'} does not exist" in err
    assert not (tmp_path / "missing").exists()


def test_models_export_into_a_missing_folder_is_refused(default_models, tmp_path, capsys):
    dest = tmp_path / "missing" / "dir" / "out.zip"
    code, _, err = run(capsys, "models", "export", "all-minilm-l6-v2", str(dest))
    assert code == 2 and f"the folder {dest.parent} does not exist" in err  # refused while parsing
    assert not (tmp_path / "missing").exists()


def test_eval_without_data_says_where_to_get_it(default_models, tmp_path, capsys):
    code, _, err = run(capsys, "eval", "all-minilm-l6-v2", "--tatoeba", "--data", str(tmp_path))
    assert code == 1 and "facebookresearch/LASER" in err and "--data" in err


def test_encoding_stages_say_they_count_distinct_sentences():
    from engine.mining.bitext import stage_label

    assert stage_label("encode source") == "encode source (distinct sentences)"
    assert stage_label("align") == "align"


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"), reason="needs FIFOs and /dev/zero")
def test_status_counts_every_file_the_run_skipped_fifos_and_devices_listed(word_library, corpus, capsys):
    os.mkfifo(corpus / "pipe.txt")
    os.symlink("/dev/zero", corpus / "zero.txt")
    os.symlink(corpus / "gone.txt", corpus / "dangling.txt")
    code, out, _ = run(capsys, "index", str(corpus))
    skipped = {line.split(": ", 1)[0].removeprefix("  skipped "): line.split(": ", 1)[1]
               for line in out.splitlines() if line.startswith("  skipped ")}
    assert skipped == {
        str(corpus / "de.mo"): "not a supported format: .mo",
        str(corpus / "pipe.txt"): "not a regular file: a named pipe (FIFO)",
        str(corpus / "zero.txt"): "not a regular file: a device",
        str(corpus / "dangling.txt"): "a broken link (what it points to does not exist)",
    }
    assert out.startswith("indexed 8, unchanged 0, removed 0, skipped 4")
    code, out, _ = run(capsys, "status")
    assert "8 indexed, 4 skipped" in out and f"  {corpus}: 8 documents" in out and "4 skipped" in out.splitlines()[-1]
    code, out, _ = run(capsys, "reindex")  # passed by on their size and time, still counted
    assert out.startswith("indexed 0, unchanged 8, removed 0, skipped 4")


@pytest.mark.parametrize("query, expected", [
    ("lang:german tar", "unknown language 'lang:german'; did you mean lang:de (German)?"),
    ("lang:de", "'lang:de' has nothing to look for"),
    ("-draft type:pdf", "has nothing to look for"),
])
def test_a_query_that_cannot_search_is_a_wrong_command_line_with_a_suggestion(capsys, query, expected):
    code, out, err = run(capsys, "search", query)
    assert code == 2 and out == "" and expected in err and err.count("\n") == 1


def test_a_reader_that_stops_early_gets_no_error(tmp_path):
    """`babelfind search ... | head -1`: the pipe closes, the command ends quietly (SIGPIPE's 141)."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line
    env = dict(os.environ, BABELFIND_HOME=str(tmp_path / "home"))
    done = subprocess.run([sys.executable, "-c", "import sys; from app.cli import main; sys.exit(main(['status']))"], stdout=write_end, stderr=subprocess.PIPE,
                          env=env, timeout=120)
    os.close(write_end)
    assert done.returncode == 141 and done.stderr == b""
