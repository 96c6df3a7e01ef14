"""Document dates for date filters, cached while an SQLite database is unchanged.

A document's date is its own (an e-mail's Date header) when it has one, else its mtime.

    >>> documents_modified(store, after=1_700_000_000.0, before=None)   # sorted document ids

A document's mtime changes without a version bump (`Store.touch_document`), so the
passage catalog (engine.store.catalog) cannot hold it, and asking SQL on every query
scans the documents table (~10 ms at 20k documents). SQLite tells, though, whether
anything was committed to the file since a given connection last asked: `PRAGMA
data_version` changes after a commit by any other connection, of this process or
another. One such connection per store is kept for that question; the (id, mtime)
arrays are read again only after a commit. Other databases (PostgreSQL) are asked each
time, as an in-memory SQLite database is (a second connection would see another one).
"""

from __future__ import annotations

import sqlite3
import threading
import weakref

import numpy as np
from sqlalchemy import event, func, select

from engine.store.catalog import driver_rows
from engine.store.schema import Document
from engine.store.store import Store

# A document's own date (a message's Date header) when it has one, else its mtime.
_when = func.coalesce(Document.date, Document.mtime)
_watches: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Store -> _Mtimes | None
_lock = threading.Lock()


class _Mtimes:
    """Every document's (id, mtime), and the connection that says when to read them again."""

    def __init__(self, path: str):
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._lock = threading.Lock()
        self._version: int | None = None
        self.ids = np.empty(0, np.int64)
        self.mtimes = np.empty(0, np.float64)

    def read_if_changed(self, store: Store) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            # Asked before reading: a commit in between makes the next call read again.
            version = self._db.execute("PRAGMA data_version").fetchone()[0]
            if version != self._version:
                with store.engine.connect() as connection:
                    rows = driver_rows(connection, select(Document.id, _when).order_by(Document.id))
                self.ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
                self.mtimes = np.fromiter((r[1] for r in rows), np.float64, len(rows))
                self._version = version
            return self.ids, self.mtimes

    def close(self) -> None:
        with self._lock:
            self._db.close()


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
        if store in _watches:
            return _watches[store]
        url = store.engine.url
        file_backed = (url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:")
                       and not url.query.get("uri"))
        mtimes = _Mtimes(url.database) if file_backed else None
        if mtimes is not None:
            # Store.close disposes the engine: let go of the file then, too (Windows keeps
            # an open file from being deleted).
            event.listen(store.engine, "engine_disposed", lambda _engine: mtimes.close())
        _watches[store] = mtimes
        return mtimes


def _asked(store: Store, after: float | None, before: float | None) -> np.ndarray:
    query = select(Document.id)
    if after is not None:
        query = query.where(_when >= after)
    if before is not None:
        query = query.where(_when < before)
    with store.engine.connect() as connection:
        return np.array(driver_rows(connection, query.order_by(Document.id)), np.int64).reshape(-1)
