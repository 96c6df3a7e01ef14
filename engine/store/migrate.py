"""Alembic migrations, run by one process at a time.

    >>> migrate(engine, MIGRATIONS)        # a no-op when the schema is already the newest

pysqlite runs DDL outside a transaction, so two processes creating a fresh database
used to both create `alembic_version` ("table alembic_version already exists"): a file
lock beside a SQLite database serialises them, and PostgreSQL takes an advisory lock
inside the migration's transaction. The second process then finds the schema up to date.

A database already at the newest revision is told by one query, without Alembic: its
import alone took ~0.3 s of every command's and the window's start, to do nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError

from engine.store.urls import sqlite_database_file

MIGRATE_WAIT_S = 120.0  # a migration takes well under a second; longer means a stuck peer
_PG_LOCK_KEY = 2056240151  # any constant shared by every Babelfind process
# The newest revision in engine/migrations/versions; tests/engine/test_store.py holds it to
# Alembic's head, so a new migration cannot be added without moving it.
HEAD_REVISION = "0005"


def migrate(engine: Engine, script_location: Path) -> None:
    """Upgrades the database behind `engine` to the newest schema."""
    if revisions_of(engine) == [HEAD_REVISION]:
        return
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(script_location))
    with _sqlite_file_lock(engine), engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            # held until this transaction ends: one migrating process per database
            connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_PG_LOCK_KEY})")
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def revisions_of(engine: Engine) -> list[str]:
    """The revisions Alembic recorded in the database; [] for a new one (no table yet)."""
    try:
        with engine.connect() as connection:
            return [row[0] for row in connection.exec_driver_sql("SELECT version_num FROM alembic_version")]
    except DBAPIError:  # no such table; any other failure the migration meets again and reports
        return []


@contextmanager
def _sqlite_file_lock(engine: Engine) -> Iterator[None]:
    """`<database>.migrate.lock` held while migrating a SQLite file; nothing otherwise."""
    database = sqlite_database_file(engine.url)
    if database is None:
        yield
        return
    from engine.locking import WriteLock

    lock = WriteLock(Path(database + ".migrate.lock"))
    with lock.hold("creating or upgrading the database", timeout=MIGRATE_WAIT_S):
        yield
