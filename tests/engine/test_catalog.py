"""The cached passage catalog against SQL on seeded random data, and when it is rebuilt.

Filters (engine.store.search_queries) answer from the catalog; the reference here is the
SQL they ran before it, so both must give the same ids. The catalog is stamped with the
index generations' versions, which every commit adding or removing passages bumps: a
write through this store, through another Store object, or from another process makes
the next call rebuild it; a document's mtime, which changes without a bump, is asked of
SQL on each date filter.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from helpers import postgres_database
from sqlalchemy import select

from engine.store import DocumentWrite, NewPassage, Store
from engine.store import catalog as catalog_module
from engine.store.catalog import passage_catalog
from engine.store.schema import Document, Passage
from engine.store.search_queries import (
    Restriction,
    documents_of_passages,
    passage_documents,
    passages_of_documents,
    restricted_passage_ids,
)

REPO = Path(__file__).resolve().parents[2]
PG_URL = os.environ.get("BABELFIND_TEST_PG_URL")
LANGUAGES = ("en", "de", "fr", None)
FILE_TYPES = ("txt", "pdf", "md")
FOLDERS = ("/docs/a", "/docs/a/deep", "/docs/ab", "/docs/b", "/other")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
        return
    with postgres_database() as url:
        yield url


def document(path: str, language: str | None, file_type: str, mtime: float, passage_languages) -> DocumentWrite:
    passages = tuple(NewPassage(f"passage {i} of {path}", 0, 10, None, lang)
                     for i, lang in enumerate(passage_languages))
    vectors = np.ones((len(passages), 4), np.float32) / 2
    return DocumentWrite(path, 1, mtime, f"hash-{path}", file_type, "text", language, passages, vectors)


def random_documents(rng: np.random.Generator, n: int, tag: str = "") -> list[DocumentWrite]:
    out = []
    for d in range(n):
        file_type = FILE_TYPES[rng.integers(len(FILE_TYPES))]
        path = f"{FOLDERS[rng.integers(len(FOLDERS))]}/{tag}doc{d}.{file_type}"
        languages = [LANGUAGES[rng.integers(len(LANGUAGES))] for _ in range(rng.integers(1, 5))]
        out.append(document(path, languages[0], file_type, float(rng.integers(0, 100)), languages))
    return out


def reference_ids(store: Store, r: Restriction) -> list[int]:
    """The SQL the filters ran before the catalog (paths compared case-sensitively)."""
    query = select(Passage.id).join(Document, Passage.document_id == Document.id)
    if r.languages:
        query = query.where(Passage.language.in_(sorted(r.languages)))
    if r.file_types:
        query = query.where(Document.file_type.in_(sorted(r.file_types)))
    if r.modified_after is not None:
        query = query.where(Document.mtime >= r.modified_after)
    if r.modified_before is not None:
        query = query.where(Document.mtime < r.modified_before)
    if r.excluded_documents:
        query = query.where(Document.id.not_in(sorted(r.excluded_documents)))
    with store.session() as s:
        rows = s.execute(query.add_columns(Document.path).order_by(Passage.id)).all()
    if not r.path_prefix:
        return [pid for pid, _ in rows]
    prefix = r.path_prefix.rstrip("/") or "/"
    under = prefix if prefix.endswith("/") else prefix + "/"
    return [pid for pid, path in rows if path == prefix or path.startswith(under)]


def random_restriction(rng: np.random.Generator, document_ids: list[int]) -> Restriction:
    def some(values):
        return frozenset(v for v in values if v is not None and rng.random() < 0.4) or None

    after = float(rng.integers(0, 100)) if rng.random() < 0.3 else None
    before = float(rng.integers(0, 100)) if rng.random() < 0.3 else None
    prefix = str(rng.choice(list(FOLDERS) + ["/docs", "/docs/a/", "/nowhere"])) if rng.random() < 0.4 else None
    excluded = frozenset(int(d) for d in rng.choice(document_ids, 3)) if rng.random() < 0.3 else frozenset()
    return Restriction(languages=some(LANGUAGES), file_types=some(FILE_TYPES), path_prefix=prefix,
                       modified_after=after, modified_before=before, excluded_documents=excluded)


def filled_store(url: str, seed: int = 0) -> tuple[Store, int, int]:
    store = Store.open(url)
    generation = store.create_generation("model", 4, "active")
    root = store.ensure_root("/")
    store.write_documents(root, generation.id, random_documents(np.random.default_rng(seed), 60))
    return store, generation.id, root


def test_filters_match_the_sql_reference(db_url):
    store, _, _ = filled_store(db_url)
    rng = np.random.default_rng(1)
    with store.session() as s:
        document_ids = list(s.scalars(select(Document.id)))
    for _ in range(200):
        restriction = random_restriction(rng, document_ids)
        if restriction.active:
            assert restricted_passage_ids(store, restriction).tolist() == reference_ids(store, restriction), restriction


def test_documents_of_passages_match_a_join(db_url):
    store, _, _ = filled_store(db_url)
    with store.session() as s:
        rows = s.execute(select(Passage.id, Passage.document_id, Document.path, Document.language)
                         .join(Document, Passage.document_id == Document.id)).all()
    ids = [r[0] for r in rows] + [10**9]  # an id never stored is left out
    assert passage_documents(store, ids) == {pid: (path, language) for pid, _, path, language in rows}
    some = ids[::7]
    assert documents_of_passages(store, some) == {doc for pid, doc, _, _ in rows if pid in some}
    owners = {doc for _, doc, _, _ in rows[:5]}
    assert passages_of_documents(store, owners).tolist() == sorted(pid for pid, doc, _, _ in rows if doc in owners)


def test_rebuilt_after_this_store_adds_or_removes_documents(db_url):
    store, generation, root = filled_store(db_url)
    first = passage_catalog(store)
    assert passage_catalog(store) is first  # nothing changed: no rebuild
    german = Restriction(languages=frozenset({"de"}))
    before = restricted_passage_ids(store, german)
    _, (added,) = store.write_documents(root, generation, [document("/docs/new.pdf", "de", "pdf", 5.0, ["de"] * 3)])
    assert np.isin(added, restricted_passage_ids(store, german)).all()
    assert restricted_passage_ids(store, Restriction(path_prefix="/docs/new.pdf")).tolist() == added
    store.remove_documents(["/docs/new.pdf"])
    assert restricted_passage_ids(store, german).tolist() == before.tolist()
    assert passage_documents(store, added) == {}


def test_an_unchanged_file_is_not_asked_for_its_stamp(tmp_path, monkeypatch):
    """Search takes the catalog several times a query: with no commit since, SQLite's data
    version says so and no query is made; any commit makes the next call look again."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    store, generation, root = filled_store(url)
    first = passage_catalog(store)
    stamps = []
    real_stamp = catalog_module._stamp
    monkeypatch.setattr(catalog_module, "_stamp", lambda s: stamps.append(1) or real_stamp(s))
    assert passage_catalog(store) is first and passage_catalog(store) is first
    assert stamps == []
    store.touch_document(first.document_paths[0], 1, 99.0)  # a commit that adds no passage
    assert passage_catalog(store) is first and stamps == [1]
    other = Store.open(url)
    _, (added,) = other.write_documents(root, generation, [document("/docs/late.txt", "en", "txt", 1.0, ["en"])])
    other.close()
    assert passage_catalog(store).passage_ids[-len(added):].tolist() == added and stamps == [1, 1]


