"""Builds from this checkout (the bundle, a wheel, a plain `pip install`) write the same
folders in it: setuptools builds in the source tree (build/, babelfind.egg-info/) and the
bundle keeps its build venv in build/. Under `make test` the test files run on several
workers at once, so these builds take turns."""

from __future__ import annotations

from pathlib import Path

import pytest
from filelock import FileLock

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def checkout_build_lock() -> FileLock:
    """Held while a test builds from the checkout; the lock file lies in the ignored build/."""
    (REPO_ROOT / "build").mkdir(exist_ok=True)
    return FileLock(REPO_ROOT / "build" / "tests.lock")
