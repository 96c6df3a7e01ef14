"""Whether anything was committed to a store's SQLite file since a cache was read.

    >>> watch = commit_watch(store)            # None: not a file-backed SQLite store
    >>> seen = watch.version()                 # ask first, then read what is cached
    >>> ...
    >>> watch.version() == seen                # True: no commit since, the cache holds
                                               # (None once the store is closed: ask the tables)

SQLite's `PRAGMA data_version` changes after a commit by any other connection, of this
process or another, and costs microseconds; asking a table what changed costs a query
through SQLAlchemy (~0.4 ms), which search paid several times per query. One connection
per store, which never writes, is kept for that question. Other databases (PostgreSQL),
and an in-memory SQLite database (a second connection would see another one), have no
watch: their callers ask the tables each time.
"""

from __future__ import annotations

import sqlite3
import threading
import weakref

from sqlalchemy import event

from engine.store.store import Store
from engine.store.urls import sqlite_plain_file

_watches: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Store -> CommitWatch | None
_lock = threading.Lock()


class CommitWatch:
    """A read-only connection to the store's file that only asks for its data version."""

    def __init__(self, path: str):
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._lock = threading.Lock()
        self._closed = False

    def version(self) -> int | None:
        """A number that changes whenever another connection commits to the file; None once
        the store was closed (a search still finishing then asks the tables, as before)."""
        with self._lock:
            if self._closed:
                return None
            return self._db.execute("PRAGMA data_version").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._db.close()


def commit_watch(store: Store) -> CommitWatch | None:
    """The store's watch, opened on first use; None where the store has none (see above)."""
    with _lock:
        if store in _watches:
            return _watches[store]
        url = store.engine.url
        database = sqlite_plain_file(url)  # this plain connection would take a URI for a file name
        watch = CommitWatch(database) if database is not None else None
        if watch is not None:
            # Store.close disposes the engine: let go of the file then, too (Windows keeps
            # an open file from being deleted).
            event.listen(store.engine, "engine_disposed", lambda _engine: watch.close())
        _watches[store] = watch
        return watch