def test_sees_another_stores_write(db_url):
    """Another Store object on the same database: its own cache, the same stamp in SQL."""
    store, generation, root = filled_store(db_url)
    pdf = Restriction(file_types=frozenset({"pdf"}))
    before = restricted_passage_ids(store, pdf)
    other = Store.open(db_url)
    _, (added,) = other.write_documents(root, generation, [document("/docs/b/x.pdf", "fr", "pdf", 1.0, ["fr"])])
    assert restricted_passage_ids(store, pdf).tolist() == sorted(before.tolist() + added)
    other.close()


def test_sees_another_process_write(tmp_path):
    """A write by another process (the CLI indexing while the window searches)."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    store, generation, root = filled_store(url)
    folder = Restriction(path_prefix="/elsewhere")
    assert len(restricted_passage_ids(store, folder)) == 0
    script = textwrap.dedent(f"""
        import numpy as np
        from engine.store import DocumentWrite, NewPassage, Store
        store = Store.open({url!r})
        passages = (NewPassage("written elsewhere", 0, 17, None, "en"),)
        store.write_documents({root}, {generation}, [DocumentWrite(
            "/elsewhere/y.txt", 1, 1.0, "h", "txt", "text", "en", passages, np.full((1, 4), 0.5, np.float32))])
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env=os.environ | {"PYTHONPATH": str(REPO)})
    assert done.stdout.strip() == "ok", done.stderr
    ids = restricted_passage_ids(store, folder)
    assert len(ids) == 1 and passage_documents(store, ids.tolist())[int(ids[0])][0] == "/elsewhere/y.txt"


