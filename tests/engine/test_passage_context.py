"""Passages encoded with their title and section heading: which context each passage gets,
how it enters the vector, and that indexing and a model switch store the same vectors."""

from __future__ import annotations

import numpy as np
import pytest
import sqlalchemy as sa
from helpers import WordEncoder, database_at_revision

from engine.config import data_paths
from engine.extract.base import Heading
from engine.indexer import IndexerConfig
from engine.library import Library
from engine.passage_context import MAX_CONTEXT_CHARS, passage_contexts, with_contexts
from engine.store import Store
from engine.store.schema import Passage

HEADINGS = (Heading(0, "Guide"), Heading(40, "4.1. The control file"), Heading(90, "4.2. The copyright file"))


def test_a_passage_gets_the_title_and_the_last_heading_starting_before_its_end():
    spans = [(0, 30), (45, 80), (70, 100), (120, 160)]
    got = passage_contexts("Guide", HEADINGS, spans, ["en"] * 4, "en")
    assert got == [
        "Guide",  # the only heading so far repeats the title
        "Guide / 4.1. The control file",
        "Guide / 4.2. The copyright file",  # the next section starts inside it
        "Guide / 4.2. The copyright file",
    ]


def test_the_title_or_the_heading_alone_and_nothing_without_either():
    spans = [(50, 60)]
    assert passage_contexts(None, HEADINGS, spans, ["en"], "en") == ["4.1. The control file"]
    assert passage_contexts("Guide", (), spans, ["en"], "en") == ["Guide"]
    assert passage_contexts(None, (), spans, ["en"], "en") == [None]
    assert passage_contexts("  guide ", (Heading(0, "GUIDE"),), spans, ["en"], "en") == ["  guide "]
    assert len(passage_contexts("T" * 1000, (), spans, ["en"], "en")[0]) == MAX_CONTEXT_CHARS


def test_a_title_that_only_names_the_file_is_no_context():
    spans = [(50, 60)]
    for title in ("pic-1.html", "PIC-1", "pic-1"):
        assert passage_contexts(title, HEADINGS, spans, ["en"], "en", file_name="pic-1.html") == [
            "4.1. The control file"]
    assert passage_contexts("pic-1.html", (), spans, ["en"], "en", file_name="pic-1.html") == [None]
    assert passage_contexts("Pictures", (), spans, ["en"], "en", file_name="pic-1.html") == ["Pictures"]


def test_a_passage_in_another_language_than_its_document_gets_no_context():
    spans = [(45, 60), (61, 80), (95, 99)]
    got = passage_contexts("Глава 4", HEADINGS, spans, ["ru", "en", None], "ru")
    assert got == ["Глава 4 / 4.1. The control file", None, None]


def test_with_contexts_adds_the_context_vector_once_per_distinct_context():
    encoder = WordEncoder(dim=64)
    texts = ["bees make honey", "trains cross the steppe", "honey in winter"]
    own = encoder.encode(texts)
    contexts = ["Bees / Harvest", None, "Bees / Harvest"]
    calls = encoder.calls
    got = with_contexts(own, contexts, encoder.encode, weight=0.35)
    assert encoder.calls == calls + 1 and encoder.texts_encoded == 4  # the one distinct context
    context = encoder.encode(["Bees / Harvest"])[0]
    for row in (0, 2):
        expected = own[row] + 0.35 * context
        np.testing.assert_allclose(got[row], expected / np.linalg.norm(expected), atol=1e-6)
    np.testing.assert_array_equal(got[1], own[1])
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(with_contexts(own, contexts, encoder.encode, weight=0.0), own)
    np.testing.assert_array_equal(with_contexts(own, [None] * 3, encoder.encode), own)


HTML = """<html><head><title>Packaging guide</title></head><body>
<h1>Required files</h1><p>Every package has a few files that describe it to the tools.</p>
<h2>The copyright file</h2><p>It names the authors and the licence of the software.</p>
</body></html>"""


@pytest.fixture
def library(babelfind_home):
    lib = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    yield lib
    lib.close()


