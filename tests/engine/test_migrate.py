"""Folders of earlier versions (table inside the graphs) are migrated once, crash-safe."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import engine.encoders.migrate as migrate
from engine.config import DataPaths, save_settings
from engine.encoders.onnx import OnnxEncoder
from engine.encoders.parity import PARITY_SENTENCES, cosine_rows
from engine.encoders.int8_kernels import pair_sums_saturate
from engine.errors import ModelError
from engine.models import get_manifest, load_encoder, model_dir
from engine.model_manifest import read_manifest, verify_files
from tiny_models import random_sentences, register_old_format_model

TEXTS = random_sentences(20, seed=9) + ["hello world", ""]


@pytest.fixture(scope="module")
def old_registry(tmp_path_factory) -> DataPaths:
    paths = DataPaths(tmp_path_factory.mktemp("old-registry"))
    register_old_format_model(paths, "old")
    return paths


@pytest.fixture
def paths(old_registry, tmp_path) -> DataPaths:
    """A fresh copy of the old-format registry for each test."""
    copy = DataPaths(tmp_path / "home")
    shutil.copytree(old_registry.models, copy.models)
    return copy


def _vectors_before(paths, variant):
    folder = model_dir("old", paths)
    return OnnxEncoder(folder, read_manifest(folder), variant=variant, device="cpu").encode(TEXTS)


def test_loading_migrates_once_and_gives_the_same_vectors(paths, monkeypatch):
    before = {v: _vectors_before(paths, v) for v in ("fp32", "int8")}
    old_size = (model_dir("old", paths) / "model.onnx").stat().st_size
    after = load_encoder("old", paths=paths, variant="fp32").encode(TEXTS)
    assert cosine_rows(after, before["fp32"]).min() >= 0.9999
    if pair_sums_saturate():  # an old int8 file has 8-bit weights, wrong on this CPU
        with pytest.raises(ModelError, match="int8 would give wrong vectors here"):
            load_encoder("old", paths=paths, variant="int8")
    else:  # int8 graphs quantise activations per batch: any change of input moves them a little
        int8 = load_encoder("old", paths=paths, variant="int8").encode(TEXTS)
        assert cosine_rows(int8, before["int8"]).min() >= 0.99
    manifest = get_manifest("old", paths)
    assert manifest.embeddings["dtype"] in ("int8", "float16", "float32")
    assert manifest.embeddings["parity"]["min_cosine"] >= 0.9999
    verify_files(model_dir("old", paths), manifest)  # every new file is checksummed
    assert set(manifest.serving_files()) <= set(manifest.files)
    assert (model_dir("old", paths) / "model.onnx").stat().st_size < old_size
    assert not [p for p in paths.models.iterdir() if p.name.startswith(".")]
    monkeypatch.setattr(migrate, "migrate_folder", lambda *a, **k: pytest.fail("migrated twice"))
    load_encoder("old", paths=paths, variant="fp32")


def test_a_failed_migration_leaves_the_old_folder_working(paths, monkeypatch):
    files_before = sorted(p.name for p in model_dir("old", paths).iterdir())

    def fail(*args, **kwargs):
        raise ModelError("disk full")

    monkeypatch.setattr(migrate, "write_table", fail)
    with pytest.raises(ModelError, match="disk full"):
        load_encoder("old", paths=paths, variant="fp32")
    assert sorted(p.name for p in model_dir("old", paths).iterdir()) == files_before
    assert not get_manifest("old", paths).embeddings
    assert not [p for p in paths.models.iterdir() if p.name.startswith(".migrate-")]
    monkeypatch.undo()
    assert load_encoder("old", paths=paths, variant="fp32").table is not None


def test_a_crash_between_the_two_renames_is_undone_at_the_next_load(paths):
    folder = model_dir("old", paths)
    os.replace(folder, folder.with_name(".retired-old"))  # as if the process died here
    encoder = load_encoder("old", paths=paths, variant="fp32")
    assert encoder.table is not None and folder.is_dir()
    assert not folder.with_name(".retired-old").exists()


def test_install_check_migrates_the_active_model_with_progress(paths):
    from trainer.serving.default_models import ensure_default_models

    save_settings(paths, active_model="old")
    messages = []
    assert ensure_default_models(paths, lambda f, m: messages.append((f, m))) == "old"
    assert get_manifest("old", paths).embeddings
    assert any("updating the model files" in m for _, m in messages)
    assert messages[-1][0] == 1.0


def test_a_graph_without_a_word_embedding_lookup_is_refused(paths, tmp_path):
    from onnx import TensorProto, helper

    from engine.encoders.graph_split import split_embedding_table

    graph = helper.make_graph(
        [helper.make_node("Cast", ["input_ids"], ["embedding"], to=TensorProto.FLOAT)], "g",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", "s"])],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["b", "s"])])
    with pytest.raises(ModelError, match="word-embedding lookup") as caught:
        split_embedding_table(helper.make_model(graph), tmp_path / "x.onnx")
    assert caught.value.path == tmp_path / "x.onnx"


@pytest.mark.slow
def test_real_default_model_folder_migrates_to_the_same_vectors(tmp_path):
    # folders installed by an earlier version: BABELFIND_TEST_MODELS (only read here)
    cached = os.environ.get("BABELFIND_TEST_MODELS")
    source = Path(cached or "/nonexistent") / "multilingual-e5-small"
    if not source.is_dir() or read_manifest(source).embeddings:
        pytest.skip("needs BABELFIND_TEST_MODELS with a folder of an earlier version")
    paths = DataPaths(tmp_path / "home")
    shutil.copytree(source, paths.models / source.name)
    manifest = read_manifest(paths.models / source.name)
    before = OnnxEncoder(paths.models / source.name, manifest, variant="fp32", device="cpu")
    reference = before.encode(list(PARITY_SENTENCES), kind="query")
    del before
    after = load_encoder(source.name, paths=paths, variant="fp32")
    assert cosine_rows(after.encode(list(PARITY_SENTENCES), kind="query"), reference).min() >= 0.9999
    sizes = sum(p.stat().st_size for p in (paths.models / source.name).iterdir())
    assert sizes <= 250 * 2**20
    texts = list(PARITY_SENTENCES)  # the compact tokenizer made at migration agrees too
    prefixed = [after.prefixes["passage"] + t for t in texts]
    assert after.tokenize(texts) == [e.ids for e in after.tokenizer.encode_batch(prefixed)]