def test_date_filters_see_a_touched_mtime(db_url):
    """touch_document changes a document's mtime without a version bump."""
    store, generation, root = filled_store(db_url)
    _, (ids,) = store.write_documents(root, generation, [document("/docs/t.txt", "en", "txt", 10.0, ["en"])])
    recent = Restriction(modified_after=500.0)
    assert restricted_passage_ids(store, recent).tolist() == []
    store.touch_document("/docs/t.txt", 1, 1000.0)
    assert restricted_passage_ids(store, recent).tolist() == ids


def test_empty_store_and_values_nobody_has(db_url):
    store = Store.open(db_url)
    assert len(restricted_passage_ids(store, Restriction(languages=frozenset({"de"})))) == 0
    assert passage_documents(store, [1, 2]) == {}
    generation = store.create_generation("model", 4, "active")
    store.write_documents(store.ensure_root("/"), generation.id, [document("/a.txt", None, "txt", 1.0, [None])])
    assert len(restricted_passage_ids(store, Restriction(file_types=frozenset({"docx"})))) == 0
    assert len(restricted_passage_ids(store, Restriction(languages=frozenset({"de"})))) == 0
    assert len(restricted_passage_ids(store, Restriction(path_prefix="/a.txt"))) == 1


def same_catalog(a, b) -> bool:
    """The same facts per passage (documents without passages, failed ones, do not matter)."""
    def facts(c):
        rows = c.passage_document.tolist()
        return [(pid, int(c.document_ids[d]), c.languages[lang], c.document_paths[d], c.document_languages[d],
                 c.file_types[c.document_file_type[d]])
                for pid, d, lang in zip(c.passage_ids.tolist(), rows, c.passage_language.tolist())]
    return a.stamp == b.stamp and facts(a) == facts(b)


def test_updated_in_place_equals_a_full_read(db_url, monkeypatch):
    """Random writes, rewrites (new ids, a reused document id), removals and failures; after
    each, the catalog brought up to date equals one read from scratch."""
    from engine.store import FailureWrite, catalog as module

    store, generation, root = filled_store(db_url)
    full_reads = []
    build = module._build
    monkeypatch.setattr(module, "_build", lambda *a: full_reads.append(1) or build(*a))
    rng = np.random.default_rng(3)
    passage_catalog(store)
    for step in range(25):
        with store.session() as s:
            paths = sorted(s.scalars(select(Document.path).where(Document.status == "indexed")))
        action = step % 5
        if action in (0, 1):  # new documents, or new versions of existing ones
            writes = random_documents(rng, 3, tag=f"s{step}")
            if action == 1 and paths:
                writes = [document(str(p), "de", "md", 3.0, ["de", "en"]) for p in rng.choice(paths, 2)]
            store.write_documents(root, generation, writes)
        elif action == 2 and paths:
            store.remove_documents([str(p) for p in rng.choice(paths, 3, replace=False)])
        elif action == 3:  # the newest document removed, then a new one: SQLite may reuse its id
            with store.session() as s:
                newest = s.scalars(select(Document.path).order_by(Document.id.desc())).first()
            store.remove_documents([newest])
            store.write_documents(root, generation, [document(f"/docs/b/r{step}.txt", "fr", "txt", 2.0, ["fr"])])
        elif paths:  # a file that now fails: its passages go, a failed row (no passages) comes
            store.write_failures(root, [FailureWrite(str(rng.choice(paths)), 1, 1.0, None, "pdf", "broken")])
        assert same_catalog(passage_catalog(store), build(store, module._stamp(store))), step
    assert len(full_reads) == 1  # the first call; then always brought up to date, never read again