def _stored(library: Library) -> dict[str, tuple[str | None, np.ndarray]]:
    """passage text -> (context, stored vector) of the active generation."""
    generation = library.live.generation
    ids, vectors = next(library.store.iter_vectors(generation.id, generation.dim))
    with library.store.session() as s:
        rows = dict(s.execute(sa.select(Passage.id, Passage.text)).all())
        contexts = dict(s.execute(sa.select(Passage.id, Passage.context)).all())
    return {rows[int(i)]: (contexts[int(i)], v) for i, v in zip(ids, vectors)}


def test_indexing_stores_each_passage_with_its_context_and_the_vector_moved_toward_it(library, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "guide.html").write_text(HTML, encoding="utf-8")
    (folder / "plain.txt").write_text("Bees make honey in the summer months.", encoding="utf-8")
    list(library.index_paths([folder]))
    stored = _stored(library)
    copyright_passage = next(t for t in stored if "authors" in t)
    context, vector = stored[copyright_passage]
    assert context == "Packaging guide / The copyright file"
    encoder = WordEncoder()
    expected = with_contexts(encoder.encode([copyright_passage]), [context], encoder.encode)[0]
    np.testing.assert_allclose(vector, expected, atol=2e-3)  # stored as float16
    plain = next(t for t in stored if "Bees" in t)
    assert stored[plain][0] is None
    np.testing.assert_allclose(stored[plain][1], encoder.encode([plain])[0], atol=2e-3)


def test_a_page_titled_with_its_own_file_name_is_indexed_with_its_heading_only(library, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "pic-1.html").write_text(HTML.replace("Packaging guide", "pic-1.html"), encoding="utf-8")
    list(library.index_paths([folder]))
    contexts = {context for context, _vector in _stored(library).values()}
    assert contexts == {"The copyright file"}  # "Packaging guide / The copyright file" when titled


def test_without_a_context_weight_passages_are_encoded_alone(babelfind_home, tmp_path):
    (tmp_path / "guide.html").write_text(HTML, encoding="utf-8")
    library = Library.open(data_paths(babelfind_home), encoder=WordEncoder(), config=IndexerConfig(context_weight=0.0))
    try:
        list(library.index_paths([tmp_path / "guide.html"]))
        for text, (context, vector) in _stored(library).items():
            assert context is not None  # kept, so that a later re-encode can use it
            np.testing.assert_allclose(vector, WordEncoder().encode([text])[0], atol=2e-3)
    finally:
        library.close()


def test_a_model_switch_encodes_the_passages_with_their_contexts_as_indexing_did(library, monkeypatch, tmp_path):
    import engine.library as library_module

    monkeypatch.setattr(library_module, "_set_registry_active", lambda name, paths: None)
    (tmp_path / "guide.html").write_text(HTML, encoding="utf-8")
    list(library.index_paths([tmp_path / "guide.html"]))
    before = _stored(library)
    list(library.switch_model("words-again", encoder=WordEncoder(name="words-again")))
    after = _stored(library)
    assert library.live.generation.model_name == "words-again"
    assert before.keys() == after.keys()
    for text in before:
        np.testing.assert_allclose(after[text][1], before[text][1], atol=2e-3)


def test_passages_stored_before_contexts_existed_have_none_after_the_migration(tmp_path):
    url = f"sqlite:///{tmp_path / 'old.db'}"
    with database_at_revision(url, "0004") as connection:
        connection.execute(sa.text("INSERT INTO roots (id, path, watch, added_at) VALUES (1, '/r', 0, '2026-01-01')"))
        connection.execute(sa.text(
            "INSERT INTO documents (id, root_id, path, size, mtime, file_type, status, indexed_at) "
            "VALUES (1, 1, '/r/a.html', 1, 0, 'html', 'indexed', '2026-01-01')"))
        connection.execute(sa.text(
            "INSERT INTO passages (id, document_id, ordinal, text, start, \"end\") VALUES (1, 1, 0, 'Old words', 0, 9)"))
    store = Store.open(url)
    try:
        generation = store.create_generation("test-words", 256, "building")
        assert store.passages_without_vectors(generation.id, 10) == [(1, "Old words", None)]
    finally:
        store.close()

