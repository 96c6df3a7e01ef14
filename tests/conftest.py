"""Shared fixtures: every test gets its own BABELFIND_HOME; data tests find ../shared/data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Qt must never try to open a real display in tests.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Two cores here: keep BLAS/ORT from oversubscribing when tests run beside each other.
os.environ.setdefault("OMP_NUM_THREADS", "2")

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("BABELFIND_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))
SAMPLE_DIR = REPO_ROOT / "resources" / "sample"


def pytest_collection_modifyitems(config, items):
    skip_data = pytest.mark.skip(reason=f"shared data folder not found at {SHARED_DATA}")
    for item in items:
        if "data" in item.keywords and not SHARED_DATA.is_dir():
            item.add_marker(skip_data)


@pytest.fixture(autouse=True)
def babelfind_home(tmp_path_factory, monkeypatch) -> Path:
    """A fresh, empty BABELFIND_HOME for each test."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("BABELFIND_HOME", str(home))
    return home


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder not found at {SHARED_DATA}")
    return SHARED_DATA
