"""Every passage's document, language and file type in numpy arrays, cached between commits.

    >>> catalog = passage_catalog(store)          # rebuilt only after passages changed
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
is re-checked against the same version. A document's mtime does change in place
(`Store.touch_document`, no version bump): date filters keep asking SQL.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from sqlalchemy import select

from engine.store.schema import Document, IndexGeneration, Passage
from engine.store.store import Store

Stamp = tuple[tuple[int, int], ...]  # (generation id, version) of each non-retired generation

_catalogs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Store -> PassageCatalog
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
    _under: dict = field(default_factory=dict)  # path prefix -> bool [m], filled on demand

    def __len__(self) -> int:
        return len(self.passage_ids)

    def document_positions(self, ids: np.ndarray) -> np.ndarray:
        """Row in the document arrays of each passage in `ids`; -1 where not catalogued."""
        ids = np.asarray(ids, np.int64)
        at = np.minimum(np.searchsorted(self.passage_ids, ids), max(len(self.passage_ids) - 1, 0))
        found = (self.passage_ids[at] == ids) if len(self.passage_ids) else np.zeros(len(ids), bool)
        return np.where(found, self.passage_document[at] if len(self.passage_ids) else -1, -1)

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
            self._under[prefix] = mask  # a few prefixes per session; the catalog is short-lived
        return mask


def passage_catalog(store: Store) -> PassageCatalog:
    """The store's catalog, rebuilt when a commit since the last call added or removed passages."""
    stamp = _stamp(store)
    with _lock:
        cached = _catalogs.get(store)
        if cached is not None and cached.stamp == stamp:
            return cached
    catalog = _build(store, stamp)
    with _lock:
        _catalogs[store] = catalog
    return catalog


def _stamp(store: Store) -> Stamp:
    with store.engine.connect() as connection:
        rows = connection.execute(select(IndexGeneration.id, IndexGeneration.version)
                                  .where(IndexGeneration.status != "retired").order_by(IndexGeneration.id))
        return tuple((int(g), int(v)) for g, v in rows)


def _build(store: Store, stamp: Stamp) -> PassageCatalog:
    """Reads the catalog; `stamp` was read before, so a commit meanwhile makes it stale, not wrong.

    Passages are read before documents: a passage whose document is gone by then was
    removed meanwhile and is left out.
    """
    with store.engine.connect() as connection:
        passages = connection.execute(
            select(Passage.id, Passage.document_id, Passage.language).order_by(Passage.id)).all()
        documents = connection.execute(
            select(Document.id, Document.path, Document.file_type, Document.language).order_by(Document.id)).all()
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
