"""Every passage's document, language and file type in numpy arrays, cached between commits.

    >>> catalog = passage_catalog(store)          # brought up to date only after passages changed
    >>> catalog.allowed(languages=frozenset({"de"}))   # sorted passage ids, int64
    >>> catalog.document_positions(ids)           # each passage's row in the document arrays

Search needs the document of every match (thousands) to group and count them, and the
filters need every passage's language, file type and folder. Asking SQL for these on each
query cost 5-360 ms at 100k passages (docs/benchmarks.md); numpy answers in well under one.

These facts never change in place: a re-indexed file gets new document and passage ids
(`Store.write_documents` deletes and inserts), and every commit that adds or removes
passages bumps the versions of the non-retired index generations. So a catalog is valid
while those (generation id, version) pairs are unchanged; they are read on each call (one
small query), so another process's commit is seen by the next search, as the FAISS file
is re-checked against the same version. When they changed, the catalog is brought up to
date from the difference (new passages, documents gone), checked by the passages' count
and id sum, so searching while indexing runs does not re-read everything after each
commit. A document's mtime does change in place (`Store.touch_document`, no version
bump): date filters have their own cache (engine.store.dates).

A SQLite library keeps its catalog beside the database (`babelfind.db.catalog.npz`), so
that a new process (each command-line search) brings the last one up to date in the same
way instead of reading every passage: the count and id sum that check an update also
catch a file that belongs to another state or database.
"""

from __future__ import annotations

import json
import logging
import threading
import weakref
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from sqlalchemy import func, select

from engine.atomic import atomic_file
from engine.store.commits import commit_watch
from engine.store.schema import Document, IndexGeneration, Passage
from engine.store.store import Store, _chunks
from engine.store.urls import sqlite_plain_file

log = logging.getLogger(__name__)

Stamp = tuple[tuple[int, int], ...]  # (generation id, version) of each non-retired generation

# Store -> (PassageCatalog, the commit watch's version when it was last found current)
_catalogs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_lock = threading.Lock()


@dataclass(frozen=True, eq=False)
class PassageCatalog:
    """One immutable snapshot of the passages and their documents; replaced, never edited."""

    stamp: Stamp
    passage_ids: np.ndarray  # int64 [n], sorted
    passage_document: np.ndarray  # int64 [n]: row of the passage's document in document_ids
    passage_language: np.ndarray  # int32 [n]: index into `languages`
    languages: tuple[str | None, ...]
    document_ids: np.ndarray  # int64 [m], sorted
    document_paths: tuple[str, ...]  # [m]
    document_languages: tuple[str | None, ...]  # [m]
    document_file_type: np.ndarray  # int32 [m]: index into `file_types`
    file_types: tuple[str, ...]
    _under: dict = field(default_factory=dict)  # path prefix -> bool [m], filled on demand (few per catalog)

    def __len__(self) -> int:
        return len(self.passage_ids)

    def document_positions(self, ids: np.ndarray) -> np.ndarray:
        """Row in the document arrays of each passage in `ids`; -1 where not catalogued."""
        return self.places(ids)[0]

    def places(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row in the document arrays, index into `languages`) of each passage in `ids`,
        int64 both; -1 for both where not catalogued."""
        ids = np.asarray(ids, np.int64)
        if not len(self.passage_ids):
            return np.full(len(ids), -1, np.int64), np.full(len(ids), -1, np.int64)
        at = np.minimum(np.searchsorted(self.passage_ids, ids), len(self.passage_ids) - 1)
        found = self.passage_ids[at] == ids
        return (np.where(found, self.passage_document[at], -1).astype(np.int64),
                np.where(found, self.passage_language[at], -1).astype(np.int64))

    def languages_of(self, ids: np.ndarray) -> list[str | None]:
        """Each passage's detected language (None: none detected, or not catalogued)."""
        return [self.languages[code] if code >= 0 else None for code in self.places(ids)[1].tolist()]

    def documents_of(self, ids: Iterable[int]) -> set[int]:
        """Document ids of these passages (uncatalogued ones left out)."""
        rows = self.document_positions(np.fromiter((int(i) for i in ids), np.int64))
        return set(self.document_ids[rows[rows >= 0]].tolist())

    def passages_of(self, document_ids: Iterable[int]) -> np.ndarray:
        """Sorted ids of the passages of these documents."""
        wanted = np.fromiter((int(d) for d in document_ids), np.int64)
        return self.passage_ids[np.isin(self.document_ids[self.passage_document], wanted)]

    def allowed(self, *, languages: frozenset[str] | None = None, file_types: frozenset[str] | None = None,
                path_prefix: str | None = None, document_ids: np.ndarray | None = None) -> np.ndarray:
        """Sorted passage ids passing every given filter; `document_ids` (sorted) keeps only theirs."""
        keep = np.ones(len(self.passage_ids), bool)
        if languages:
            codes = [i for i, lang in enumerate(self.languages) if lang in languages]
            keep &= np.isin(self.passage_language, codes)
        documents = np.ones(len(self.document_ids), bool)
        if file_types:
            documents &= np.isin(self.document_file_type,
                                 [i for i, t in enumerate(self.file_types) if t in file_types])
        if path_prefix:
            documents &= self._documents_under(path_prefix)
        if document_ids is not None:
            documents &= np.isin(self.document_ids, document_ids)
        if not documents.all():
            keep &= documents[self.passage_document]
        return self.passage_ids[keep]

    def _documents_under(self, prefix: str) -> np.ndarray:
        """bool [m]: the document is `prefix` itself or below it (case as stored)."""
        mask = self._under.get(prefix)
        if mask is None:
            prefix = prefix.rstrip("/") or "/"
            under = prefix if prefix.endswith("/") else prefix + "/"
            mask = np.fromiter((p == prefix or p.startswith(under) for p in self.document_paths), bool,
                               len(self.document_paths))
            if len(self._under) >= 64:  # typed one after another; keep memory bounded
                self._under.clear()
            self._under[prefix] = mask
        return mask


