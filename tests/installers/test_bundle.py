"""The Linux bundle (make installer -> dist/babelfind/): the bundled CLI indexes and searches
the sample in a fresh home, taking the models it carries; the bundled window starts
offscreen; no torch inside. Slow: builds the bundle (installers/build_bundle.py, with a
build venv and PyInstaller of its own: 2-3 minutes here) unless dist/ holds one newer than
the sources. It runs in CI, so a module or data file the spec misses fails here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLE_DIR = REPO_ROOT / "resources" / "sample"
BUNDLE = REPO_ROOT / "dist" / "babelfind"
SOURCES = ("app", "engine", "trainer", "installers", "resources", "pyproject.toml", "requirements.lock")
TRAINING_NAMES = ("torch", "transformers", "triton", "sentence_transformers")
GUI_SECONDS = 8

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux bundle")]


def newest_source_mtime() -> float:
    newest = 0.0
    for name in SOURCES:
        path = REPO_ROOT / name
        files = path.rglob("*") if path.is_dir() else [path]
        newest = max([newest, *(f.stat().st_mtime for f in files
                                if f.is_file() and "__pycache__" not in f.parts)])
    return newest


def bundle_is_fresh() -> bool:
    exe = BUNDLE / "babelfind"
    return exe.is_file() and exe.stat().st_mtime > newest_source_mtime()


@pytest.fixture(scope="module")
def bundle(checkout_build_lock) -> Path:
    """dist/babelfind, built now unless a fresh one is there."""
    with checkout_build_lock:
        if not bundle_is_fresh():
            subprocess.run([sys.executable, str(REPO_ROOT / "installers" / "build_bundle.py")],
                           check=True, timeout=3600, cwd=REPO_ROOT)
    return BUNDLE


def bundle_env(home: Path, **extra: str) -> dict:
    """A user's environment: no checkout on the path, nothing pointing into the repo."""
    drop = ("PYTHONPATH", "BABELFIND_PREPARED_MODELS", "BABELFIND_RESOURCES", "VIRTUAL_ENV")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    return env | {"BABELFIND_HOME": str(home)} | extra


def test_both_executables_side_by_side(bundle):
    for name in ("babelfind", "babelfind-gui"):
        assert os.access(bundle / name, os.X_OK), name
    assert any((bundle / "_internal" / "models").glob("*.zip"))


def test_no_torch_inside_the_bundle(bundle):
    found = [p.relative_to(bundle) for p in bundle.rglob("*")
             if p.name.split(".")[0].lower() in TRAINING_NAMES
             or p.name.startswith(("libtorch", "libc10", "libtriton"))]
    assert found == []


def test_bundled_cli_indexes_and_searches_with_the_models_it_carries(bundle, tmp_path):
    env = bundle_env(tmp_path / "home")
    index = subprocess.run([str(bundle / "babelfind"), "index", str(SAMPLE_DIR)],
                           capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert index.returncode == 0, index.stderr[-4000:]
    assert "copying the bundled models" in index.stderr  # carried, not converted
    search = subprocess.run([str(bundle / "babelfind"), "search",
                             "how do honey bees turn nectar into honey", "--json"],
                            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert search.returncode == 0, search.stderr[-4000:]
    assert "beekeeping_en.md" in search.stdout
    listed = subprocess.run([str(bundle / "babelfind"), "models", "list"], capture_output=True,
                            text=True, env=env, timeout=120)
    assert "multilingual-e5-small" in listed.stdout
    assert "all-minilm-l6-v2" not in listed.stdout  # the multilingual default serves English
    carried = list((bundle / "_internal" / "models").glob("*.zip"))
    assert [archive.stem for archive in carried] == ["multilingual-e5-small"]
    for archive in carried:  # the very files it carries, extracted and checked
        with zipfile.ZipFile(archive) as zf:
            files = json.loads(zf.read(f"{archive.stem}/manifest.json"))["files"]
        installed = json.loads((tmp_path / "home" / "models" / archive.stem / "manifest.json")
                               .read_text(encoding="utf-8"))["files"]
        assert installed == files


def test_one_executable_and_a_link_for_the_window(bundle):
    """On Linux the window's executable is a link to the CLI's: one module archive."""
    assert (bundle / "babelfind-gui").is_symlink()
    assert (bundle / "babelfind-gui").resolve() == (bundle / "babelfind").resolve()


def test_bundled_cli_reports_and_refuses_training(bundle, tmp_path):
    env = bundle_env(tmp_path / "home")
    doctor = subprocess.run([str(bundle / "babelfind"), "doctor", "--json"], capture_output=True,
                            text=True, env=env, timeout=120)
    assert doctor.returncode in (0, 1), doctor.stderr[-4000:]
    json.loads(doctor.stdout)
    train = subprocess.run([str(bundle / "babelfind"), "train", "--corpus", str(SAMPLE_DIR),
                            "--out", "notes"], capture_output=True, text=True, env=env, timeout=120)
    assert train.returncode == 2 and "not part of the desktop bundle" in train.stderr
    assert "pip install -c requirements.lock '.[train]'" in train.stderr


def test_bundled_window_starts_offscreen(bundle, tmp_path):
    home = tmp_path / "home"
    window = subprocess.Popen([str(bundle / "babelfind-gui")], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True,
                              env=bundle_env(home, QT_QPA_PLATFORM="offscreen"))
    try:
        time.sleep(GUI_SECONDS)
        still_running = window.poll() is None
    finally:
        window.terminate()
        out, err = window.communicate(timeout=60)
    assert still_running, f"exited with {window.returncode}: {err[-4000:]}"
    assert "Traceback" not in err
    logs = "".join(p.read_text(encoding="utf-8", errors="replace")
                   for p in (home / "logs").glob("*.log"))
    assert "Traceback" not in logs and " ERROR " not in logs, logs[-4000:]
