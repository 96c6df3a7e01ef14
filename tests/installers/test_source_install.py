"""A plain `pip install` of this checkout, in a venv of its own: no torch, yet it indexes
and searches, building the default model without torch on first use; training says
how to add it. Slow (a venv and a pip install, about two minutes with a warm cache) and
needs the package index (PyPI) for what is not cached."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLE_DIR = REPO_ROOT / "resources" / "sample"

pytestmark = pytest.mark.slow


def venv_bin(venv: Path, name: str) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin") / name


@pytest.fixture(scope="module")
def plain_install(tmp_path_factory, checkout_build_lock) -> Path:
    """A venv holding babelfind with no extras, at the locked versions; returns the venv."""
    venv = tmp_path_factory.mktemp("plain") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    with checkout_build_lock:
        done = subprocess.run(
            [str(venv_bin(venv, "python")), "-m", "pip", "install", "--quiet",
             "-c", str(REPO_ROOT / "requirements.lock"), str(REPO_ROOT)],
            capture_output=True, text=True, timeout=1800, env=_clean_env())
    assert done.returncode == 0, done.stderr[-4000:]
    return venv


def _clean_env(**extra: str) -> dict:
    """The environment without our checkout on the path, so the venv's copy is what runs."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "BABELFIND_PREPARED_MODELS")}
    return env | extra


def test_plain_install_has_neither_torch_nor_transformers(plain_install):
    probe = ("import importlib.util as u, json; "
             "print(json.dumps({n: u.find_spec(n) is not None for n in "
             "('torch', 'transformers', 'sentence_transformers', 'triton', 'app', 'engine')}))")
    done = subprocess.run([str(venv_bin(plain_install, "python")), "-c", probe],
                          capture_output=True, text=True, check=True, env=_clean_env(), cwd="/")
    assert json.loads(done.stdout) == {"torch": False, "transformers": False,
                                       "sentence_transformers": False, "triton": False,
                                       "app": True, "engine": True}


def test_plain_install_indexes_and_searches_the_sample(plain_install, tmp_path):
    babelfind = str(venv_bin(plain_install, "babelfind"))
    env = _clean_env(BABELFIND_HOME=str(tmp_path / "home"))
    index = subprocess.run([babelfind, "index", str(SAMPLE_DIR)], capture_output=True, text=True,
                           env=env, cwd=tmp_path, timeout=900)
    assert index.returncode == 0, index.stderr[-4000:]
    assert "installing the bundled models" in index.stderr  # built here, without torch
    search = subprocess.run([babelfind, "search", "how do honey bees turn nectar into honey",
                             "--json"], capture_output=True, text=True, env=env, cwd=tmp_path,
                            timeout=300)
    assert search.returncode == 0, search.stderr[-4000:]
    assert "beekeeping_en.md" in search.stdout
    models = subprocess.run([babelfind, "models", "list"], capture_output=True, text=True,
                            env=env, cwd=tmp_path, timeout=120)
    assert "multilingual-e5-small" in models.stdout
    assert "all-minilm-l6-v2" not in models.stdout  # the english extra was not asked for


def test_plain_install_says_how_to_add_training(plain_install, tmp_path):
    done = subprocess.run([str(venv_bin(plain_install, "babelfind")), "train", "--corpus",
                           str(SAMPLE_DIR), "--out", "notes"], capture_output=True, text=True,
                          env=_clean_env(BABELFIND_HOME=str(tmp_path / "home")), timeout=120)
    assert done.returncode == 2
    assert "pip install 'babelfind[train]'" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_plain_install_carries_icons_style_sample_and_int8_evidence(plain_install):
    probe = ("from engine.resources import resources_dir; r = resources_dir(); "
             "print(all((r / p).is_file() for p in ('icons/search.svg', 'style/babelfind.qss', "
             "'models/int8_evidence.json', 'models/int8_probe.onnx', 'sample/beekeeping_en.md'))); print(r)")
    done = subprocess.run([str(venv_bin(plain_install, "python")), "-c", probe], capture_output=True,
                          text=True, check=True, env=_clean_env(), cwd="/")
    found, folder = done.stdout.split()
    assert found == "True"
    assert Path(folder).is_relative_to(plain_install)  # the venv's copy, not the checkout