def passage_catalog(store: Store) -> PassageCatalog:
    """The store's catalog, brought up to date when a commit since the last call added or
    removed passages: from what changed, ~30 ms of CPU at 100k passages where reading
    it all takes ~250 ms, so a search while indexing runs stays fast. Where nothing at
    all was committed since (engine.store.commits), not even the stamp is read."""
    watch = commit_watch(store)
    seen = watch.version() if watch is not None else None  # asked first: a commit after it is seen next time
    with _lock:
        cached, cached_seen = _catalogs.get(store, (None, None))
    if cached is not None and seen is not None and seen == cached_seen:
        return cached
    stamp = _stamp(store)
    if cached is None:
        cached = _first_of_process(store, stamp)
    elif cached.stamp != stamp:
        cached = _refreshed(store, cached, stamp) or _built_and_kept(store, stamp)
    with _lock:
        _catalogs[store] = (cached, seen)
    return cached


def _stamp(store: Store) -> Stamp:
    with store.engine.connect() as connection:
        rows = connection.execute(select(IndexGeneration.id, IndexGeneration.version)
                                  .where(IndexGeneration.status != "retired").order_by(IndexGeneration.id))
        return tuple((int(g), int(v)) for g, v in rows)


def _first_of_process(store: Store, stamp: Stamp) -> PassageCatalog:
    """The catalog an earlier process kept beside a SQLite database, brought up to date
    (and so checked by the passages' count and id sum), else read whole and kept: a
    command-line search at 100k passages starts ~0.6-1.4 s sooner."""
    saved = _kept(store)
    catalog = _refreshed(store, saved, stamp) if saved is not None else None
    if catalog is None:
        return _built_and_kept(store, stamp)
    if saved.stamp != stamp:
        _keep(store, catalog)
    return catalog


def _built_and_kept(store: Store, stamp: Stamp) -> PassageCatalog:
    catalog = _build(store, stamp)
    _keep(store, catalog)
    return catalog


# -- kept between processes --------------------------------------------------------------

KEPT_SUFFIX = ".catalog.npz"  # beside the database file: babelfind.db.catalog.npz
_KEPT_FORMAT = 1
_KEPT_ARRAYS = ("passage_ids", "passage_document", "passage_language", "document_ids", "document_file_type")
_KEPT_TABLES = ("languages", "document_paths", "document_languages", "file_types")


def kept_catalog_file(store: Store) -> Path | None:
    """Where a SQLite library's catalog is kept between processes; None for another
    backend or a database in memory (each process then reads it whole)."""
    database = sqlite_plain_file(store.engine.url)
    return None if database is None else Path(database + KEPT_SUFFIX)