def test_date_filters_see_another_process_touch(tmp_path):
    """The cached mtimes of an SQLite store are read again after any commit to the file."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    store, generation, root = filled_store(url)
    _, (ids,) = store.write_documents(root, generation, [document("/docs/t.txt", "en", "txt", 10.0, ["en"])])
    recent = Restriction(modified_after=500.0)
    assert restricted_passage_ids(store, recent).tolist() == []
    other = Store.open(url)
    other.touch_document("/docs/t.txt", 1, 1000.0)  # another connection pool, same file
    assert restricted_passage_ids(store, recent).tolist() == ids
    other.close()
    script = f"from engine.store import Store; Store.open({url!r}).touch_document('/docs/t.txt', 1, 20.5)"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env=os.environ | {"PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    assert restricted_passage_ids(store, recent).tolist() == []
    assert restricted_passage_ids(store, Restriction(modified_after=20.5, modified_before=20.6)).tolist() == ids


def test_a_search_finishing_after_the_store_closed_still_gets_its_catalog(tmp_path):
    """The window closes its library while a search thread may still run: the commit
    watch is closed with the store, and the catalog is then read as before it existed."""
    store, _, _ = filled_store(f"sqlite:///{tmp_path / 'store.db'}")
    recent = Restriction(modified_after=1.0)
    ids, recent_ids = passage_catalog(store).passage_ids.tolist(), restricted_passage_ids(store, recent).tolist()
    store.close()
    assert passage_catalog(store).passage_ids.tolist() == ids
    assert restricted_passage_ids(store, recent).tolist() == recent_ids


def test_closing_the_store_lets_go_of_the_file(tmp_path):
    import sqlite3

    from engine.store import commits

    store, _, _ = filled_store(f"sqlite:///{tmp_path / 'store.db'}")
    restricted_passage_ids(store, Restriction(modified_after=1.0))
    watch = commits._watches[store]
    store.close()
    with pytest.raises(sqlite3.ProgrammingError):  # closed
        watch._db.execute("PRAGMA data_version")


# -- kept between processes ---------------------------------------------------------------


def counting_full_reads(monkeypatch) -> list[int]:
    build = catalog_module._build
    full_reads: list[int] = []
    monkeypatch.setattr(catalog_module, "_build", lambda *a: full_reads.append(1) or build(*a))
    return full_reads


def truth(store: Store):
    return catalog_module._build(store, catalog_module._stamp(store))


def test_a_new_process_takes_the_kept_catalog_without_reading_it_whole(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    store, _, _ = filled_store(url)
    passage_catalog(store)
    assert catalog_module.kept_catalog_file(store) == tmp_path / "store.db.catalog.npz"
    full_reads = counting_full_reads(monkeypatch)
    later = Store.open(url)  # a new Store object: nothing cached, as in a new process
    assert same_catalog(passage_catalog(later), truth(later)) and full_reads == [1]  # truth's own


def test_the_next_process_brings_the_kept_catalog_up_to_date(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    store, generation, root = filled_store(url)
    passage_catalog(store)
    with store.session() as s:
        paths = sorted(s.scalars(select(Document.path)))
    store.remove_documents(paths[:5])
    store.write_documents(root, generation, random_documents(np.random.default_rng(9), 4, tag="late"))
    full_reads = counting_full_reads(monkeypatch)
    later = Store.open(url)
    caught_up = passage_catalog(later)
    assert full_reads == [] and same_catalog(caught_up, truth(later))
    assert catalog_module._kept(later).stamp == caught_up.stamp  # kept again, for the next one


def test_a_kept_catalog_of_another_database_is_not_taken(tmp_path, monkeypatch):
    one, _, _ = filled_store(f"sqlite:///{tmp_path / 'one.db'}", seed=1)
    passage_catalog(one)
    other, _, _ = filled_store(f"sqlite:///{tmp_path / 'other.db'}", seed=2)
    (tmp_path / "other.db.catalog.npz").write_bytes((tmp_path / "one.db.catalog.npz").read_bytes())
    fresh = Store.open(f"sqlite:///{tmp_path / 'other.db'}")
    full_reads = counting_full_reads(monkeypatch)
    assert same_catalog(passage_catalog(fresh), truth(fresh)) and len(full_reads) == 2  # its own, and truth's


@pytest.mark.parametrize("damage", [b"", b"PK\x03\x04 not a zip", "truncated"])
def test_a_damaged_kept_catalog_is_read_whole(tmp_path, damage):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    store, _, _ = filled_store(url)
    passage_catalog(store)
    kept = tmp_path / "store.db.catalog.npz"
    kept.write_bytes(kept.read_bytes()[:200] if damage == "truncated" else damage)
    later = Store.open(url)
    assert same_catalog(passage_catalog(later), truth(later))


def test_no_catalog_is_kept_for_a_database_without_a_file(db_url, tmp_path):
    store = Store.open(db_url if db_url.startswith("postgresql") else "sqlite://")
    assert catalog_module.kept_catalog_file(store) is None
