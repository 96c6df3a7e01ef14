"""What a new user hit on a real folder: forgotten subfolders that came back, files
ignored without a word, progress figures that ran ahead of the work."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import WordEncoder

from engine.config import data_paths
from engine.events import IndexFinished, IndexProgress
from engine.library import Library

DOCS = {
    "bees.txt": "Honey bees collect nectar from flowers. The hive stores honey for the winter.",
    "trains/railway.txt": "The railway crosses the steppe. Long trains carry freight and passengers.",
    "trains/deutsch.md": "Der Zug fährt durch die Berge. Die Bahnstrecke ist sehr alt und steil.",
}


def write_corpus(root: Path, docs: dict[str, str] = DOCS) -> Path:
    for name, text in docs.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def finish(events) -> IndexFinished:
    *_, last = list(events)
    assert isinstance(last, IndexFinished)
    return last

MO_BYTES = b"\xde\x12\x04\x95" + bytes(range(256)) * 8  # a compiled gettext catalogue


@pytest.fixture
def library(babelfind_home):
    lib = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    yield lib
    lib.close()


def test_forgotten_subfolder_stays_out_of_reindex(library, tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    finish(library.index_paths([corpus]))
    assert library.forget(corpus / "trains") == 2
    summary = finish(library.reindex()).summary
    assert summary.indexed == 0 and library.status().documents == 1
    assert library.excluded() == [str(corpus / "trains")]
    (corpus / "trains" / "new.txt").write_text("A new railway timetable for the winter.")
    finish(library.reindex(corpus))
    assert library.status().documents == 1  # new files in a forgotten folder stay out too


def test_indexing_a_forgotten_path_again_brings_it_back(library, tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    finish(library.index_paths([corpus]))
    library.forget(corpus / "trains" / "railway.txt")
    finish(library.reindex())
    assert library.status().documents == 2
    finish(library.index_paths([corpus / "trains"]))
    assert library.status().documents == 3 and library.excluded() == []


def test_forgetting_a_root_leaves_no_exclusions(library, tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    finish(library.index_paths([corpus]))
    library.forget(corpus / "trains")
    library.forget(corpus)
    assert library.roots() == [] and library.excluded() == []


def test_extensionless_and_po_files_are_indexed_binary_ones_reported(library, tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    (corpus / "LICENSE").write_text("Permission is hereby granted, free of charge, to any person.")
    (corpus / "corpus.de").write_text("Die Katze schläft.\nDer Hund bellt.\n")
    (corpus / "de.po").write_text('msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\n'
                                  'msgid "Open file"\nmsgstr "Datei öffnen"\n')
    (corpus / "de.mo").write_bytes(MO_BYTES)
    (corpus / "empty").write_bytes(b"")
    summary = finish(library.index_paths([corpus])).summary
    assert summary.indexed == 6
    assert sorted((Path(s.path).name, s.reason) for s in summary.skipped) == [
        ("de.mo", "not a supported format: .mo"),
        ("empty", "file is empty"),
    ]
    assert Path(library.search("permission granted charge")[0].path).name == "LICENSE"
    po_hit = library.search("Datei öffnen")[0]
    assert Path(po_hit.path).name == "de.po" and "Content-Type" not in po_hit.best.text


def test_a_lone_unreadable_file_is_reported_and_leaves_no_root(library, tmp_path):
    mo = tmp_path / "de.mo"
    mo.write_bytes(MO_BYTES)
    summary = finish(library.index_paths([mo])).summary
    assert summary.indexed == 0
    assert [(s.path, s.reason) for s in summary.skipped] == [(str(mo), "not a supported format: .mo")]
    assert library.roots() == []


def test_reindex_counts_a_skipped_file_once(library, tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    (corpus / "broken.pdf").write_bytes(b"not a pdf at all")
    finish(library.index_paths([corpus]))
    summary = finish(library.reindex()).summary
    assert (summary.unchanged, len(summary.skipped)) == (3, 1)


def test_files_count_as_done_once_stored(library, tmp_path):
    docs = {f"doc{i:02d}.txt": f"Document number {i} talks about topic{i}." for i in range(12)}
    corpus = write_corpus(tmp_path / "corpus", docs)
    library.config = type(library.config)(batch_passages=5)
    stored_when_reported = []
    events = library.index_paths([corpus])
    for event in events:
        if isinstance(event, IndexProgress):
            stored_when_reported.append((event.files_done, library.status().documents))
    assert all(done == stored for done, stored in stored_when_reported)
    assert stored_when_reported[-1] == (12, 12)


def test_model_switch_progress_counts_passages(library, monkeypatch, tmp_path):
    import engine.library as library_module

    monkeypatch.setattr(library_module, "_set_registry_active", lambda name, paths: None)
    monkeypatch.setattr(library_module, "REENCODE_BATCH", 2)
    finish(library.index_paths([write_corpus(tmp_path / "corpus")]))
    passages = library.status().passages
    progress = [e for e in library.switch_model("other", encoder=WordEncoder(name="other"))
                if isinstance(e, IndexProgress)]
    assert {e.unit for e in progress} == {"passages"}
    assert progress[-1].files_done == progress[-1].files_total == passages
    assert progress[-1].eta_s == 0
