"""Hostile files never stop an indexing run: every one is skipped with a reason, the
good files around it are indexed, and nothing blocks (FIFOs) or reads forever (/dev/zero)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from helpers import WordEncoder
from hostile_docs import (
    epub_members,
    shared_page_pdf,
    surrogate_text_pdf,
    wide_page_tree_pdf,
    write_zip_with_raw_member,
    zip_bytes,
)

import engine.indexer as indexer
from engine.config import data_paths
from engine.errors import NotRegularFileError
from engine.library import Library
from engine.mining.bitext import read_sentences

GOOD = {
    "a-good.txt": "Glaciers in the Alps are retreating. Meltwater feeds the rivers in summer.",
    "m-good.md": "# Bread\n\nSourdough bread rises slowly overnight in a cool kitchen.",
    "z-good.txt": "Honey bees dance to tell the hive where the flowers are.",
}
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
needs_dev_zero = pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")


@pytest.fixture
def library(babelfind_home):
    lib = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    yield lib
    lib.close()


def write_good(folder: Path) -> None:
    folder.mkdir(exist_ok=True)
    for name, text in GOOD.items():
        (folder / name).write_text(text, encoding="utf-8")


def reasons(summary) -> dict[str, str]:
    return {Path(s.path).name: s.reason for s in summary.skipped}


def test_hostile_documents_are_skipped_and_the_rest_indexed(library, tmp_path, monkeypatch, caplog):
    corpus = tmp_path / "hostile"
    write_good(corpus)
    (corpus / "b-no-manifest.epub").write_bytes(zip_bytes(epub_members(with_manifest=False)))
    wide_page_tree_pdf(corpus / "c-wide.pdf")
    shared_page_pdf(corpus / "d-shared.pdf")
    write_zip_with_raw_member(corpus / "e-bomb.docx", [("[Content_Types].xml", "<Types/>")], "word/document.xml",
                              1 << 30)
    (corpus / "f-explodes.txt").write_text("A parser bug we have not met yet.", encoding="utf-8")
    real_outcome = indexer.document_outcome  # extraction runs in a child: fail after it, here

    def document_outcome(place, document, *args):
        if place.file.name == "f-explodes.txt":
            raise RuntimeError("an unexpected library failure")
        return real_outcome(place, document, *args)

    monkeypatch.setattr(indexer, "document_outcome", document_outcome)
    with caplog.at_level(logging.ERROR, logger="engine.indexer"):
        summary = list(library.index_paths([corpus]))[-1].summary
    got = reasons(summary)
    assert summary.indexed == len(GOOD), got
    assert "damaged or unreadable EPUB" in got["b-no-manifest.epub"]
    assert "too large to read safely" in got["c-wide.pdf"]
    assert "99,000 pages" in got["d-shared.pdf"]
    assert "zip bomb" in got["e-bomb.docx"]
    assert got["f-explodes.txt"] == "could not be read (RuntimeError: an unexpected library failure)"
    logged = [r for r in caplog.records if "f-explodes.txt" in r.getMessage()]
    assert logged and logged[0].exc_info is not None  # the traceback goes to the log
    assert len(library.search("honey bees dance hive flowers")) >= 1
    again = list(library.index_paths([corpus]))[-1].summary
    # the next run re-reads none of them: the good ones are unchanged, the bad ones are
    # reported again from their stored reasons
    assert (again.indexed, again.unchanged, len(again.skipped)) == (0, len(GOOD), 5)


def test_text_the_database_cannot_store_is_cleaned_not_fatal(library, tmp_path):
    corpus = tmp_path / "surrogates"
    write_good(corpus)
    surrogate_text_pdf(corpus / "b-surrogate.pdf")
    summary = list(library.index_paths([corpus]))[-1].summary
    assert (summary.indexed, summary.skipped) == (len(GOOD) + 1, ())
    assert library.document_text(corpus / "b-surrogate.pdf").text == "Honey bees BB dance"


def test_a_document_the_store_refuses_does_not_cost_the_batch(library, tmp_path, monkeypatch):
    from sqlalchemy.exc import IntegrityError

    corpus = tmp_path / "unstorable"
    write_good(corpus)
    (corpus / "b-unstorable.txt").write_text("The store will refuse this one.", encoding="utf-8")
    real_write = library.store.write_documents

    def write_documents(root_id, generation_id, writes):
        if any(w.path.endswith("b-unstorable.txt") for w in writes):
            raise IntegrityError("INSERT INTO documents ...", {}, Exception("UNIQUE constraint failed"))
        return real_write(root_id, generation_id, writes)

    monkeypatch.setattr(library.store, "write_documents", write_documents)
    summary = list(library.index_paths([corpus]))[-1].summary
    assert summary.indexed == len(GOOD)
    assert reasons(summary)["b-unstorable.txt"].startswith("could not be stored (IntegrityError")
    assert "b-unstorable.txt" in {Path(s.path).name for s in library.skipped(corpus)}
    assert len(library.search("glaciers meltwater rivers")) >= 1


def swap(path: Path, kind: str) -> None:
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    else:
        os.symlink("/dev/zero", path)


@needs_fifo
@needs_dev_zero
@pytest.mark.timeout(60)
def test_files_swapped_for_a_fifo_or_dev_zero_after_the_scan(library, tmp_path):
    corpus = tmp_path / "swapped"
    write_good(corpus)
    (corpus / "b-fifo.txt").write_text("soon a FIFO", encoding="utf-8")
    (corpus / "c-zero.txt").write_text("soon a link to /dev/zero", encoding="utf-8")
    events = library.index_paths([corpus])
    next(events)  # scanned and planned; nothing read yet
    swap(corpus / "b-fifo.txt", "fifo")
    swap(corpus / "c-zero.txt", "zero")
    summary = list(events)[-1].summary
    assert reasons(summary) == {"b-fifo.txt": "not a regular file: a named pipe (FIFO)",
                                "c-zero.txt": "not a regular file: a device"}
    assert summary.indexed == len(GOOD)


@needs_fifo
@needs_dev_zero
@pytest.mark.timeout(60)
def test_indexed_files_swapped_before_they_are_hashed_again(library, tmp_path):
    corpus = tmp_path / "rehash"
    write_good(corpus)
    assert list(library.index_paths([corpus]))[-1].summary.indexed == len(GOOD)
    events = library.index_paths([corpus])
    next(events)  # scanned: all three are known documents, due to be compared and hashed
    swap(corpus / "a-good.txt", "fifo")
    swap(corpus / "z-good.txt", "zero")
    summary = list(events)[-1].summary
    assert reasons(summary) == {"a-good.txt": "not a regular file: a named pipe (FIFO)",
                                "z-good.txt": "not a regular file: a device"}
    assert summary.unchanged == 1


@needs_fifo
@needs_dev_zero
@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["fifo", "zero"])
@pytest.mark.parametrize("name", ["pairs.txt", "book.epub"])
def test_mining_reads_no_fifo_and_no_dev_zero(tmp_path, kind, name):
    path = tmp_path / name
    path.write_text("a regular file until swap() replaces it", encoding="utf-8")
    swap(path, kind)
    with pytest.raises(NotRegularFileError, match="not a regular file"):
        read_sentences(path)


@pytest.mark.timeout(120)
def test_a_document_stuck_in_its_parser_is_skipped_at_the_deadline(babelfind_home, tmp_path):
    from hostile_docs import SLOW_NESTING, nested_html, slow_nesting_deadline

    from engine.config import ExtractLimits
    from engine.indexer import IndexerConfig

    corpus = tmp_path / "nested"
    write_good(corpus)
    (corpus / "b-deep.html").write_bytes(nested_html(200_000))  # refused before parsing
    (corpus / "c-slow.html").write_bytes(nested_html(SLOW_NESTING))  # parsed, in C, past the deadline
    deadline = slow_nesting_deadline()
    config = IndexerConfig(limits=ExtractLimits(max_seconds=deadline))
    library = Library.open(data_paths(babelfind_home), encoder=WordEncoder(), config=config)
    try:
        summary = list(library.index_paths([corpus]))[-1].summary
        assert reasons(summary) == {
            "b-deep.html": "too complex to read safely: elements nested over 1,000 levels deep",
            "c-slow.html": f"reading took longer than the {deadline:g} s limit per document",
        }
        assert summary.indexed == len(GOOD)
        assert len(library.search("honey bees dance hive flowers")) >= 1
    finally:
        library.close()


def test_names_that_collide_stay_apart(library, tmp_path):
    from hostile_docs import colliding_names

    from engine.scan import path_key

    files = colliding_names(tmp_path / "collide")
    summary = list(library.index_paths([tmp_path / "collide"]))[-1].summary
    assert (summary.indexed, summary.skipped) == (len(files), ())
    assert len({path_key(f) for f in files}) == len(files)
    for file in files:  # each found by its own word, as itself
        word = file.read_text(encoding="utf-8").rsplit(" ", 1)[-1].rstrip(".")
        hits = library.search(word, k=1, mode="keyword")
        assert hits and hits[0].path == path_key(file), (file, word, hits)
