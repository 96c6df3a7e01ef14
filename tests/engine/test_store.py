"""The SQL store on SQLite and, when BABELFIND_TEST_PG_URL is set, on PostgreSQL."""

from __future__ import annotations


import numpy as np
import pytest
from helpers import postgres_database
from sqlalchemy import inspect

from engine.errors import StoreError
from engine.store import DocumentWrite, FailureWrite, NewPassage, Store
from engine.store.migrate import HEAD_REVISION, revisions_of

@pytest.fixture
def postgres_url():
    with postgres_database() as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    return request.getfixturevalue("postgres_url")


def write(path: str, texts: list[str], dim: int = 4) -> DocumentWrite:
    passages = tuple(NewPassage(t, i * 10, i * 10 + len(t), None, "en") for i, t in enumerate(texts))
    vectors = np.arange(len(texts) * dim, dtype=np.float32).reshape(len(texts), dim)
    return DocumentWrite(path, 10, 1.0, f"hash-{path}", "txt", "txt", "en", passages, vectors)


def test_write_replace_and_remove_documents(db_url):
    store = Store.open(db_url)
    generation = store.create_generation("model", 4, "active")
    root = store.ensure_root("/docs")
    removed, ids = store.write_documents(root, generation.id, [write("/docs/a.txt", ["one", "two"])])
    assert removed == [] and len(ids[0]) == 2
    removed, new_ids = store.write_documents(root, generation.id, [write("/docs/a.txt", ["three"])])
    assert sorted(removed) == sorted(ids[0])
    assert not set(new_ids[0]) & set(ids[0])  # passage ids are never reused
    assert store.counts()[:3] == (1, 1, 0)
    (got_ids, vectors), = store.iter_vectors(generation.id, 4)
    assert got_ids.tolist() == new_ids[0]
    np.testing.assert_array_equal(vectors, write("/x", ["three"]).vectors)
    assert store.remove_documents(["/docs/a.txt"]) == new_ids[0]
    assert store.counts()[:3] == (0, 0, 0)
    assert list(store.iter_vectors(generation.id, 4)) == []
    store.close()


def test_versions_grow_with_every_change(db_url):
    store = Store.open(db_url)
    generation = store.create_generation("model", 4, "active")
    root = store.ensure_root("/docs")
    store.write_documents(root, generation.id, [write("/docs/a.txt", ["one"])])
    store.remove_documents(["/docs/a.txt"])
    assert store.generation_by_id(generation.id).version == 2
    store.close()


def test_failures_are_recorded_with_reasons(db_url):
    store = Store.open(db_url)
    generation = store.create_generation("model", 4, "active")
    root = store.ensure_root("/docs")
    store.write_documents(root, generation.id, [write("/docs/a.pdf", ["one"])])
    removed = store.write_failures(root, [FailureWrite("/docs/a.pdf", 5, 2.0, None, "pdf", "encrypted PDF")])
    assert len(removed) == 1
    assert store.failed_documents("/docs") == [("/docs/a.pdf", "encrypted PDF")]
    assert store.counts()[:3] == (0, 0, 1)
    store.close()


def test_generations_switch_and_passages_without_vectors(db_url):
    store = Store.open(db_url)
    old = store.create_generation("old", 4, "active")
    root = store.ensure_root("/docs")
    _, ids = store.write_documents(root, old.id, [write("/docs/a.txt", ["one", "two"])])
    new = store.create_generation("new", 2, "building")
    assert [pid for pid, *_ in store.passages_without_vectors(new.id, 10)] == ids[0]
    store.add_vectors(new.id, ids[0], np.ones((2, 2), np.float32))
    assert store.passages_without_vectors(new.id, 10) == []
    store.activate_generation(new.id)
    assert store.generation("active").model_name == "new"
    assert list(store.iter_vectors(old.id, 4)) == []
    store.close()


def test_reopening_migrates_and_keeps_data(db_url):
    store = Store.open(db_url)
    generation = store.create_generation("model", 4, "active")
    store.write_documents(store.ensure_root("/docs"), generation.id, [write("/docs/a.txt", ["one"])])
    store.close()
    reopened = Store.open(db_url)  # runs the migrations again: nothing to do, nothing lost
    assert reopened.counts()[:3] == (1, 1, 0)
    tables = set(inspect(reopened.engine).get_table_names())
    assert {"roots", "documents", "passages", "index_generations", "vectors", "alembic_version"} <= tables
    reopened.close()


def test_the_newest_revision_is_alembics_head():
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from engine.store.store import MIGRATIONS

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    assert ScriptDirectory.from_config(config).get_current_head() == HEAD_REVISION


def test_a_database_at_the_newest_schema_opens_without_alembic(db_url, monkeypatch):
    """Opening is one query then (a command's start paid ~0.3 s to import Alembic); a
    database at an earlier revision is still upgraded (test_passage_context, test_path_keys)."""
    from alembic import command

    Store.open(db_url).close()
    monkeypatch.setattr(command, "upgrade", lambda *a, **k: pytest.fail("migrated a database already at head"))
    reopened = Store.open(db_url)
    assert revisions_of(reopened.engine) == [HEAD_REVISION]
    reopened.close()


def test_unusable_database_url_is_a_store_error(tmp_path):
    with pytest.raises(StoreError, match="cannot open the database"):
        Store.open("postgresql+psycopg://nobody:secret@127.0.0.1:1/none?connect_timeout=2")
    with pytest.raises(StoreError) as info:
        Store.open("postgresql+psycopg://nobody:secret@127.0.0.1:1/none?connect_timeout=2")
    assert "secret" not in str(info.value)


def test_a_kept_text_comes_back_with_its_pages_and_headings():
    from engine.extract.base import ExtractedText, Heading
    from engine.store.texts import decode_text, encode_text

    extracted = ExtractedText("Setup\n\nRun it.\n\nUse\n\nCall it.", "epub", page_starts=(0, 14), title="Guide",
                              headings=(Heading(0, "Setup"), Heading(14, "Use")))
    assert decode_text(encode_text(extracted)) == extracted
