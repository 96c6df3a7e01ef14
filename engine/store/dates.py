"""Document dates for date filters, cached while an SQLite database is unchanged.

A document's date is its own (an e-mail's Date header) when it has one, else its mtime.

    >>> documents_modified(store, after=1_700_000_000.0, before=None)   # sorted document ids

A document's mtime changes without a version bump (`Store.touch_document`), so the
passage catalog (engine.store.catalog) cannot hold it, and asking SQL on every query
scans the documents table (~10 ms at 20k documents). The (id, mtime) arrays are read
again only after a commit to the file (engine.store.commits); other databases
(PostgreSQL, an in-memory SQLite database) are asked each time.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np
from sqlalchemy import func, select

from engine.store.catalog import driver_rows
from engine.store.commits import CommitWatch, commit_watch
from engine.store.schema import Document
from engine.store.store import Store

# A document's own date (a message's Date header) when it has one, else its mtime.
_when = func.coalesce(Document.date, Document.mtime)
_mtimes: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Store -> _Mtimes | None
_lock = threading.Lock()


class _Mtimes:
    """Every document's (id, mtime), read again after a commit to the file."""

    def __init__(self, watch: CommitWatch):
        self._watch = watch
        self._lock = threading.Lock()
        self._version: int | None = None
        self.ids = np.empty(0, np.int64)
        self.mtimes = np.empty(0, np.float64)

    def read_if_changed(self, store: Store) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            # Asked before reading: a commit in between makes the next call read again.
            version = self._watch.version()
            if version is None or version != self._version:
                with store.engine.connect() as connection:
                    rows = driver_rows(connection, select(Document.id, _when).order_by(Document.id))
                self.ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
                self.mtimes = np.fromiter((r[1] for r in rows), np.float64, len(rows))
                self._version = version
            return self.ids, self.mtimes


def documents_modified(store: Store, after: float | None, before: float | None) -> np.ndarray:
    """Sorted ids of the documents with after <= mtime < before (None: unbounded)."""
    mtimes = _mtimes_of(store)
    if mtimes is None:
        return _asked(store, after, before)
    ids, times = mtimes.read_if_changed(store)
    keep = np.ones(len(ids), bool)
    if after is not None:
        keep &= times >= after
    if before is not None:
        keep &= times < before
    return ids[keep]


def _mtimes_of(store: Store) -> _Mtimes | None:
    with _lock:
        if store not in _mtimes:
            watch = commit_watch(store)
            _mtimes[store] = _Mtimes(watch) if watch is not None else None
        return _mtimes[store]


def _asked(store: Store, after: float | None, before: float | None) -> np.ndarray:
    query = select(Document.id)
    if after is not None:
        query = query.where(_when >= after)
    if before is not None:
        query = query.where(_when < before)
    with store.engine.connect() as connection:
        return np.array(driver_rows(connection, query.order_by(Document.id)), np.int64).reshape(-1)
