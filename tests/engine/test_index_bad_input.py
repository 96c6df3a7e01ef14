"""A corpus of broken files: each is recorded with a readable reason, the run completes,
and nothing else is lost."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from extract_docs import encrypt_pdf, make_pdf
from helpers import WordEncoder

from engine.config import data_paths
from engine.errors import ExtractionError
from engine.events import IndexFinished, IndexProgress
from engine.library import Library

GOOD = "Glaciers in the Alps are retreating. Meltwater feeds the rivers in summer."


@pytest.fixture
def library(babelfind_home):
    lib = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    yield lib
    lib.close()


def make_bad_corpus(root: Path) -> dict[str, str]:
    """Writes the corpus; returns {file name: words its skip reason must contain}."""
    root.mkdir()
    (root / "good.txt").write_text(GOOD, encoding="utf-8")
    (root / "empty.txt").write_bytes(b"")
    (root / "junk.txt").write_bytes(bytes(range(256)) * 64)
    pdf = make_pdf(root / "whole.pdf", ["Page one about bread.", "Page two about ovens."])
    (root / "truncated.pdf").write_bytes(pdf.read_bytes()[: pdf.stat().st_size // 2])
    encrypt_pdf(pdf, root / "encrypted.pdf", user_password="secret", owner_password="owner")
    pdf.unlink()
    (root / "notzip.docx").write_bytes(b"this is not a zip archive at all")
    with open(root / "huge.txt", "wb") as f:  # 50 MB: over the indexer's size limit
        line = b"A line of plain text that repeats to make a very large file.\n"
        f.write(line * (50 * 2**20 // len(line) + 1))
    os.symlink(root, root / "loop")  # a folder link back to its parent
    weird = os.fsencode(root) + b"/caf\xe9-latin1-name.txt"
    with open(weird, "wb") as f:
        f.write("Tea is grown on terraced hillsides.".encode())
    (root / "zz_vanishes.txt").write_text("This file is deleted after the scan.", encoding="utf-8")
    return {
        "empty.txt": "empty",
        "junk.txt": "binary",
        "truncated.pdf": "truncated",
        "encrypted.pdf": "encrypted",
        "notzip.docx": "not a zip",
        "huge.txt": "too large",
        "zz_vanishes.txt": "disappeared",
    }


def test_bad_files_are_skipped_with_reasons(library, tmp_path):
    corpus = tmp_path / "bad"
    expected = make_bad_corpus(corpus)
    events = library.index_paths([corpus])
    first = next(events)
    assert isinstance(first, IndexProgress)
    (corpus / "zz_vanishes.txt").unlink()  # deleted between scan and read
    *_, last = list(events)
    assert isinstance(last, IndexFinished)
    summary = last.summary
    reasons = {Path(s.path).name: s.reason for s in summary.skipped}
    for name, words in expected.items():
        assert words in reasons[name].lower(), (name, reasons.get(name))
    assert summary.indexed == 2  # good.txt and the Latin-1 named file
    assert Path(library.search("glaciers meltwater")[0].path).name == "good.txt"
    assert "latin1-name" in library.search("tea terraced hillsides")[0].path
    # Skipped files are remembered with their reasons, and not retried while unchanged.
    remembered = {Path(s.path).name for s in library.skipped(corpus)}
    assert set(expected) - {"zz_vanishes.txt"} <= remembered
    again = list(library.index_paths([corpus]))[-1].summary
    assert again.indexed == 0 and again.removed == 1  # the vanished file's record goes


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_is_skipped(library, tmp_path):
    corpus = tmp_path / "locked"
    corpus.mkdir()
    (corpus / "good.txt").write_text(GOOD, encoding="utf-8")
    locked = corpus / "locked.txt"
    locked.write_text("secret", encoding="utf-8")
    locked.chmod(0)
    summary = list(library.index_paths([corpus]))[-1].summary
    assert [(Path(s.path).name, s.reason) for s in summary.skipped] == [("locked.txt", "permission denied")]
    assert summary.indexed == 1


def test_unreadable_folder_does_not_stop_the_run(library, tmp_path, monkeypatch):
    corpus = tmp_path / "partly"
    (corpus / "open").mkdir(parents=True)
    (corpus / "open" / "good.txt").write_text(GOOD, encoding="utf-8")
    (corpus / "closed").mkdir()
    real_scandir = os.scandir

    def scandir(path):  # works for root too, unlike chmod
        if Path(path).name == "closed":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    summary = list(library.index_paths([corpus]))[-1].summary
    assert summary.indexed == 1
    # ...and the folder is listed with why, as a skipped file is (issue 24: it was not)
    assert [(Path(s.path).name, s.reason) for s in summary.skipped] == [("closed", "folder not read: permission denied")]


def test_file_refused_by_the_os_is_skipped_even_as_root(library, tmp_path, monkeypatch):
    """The same as chmod 000, for a test run as root: opening the file fails."""
    import engine.indexer as indexer

    corpus = tmp_path / "refused"
    corpus.mkdir()
    (corpus / "good.txt").write_text(GOOD, encoding="utf-8")
    (corpus / "refused.txt").write_text("secret", encoding="utf-8")
    real_read = indexer._read_document

    def read_document(path, max_bytes):
        if path.name == "refused.txt":
            raise ExtractionError(path, "permission denied") from PermissionError(13, "Permission denied")
        return real_read(path, max_bytes)

    monkeypatch.setattr(indexer, "_read_document", read_document)
    summary = list(library.index_paths([corpus]))[-1].summary
    assert [(Path(s.path).name, s.reason) for s in summary.skipped] == [("refused.txt", "permission denied")]
    assert summary.indexed == 1
