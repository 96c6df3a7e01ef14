"""Fixtures shared by the engine's tests."""

from __future__ import annotations

import pytest
from helpers import postgres_database

from engine.config import data_paths


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request, babelfind_home):
    """The database of a library in `babelfind_home`: its SQLite file, and a fresh
    PostgreSQL database where the tests have a server (BABELFIND_TEST_PG_URL)."""
    if request.param == "sqlite":
        yield data_paths(babelfind_home).db_url
        return
    with postgres_database() as url:
        yield url