def _keep(store: Store, catalog: PassageCatalog) -> None:
    path = kept_catalog_file(store)
    if path is None:
        return
    tables = {name: list(getattr(catalog, name)) for name in _KEPT_TABLES}
    tables |= {"format": _KEPT_FORMAT, "stamp": [list(pair) for pair in catalog.stamp]}
    try:
        with atomic_file(path) as f:
            np.savez(f, tables=np.frombuffer(json.dumps(tables).encode(), np.uint8),
                     **{name: getattr(catalog, name) for name in _KEPT_ARRAYS})
    except OSError as e:  # a read-only folder: the next process reads the catalog whole
        log.info("cannot keep the passage catalog in %s: %s", path, e)


def _kept(store: Store) -> PassageCatalog | None:
    """The catalog kept beside the database, or None (none, damaged, of another format);
    only its shape is checked here: `_refreshed` checks it against the database."""
    path = kept_catalog_file(store)
    if path is None or not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as saved:
            tables = json.loads(saved["tables"].tobytes().decode())
            arrays = {name: saved[name] for name in _KEPT_ARRAYS}
        if tables.get("format") != _KEPT_FORMAT:
            return None
        catalog = PassageCatalog(stamp=tuple((int(g), int(v)) for g, v in tables["stamp"]),
                                 **{name: tuple(tables[name]) for name in _KEPT_TABLES}, **arrays)
    except (OSError, EOFError, ValueError, KeyError, TypeError, zipfile.BadZipFile, UnicodeDecodeError) as e:
        log.info("the kept passage catalog %s cannot be read (%s); reading it whole", path, e)
        return None
    n, m = len(catalog.passage_ids), len(catalog.document_ids)
    shapes = (catalog.passage_document.shape == catalog.passage_language.shape == (n,)
              and len(catalog.document_paths) == len(catalog.document_languages) == m
              and catalog.document_file_type.shape == (m,)
              and (n == 0 or (catalog.passage_document.min() >= 0 and catalog.passage_document.max() < m))
              and (m == 0 or catalog.document_file_type.max(initial=0) < len(catalog.file_types))
              and (n == 0 or catalog.passage_language.max(initial=0) < len(catalog.languages)))
    return catalog if shapes else None


_PASSAGE_COLUMNS = (Passage.id, Passage.document_id, Passage.language)
_DOCUMENT_COLUMNS = (Document.id, Document.path, Document.file_type, Document.language)


def _build(store: Store, stamp: Stamp) -> PassageCatalog:
    """Reads the catalog; `stamp` was read before, so a commit meanwhile makes it stale, not wrong.

    Passages are read before documents: a passage whose document is gone by then was
    removed meanwhile and is left out.
    """
    with store.engine.connect() as connection:
        passages = driver_rows(connection, select(*_PASSAGE_COLUMNS).order_by(Passage.id))
        documents = driver_rows(connection, select(*_DOCUMENT_COLUMNS).order_by(Document.id))
    return _assembled(stamp, passages, documents)


def driver_rows(connection, statement) -> list[tuple]:
    """All rows of a SELECT with integer parameters, through the driver's own cursor.

    SQLAlchemy's result rows cost ~2 us each, most of the time of reading 100k passages;
    the statement is still built by SQLAlchemy, so it is written for the backend in use.
    """
    sql = str(statement.compile(dialect=connection.dialect, compile_kwargs={"literal_binds": True}))
    cursor = connection.connection.cursor()
    try:
        cursor.execute(sql)
        return cursor.fetchall()
    finally:
        cursor.close()


def _refreshed(store: Store, cached: PassageCatalog, stamp: Stamp) -> PassageCatalog | None:
    """`cached` with what changed since it was read, or None when only a full read will do.

    Passages are only ever inserted with a new document row and deleted with theirs
    (Store.write_documents), and their ids only grow: so what changed is the passages
    above the last id held, and the documents gone. A document id can be used again
    after its row was deleted: one that new passages name is replaced. The passage count
    and id sum then confirm the result, else the caller reads everything: they catch ids
    committed out of order (concurrent PostgreSQL writers) and a failed file's row (no
    passages) taking the id of the indexed row it replaced.
    """
    last = int(cached.passage_ids[-1]) if len(cached) else 0
    with store.engine.connect() as connection:
        present = np.array(driver_rows(connection, select(Document.id)), np.int64).reshape(-1)
        added = connection.execute(select(*_PASSAGE_COLUMNS).where(Passage.id > last).order_by(Passage.id)).all()
        owners = sorted({r[1] for r in added})
        documents = [row for chunk in _chunks(owners)
                     for row in connection.execute(select(*_DOCUMENT_COLUMNS).where(Document.id.in_(chunk)))]
        count, total = connection.execute(select(func.count(Passage.id), func.sum(Passage.id))).one()
    kept = np.isin(cached.document_ids, present) & ~np.isin(cached.document_ids, owners)
    catalog = _merged(cached, kept, added, documents, stamp)
    if len(catalog) != count or int(catalog.passage_ids.sum()) != int(total or 0):
        return None
    return catalog


