"""The library end to end with a model-free encoder: incremental indexing, removal,
filters, cancel, model switch, and the FAISS index agreeing with the database."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from helpers import WordEncoder

from engine.config import data_paths
from engine.errors import ModelMismatchError, NotIndexedError
from engine.events import IndexFinished, IndexProgress
from engine.library import Library
from engine.index.live_index import LiveIndex

DOCS = {
    "bees.txt": "Honey bees collect nectar from flowers. The hive stores honey for the winter. "
    "Beekeepers harvest honey in late summer.",
    "trains/railway.txt": "The railway crosses the steppe. Long trains carry freight and passengers "
    "across the continent. The journey takes seven days.",
    "trains/deutsch.md": "Der Zug fährt durch die Berge. Die Bahnstrecke ist sehr alt und steil. "
    "Viele Reisende fahren im Sommer.",
}


def write_corpus(root: Path, docs: dict[str, str] = DOCS) -> Path:
    for name, text in docs.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def finish(events) -> IndexFinished:
    *progress, last = list(events)
    assert all(isinstance(e, IndexProgress) for e in progress)
    assert isinstance(last, IndexFinished)
    return last


def assert_consistent(library: Library) -> None:
    """Every passage has exactly one vector in FAISS and nothing else is there."""
    with library.store.session() as s:
        from sqlalchemy import select

        from engine.store.schema import Passage

        passage_ids = set(s.scalars(select(Passage.id)))
    assert set(library.live.index.ids().tolist()) == passage_ids


@pytest.fixture
def encoder():
    return WordEncoder()


@pytest.fixture
def library(babelfind_home, encoder):
    lib = Library.open(data_paths(babelfind_home), encoder=encoder)
    yield lib
    lib.close()


def test_index_then_search_finds_the_right_document(library, tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    summary = finish(library.index_paths([corpus])).summary
    assert summary.indexed == 3 and not summary.skipped
    hits = library.search("honey bees nectar", k=3)
    assert Path(hits[0].path).name == "bees.txt"
    best = hits[0].best
    text = library.document_text(Path(hits[0].path)).text
    assert text[best.start : best.end] == best.text
    assert_consistent(library)


def test_unchanged_tree_encodes_nothing(library, encoder, tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    finish(library.index_paths([corpus]))
    encoder.calls = encoder.texts_encoded = 0
    summary = finish(library.index_paths([corpus])).summary
    assert encoder.texts_encoded == 0
    assert summary.unchanged == 3 and summary.indexed == 0


def test_touch_reencodes_only_that_file(library, encoder, tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    finish(library.index_paths([corpus]))
    bees = corpus / "bees.txt"
    os.utime(bees, (1, 1))  # same content, new mtime: hashed, not re-encoded
    encoder.texts_encoded = 0
    assert finish(library.index_paths([corpus])).summary.unchanged == 3
    assert encoder.texts_encoded == 0
    bees.write_text("Wasps build paper nests. They hunt other insects.", encoding="utf-8")
    summary = finish(library.index_paths([corpus])).summary
    assert summary.indexed == 1 and summary.unchanged == 2
    assert encoder.texts_encoded == summary.passages >= 1
    assert Path(library.search("paper nests wasps")[0].path).name == "bees.txt"
    assert_consistent(library)


def test_deleted_file_leaves_the_index(library, tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    finish(library.index_paths([corpus]))
    before = library.status().passages
    (corpus / "bees.txt").unlink()
    summary = finish(library.index_paths([corpus])).summary
    assert summary.removed == 1
    assert library.status().passages < before
    assert all(Path(h.path).name != "bees.txt" for h in library.search("honey bees", k=5))
    assert_consistent(library)


def test_filters(library, tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    finish(library.index_paths([corpus]))
    only_de = library.search("Zug Berge railway trains", k=5, languages=["de"])
    assert [Path(h.path).name for h in only_de] == ["deutsch.md"]
    under = library.search("honey trains Zug", k=5, path_prefix=str(corpus / "trains"))
    assert {Path(h.path).name for h in under} == {"railway.txt", "deutsch.md"}
    md = library.search("honey trains Zug", k=5, file_types=["md"])
    assert [h.file_type for h in md] == ["md"]


def test_forget_removes_documents_and_vectors(library, tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    finish(library.index_paths([corpus]))
    assert library.forget(corpus / "trains") == 2
    assert {Path(h.path).name for h in library.search("trains Zug honey", k=5)} == {"bees.txt"}
    assert_consistent(library)
    with pytest.raises(NotIndexedError):
        library.forget(tmp_path / "never-indexed")


def test_forgetting_several_paths_in_one_job_passes_over_unknown_ones_when_asked(library, tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    finish(library.index_paths([corpus]))
    never = tmp_path / "never-indexed.txt"
    with pytest.raises(NotIndexedError):
        list(library.forgetting([never]))
    assert not library.lock.held_here  # the error released the lock
    summary = finish(library.forgetting([corpus / "bees.txt", never, corpus / "trains"], missing_ok=True)).summary
    assert summary.removed == 3 and library.status().documents == 0
    assert_consistent(library)


def test_cancel_leaves_a_consistent_index_and_resumes(library, tmp_path):
    docs = {f"doc{i:02d}.txt": f"Document number {i} talks about topic{i}." for i in range(30)}
    corpus = write_corpus(tmp_path / "corpus", docs)
    library.config = type(library.config)(batch_passages=4)
    events = library.index_paths([corpus])
    for event in events:
        if isinstance(event, IndexProgress) and event.files_done >= 10:
            break
    events.close()
    assert 0 < library.status().documents < 30
    assert_consistent(library)
    summary = finish(library.index_paths([corpus])).summary
    assert library.status().documents == 30
    assert summary.indexed + summary.unchanged == 30
    assert_consistent(library)


def test_reopen_rebuilds_a_stale_vector_file(babelfind_home, encoder, tmp_path):
    paths = data_paths(babelfind_home)
    corpus = write_corpus(tmp_path / "corpus")
    library = Library.open(paths, encoder=encoder)
    finish(library.index_paths([corpus]))
    generation = library.live.generation
    library.close()
    # Damage the saved file: the library must rebuild it from stored vectors.
    LiveIndex.file_for(paths.indexes, generation.id).write_bytes(b"garbage")
    encoder.texts_encoded = 0
    reopened = Library.open(paths, encoder=encoder)
    assert encoder.texts_encoded == 0  # rebuilt without re-encoding
    assert Path(reopened.search("honey bees")[0].path).name == "bees.txt"
    assert_consistent(reopened)
    reopened.close()


def test_query_with_another_model_is_refused(library, tmp_path):
    finish(library.index_paths([write_corpus(tmp_path / "corpus")]))
    with pytest.raises(ModelMismatchError, match="reindex"):
        library.search("honey", encoder=WordEncoder(name="other-model"))


def test_switch_model_keeps_answering_until_done(library, monkeypatch, tmp_path):
    import engine.library as library_module

    monkeypatch.setattr(library_module, "_set_registry_active", lambda name, paths: None)
    finish(library.index_paths([write_corpus(tmp_path / "corpus")]))
    new = WordEncoder(name="bigger", dim=128)
    library_module.REENCODE_BATCH = 2
    events = library.switch_model("bigger", encoder=new)
    first = next(events)
    assert isinstance(first, IndexProgress)
    # Mid-switch, the old generation still answers.
    assert Path(library.search("honey bees")[0].path).name == "bees.txt"
    finish(events)
    assert library.encoder is new and library.live.generation.model_name == "bigger"
    assert library.live.index.dim == 128
    assert Path(library.search("honey bees")[0].path).name == "bees.txt"
    assert_consistent(library)


def test_vectors_in_faiss_are_the_stored_ones_made_language_neutral(library, tmp_path):
    finish(library.index_paths([write_corpus(tmp_path / "corpus")]))
    generation = library.live.generation
    ids, stored = next(library.store.iter_vectors(generation.id, generation.dim))
    language = library.store.passages([int(ids[0])])[int(ids[0])].language
    found, vectors = library.live.vectors(ids[:1])  # stored as float16, read as unit rows
    # what search compares: the stored vector, language-neutral
    np.testing.assert_allclose(vectors, library.live.passage_vectors(stored[:1], [language]), atol=1e-3)
    scores, found = library.live.search(vectors, 1)
    assert found[0, 0] == ids[0] and np.isclose(scores[0, 0], 1.0, atol=1e-5)


def test_warm_up_loads_the_language_model_and_the_baseline_sample_the_first_search_uses(
        library, encoder, tmp_path, monkeypatch):
    from engine import langid
    from engine.index import fusion

    library.warm_up(encoder)  # an empty library: nothing to sample, nothing fails
    finish(library.index_paths([write_corpus(tmp_path / "docs")]))
    monkeypatch.setattr(langid, "_identifier", None)
    library.warm_up(encoder)
    assert langid._identifier is not None
    monkeypatch.setattr(langid, "_load_identifier", lambda: pytest.fail("the search loaded the language model"))
    sampled = fusion._samples.get(library.live)
    assert sampled is not None and len(sampled[2]) == len(library.live)
    assert Path(library.search("honey bees nectar")[0].path).name == "bees.txt"
    assert fusion._samples.get(library.live) is sampled  # the warm-up's sample, not read again


def test_warm_up_reads_the_catalog_the_first_search_uses(library, encoder, tmp_path, monkeypatch):
    from engine.store import catalog

    finish(library.index_paths([write_corpus(tmp_path / "docs")]))
    library.warm_up(encoder)
    built = []
    monkeypatch.setattr(catalog, "_build", lambda *args: built.append(args))
    assert Path(library.search("honey bees nectar")[0].path).name == "bees.txt"
    assert built == []  # the search found the warm-up's catalog up to date
