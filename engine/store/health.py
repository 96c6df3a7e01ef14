"""Questions about the database's own health, asked before trusting it.

    >>> database_is_new("sqlite:////home/me/.local/share/babelfind/babelfind.db")
    True                       # the file is missing or empty: nothing was ever stored
    >>> integrity_problems(store)
    ['*** in database main ***', 'Page 12: btree page ...']
"""

from __future__ import annotations

import numpy as np
from sqlalchemy import create_engine, func, inspect, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from engine.errors import StoreError
from engine.store.schema import Passage, Vector
from engine.store.store import Store
from engine.store.urls import mask_url, one_line, scrub, sqlite_database_file
from engine.store.vector_blobs import EARLIER, STORED

MAX_REPORTED = 20  # integrity_check lines kept; a badly damaged file yields thousands


def database_is_new(url: str) -> bool:
    """True when the database holds no Babelfind schema at all (missing or empty).

    For SQLite this looks at the file without creating it; for a server it asks whether
    the migrations table exists. Unreachable servers are left to `Store.open`.
    """
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return False  # Store.open reports the malformed URL
    if parsed.get_backend_name() == "sqlite":
        database = sqlite_database_file(parsed)
        if database is None:
            return True
        from pathlib import Path

        path = Path(database)
        return not path.exists() or path.stat().st_size == 0
    try:
        engine = create_engine(url)
        try:
            with engine.connect() as connection:
                return not inspect(connection).has_table("alembic_version")
        finally:
            engine.dispose()
    except (SQLAlchemyError, ImportError, ValueError, OSError):
        return False


def integrity_problems(store: Store) -> list[str]:
    """SQLite's own page-level check (`PRAGMA integrity_check`); [] when sound or not SQLite."""
    if store.engine.dialect.name != "sqlite":
        return []
    try:
        with store.engine.connect() as connection:
            rows = [r[0] for r in connection.exec_driver_sql("PRAGMA integrity_check").fetchall()]
            rows += [f"foreign key: {tuple(r)}" for r in
                     connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()]
    except SQLAlchemyError as e:
        return [f"the database cannot be read: {scrub(one_line(e), _url(store))}"]
    problems = [r for r in rows if r != "ok"]
    if len(problems) > MAX_REPORTED:
        problems = problems[:MAX_REPORTED] + [f"... and {len(problems) - MAX_REPORTED} more"]
    return problems


def passage_ids(store: Store) -> np.ndarray:
    """Every passage id, sorted (int64)."""
    return _ids(store, select(Passage.id).order_by(Passage.id))


def vector_ids(store: Store, generation_id: int) -> np.ndarray:
    """The passage ids holding a vector in `generation_id`, sorted (int64)."""
    query = (select(Vector.passage_id).where(Vector.generation_id == generation_id)
             .order_by(Vector.passage_id))
    return _ids(store, query)


def bad_vector_sizes(store: Store, generation_id: int, dim: int) -> int:
    """How many stored vectors of the generation are neither `dim` float16 values long
    nor `dim` float32 ones (earlier versions)."""
    with store.session() as s:
        return s.scalar(select(func.count()).where(
            Vector.generation_id == generation_id,
            func.length(Vector.data).not_in([STORED.itemsize * dim, EARLIER.itemsize * dim]))) or 0


def _ids(store: Store, query) -> np.ndarray:
    try:
        with store.session() as s:
            return np.fromiter(s.scalars(query), dtype=np.int64)
    except SQLAlchemyError as e:
        url = _url(store)
        raise StoreError(f"cannot read the database {mask_url(url)}: {scrub(one_line(e), url)}") from e


def _url(store: Store) -> str:
    """The full URL, so that `scrub` knows every secret to mask (str() hides only one)."""
    return store.engine.url.render_as_string(hide_password=False)