def _merged(cached: PassageCatalog, kept: np.ndarray, passages: Sequence, documents: Sequence,
            stamp: Stamp) -> PassageCatalog:
    """The kept documents of `cached` (bool [m]) with their passages, plus new passage rows
    (id, document id, language; ids above the cached ones) and document rows (id, path,
    file type, language); new passages whose document is missing are left out."""
    file_table = {v: i for i, v in enumerate(cached.file_types)}
    language_table = {v: i for i, v in enumerate(cached.languages)}
    kept_rows = np.flatnonzero(kept)
    document_ids = np.concatenate([cached.document_ids[kept_rows],
                                   np.fromiter((r[0] for r in documents), np.int64, len(documents))])
    file_codes = np.concatenate([cached.document_file_type[kept_rows], np.asarray(
        [file_table.setdefault(r[2], len(file_table)) for r in documents], np.int32)])
    paths = [cached.document_paths[i] for i in kept_rows.tolist()] + [r[1] for r in documents]
    document_languages = [cached.document_languages[i] for i in kept_rows.tolist()] + [r[3] for r in documents]
    order = np.argsort(document_ids, kind="stable")
    position = np.empty(len(order), np.int64)  # combined row -> row once sorted by id
    position[order] = np.arange(len(order))
    if not (order == position).all():  # new ids are usually the largest: nothing moves
        document_ids, file_codes = document_ids[order], file_codes[order]
        paths, document_languages = [paths[i] for i in order.tolist()], [document_languages[i] for i in order.tolist()]

    keep = kept[cached.passage_document]
    combined_row = np.cumsum(kept) - 1  # old document row -> its row among the kept ones
    new_owners = np.fromiter((r[1] for r in passages), np.int64, len(passages))
    new_rows = np.minimum(np.searchsorted(document_ids, new_owners), max(len(document_ids) - 1, 0))
    found = document_ids[new_rows] == new_owners if len(document_ids) else np.zeros(len(passages), bool)
    passage_ids = np.concatenate([cached.passage_ids[keep],
                                  np.fromiter((r[0] for r in passages), np.int64, len(passages))[found]])
    rows = np.concatenate([position[combined_row[cached.passage_document[keep]]], new_rows[found]])
    language_codes = np.concatenate([cached.passage_language[keep], np.asarray(
        [language_table.setdefault(r[2], len(language_table)) for r in passages], np.int32)[found]])
    return PassageCatalog(
        stamp=stamp, passage_ids=passage_ids, passage_document=rows, passage_language=language_codes,
        languages=tuple(language_table), document_ids=document_ids, document_paths=tuple(paths),
        document_languages=tuple(document_languages), document_file_type=file_codes, file_types=tuple(file_table))


def _assembled(stamp: Stamp, passages: Sequence, documents: Sequence) -> PassageCatalog:
    """A catalog of (id, document id, language) passage rows sorted by id and (id, path,
    file type, language) document rows; passages whose document is missing are left out."""
    documents = sorted(documents, key=lambda r: r[0])
    document_ids = np.fromiter((r[0] for r in documents), np.int64, len(documents))
    file_types, file_type_codes = _codes(r[2] for r in documents)
    passage_ids = np.fromiter((r[0] for r in passages), np.int64, len(passages))
    owners = np.fromiter((r[1] for r in passages), np.int64, len(passages))
    languages, language_codes = _codes(r[2] for r in passages)
    rows = np.minimum(np.searchsorted(document_ids, owners), max(len(document_ids) - 1, 0))
    present = document_ids[rows] == owners if len(document_ids) else np.zeros(len(owners), bool)
    return PassageCatalog(
        stamp=stamp, passage_ids=passage_ids[present], passage_document=rows[present],
        passage_language=language_codes[present], languages=languages, document_ids=document_ids,
        document_paths=tuple(r[1] for r in documents), document_languages=tuple(r[3] for r in documents),
        document_file_type=file_type_codes, file_types=file_types)


def _codes(values: Iterable) -> tuple[tuple, np.ndarray]:
    """(distinct values in first-seen order, int32 index of each value into them)."""
    table: dict = {}
    codes = [table.setdefault(v, len(table)) for v in values]
    return tuple(table), np.asarray(codes, np.int32)
