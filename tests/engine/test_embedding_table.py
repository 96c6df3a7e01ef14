"""The memory-mapped embedding table: equal to the graph's own lookup, and bad files named."""

from __future__ import annotations

import numpy as np
import pytest

from engine.config import DataPaths
from engine.encoders.embedding_table import EmbeddingTable, quantise_rows, write_table
from engine.encoders.migrate import split_folder
from engine.encoders.onnx import OnnxEncoder
from engine.encoders.parity import cosine_rows
from engine.errors import ModelError
from engine.models import load_encoder, model_dir
from engine.model_manifest import read_manifest
from tiny_models import random_sentences, register_old_format_model


@pytest.fixture
def table() -> np.ndarray:
    return np.random.default_rng(0).normal(0, 0.3, size=(50, 16)).astype(np.float32)


@pytest.fixture(scope="module")
def old_model(tmp_path_factory):
    """(folder, manifest) of a tiny model whose graphs still look tokens up themselves."""
    paths = DataPaths(tmp_path_factory.mktemp("old-format-home"))
    register_old_format_model(paths, "old", int8=False)
    folder = model_dir("old", paths)
    return folder, read_manifest(folder)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
def test_lookup_returns_the_rows_of_each_format(tmp_path, table, dtype):
    spec = write_table(tmp_path, table, dtype)
    ids = np.array([[0, 7, 49], [3, 3, 1]])
    rows = EmbeddingTable.open(tmp_path, spec).lookup(ids)
    assert rows.dtype == np.float32 and rows.shape == (2, 3, 16)
    exact = table[ids]
    if dtype == "float32":
        assert np.abs(rows - exact).max() <= 1e-6
    else:
        assert cosine_rows(rows.reshape(-1, 16), exact.reshape(-1, 16)).min() >= 0.9999


def test_int8_rows_use_one_scale_per_row():
    q, scales = quantise_rows(np.array([[0.5, -1.0], [0.0, 0.0]], np.float32))
    assert q.dtype == np.int8 and q.tolist() == [[64, -127], [0, 0]]
    np.testing.assert_allclose(scales, [1 / 127, 1.0])


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
def test_memory_mapped_rows_give_the_in_graph_lookups_vectors(old_model, tmp_path, dtype):
    folder, manifest = old_model
    texts = random_sentences(25, seed=3) + ["", "hello world!"]
    in_graph = OnnxEncoder(folder, manifest, variant="fp32", device="cpu").encode(texts)
    (tmp_path / manifest.tokenizer_file).write_bytes((folder / manifest.tokenizer_file).read_bytes())
    body = split_folder(folder, tmp_path, manifest, dtypes=(dtype,))
    assert body.embeddings["dtype"] == dtype
    served = OnnxEncoder(tmp_path, body, variant="fp32", device="cpu")
    assert served.table is not None and "input_ids" not in {i.name for i in served.session.get_inputs()}
    outside = served.encode(texts)
    if dtype == "float32":
        assert np.abs(outside - in_graph).max() <= 1e-6
    else:
        assert cosine_rows(outside, in_graph).min() >= 0.9999


def _spec(tmp_path, table, dtype="int8"):
    return write_table(tmp_path, table, dtype)


def test_missing_table_file_names_it(tmp_path, table):
    spec = _spec(tmp_path, table)
    (tmp_path / spec["file"]).unlink()
    with pytest.raises(ModelError, match="missing") as caught:
        EmbeddingTable.open(tmp_path, spec)
    assert caught.value.path == tmp_path / spec["file"]


def test_missing_scales_file_names_it(tmp_path, table):
    spec = _spec(tmp_path, table)
    (tmp_path / spec["scales"]).unlink()
    with pytest.raises(ModelError) as caught:
        EmbeddingTable.open(tmp_path, spec)
    assert caught.value.path == tmp_path / spec["scales"]


@pytest.mark.parametrize("cut", [0.05, 0.5, 0.999])  # in the header, in the rows, last byte
def test_truncated_table_file_names_it(tmp_path, table, cut):
    spec = _spec(tmp_path, table)
    path = tmp_path / spec["file"]
    data = path.read_bytes()
    path.write_bytes(data[:min(len(data) - 1, int(cut * len(data)))])
    with pytest.raises(ModelError, match="damaged or truncated") as caught:
        EmbeddingTable.open(tmp_path, spec)
    assert caught.value.path == path and str(path) in str(caught.value)


@pytest.mark.parametrize("change", [{"rows": 49}, {"dim": 17}, {"dtype": "float16"}])
def test_table_of_another_shape_or_dtype_names_it(tmp_path, table, change):
    spec = _spec(tmp_path, table) | change
    with pytest.raises(ModelError, match="the manifest says") as caught:
        EmbeddingTable.open(tmp_path, spec)
    assert caught.value.path.name in ("embeddings.npy", "embeddings.scales.npy")


def test_not_a_numpy_file_and_unknown_dtype_are_model_errors(tmp_path, table):
    spec = _spec(tmp_path, table, "float32")
    (tmp_path / spec["file"]).write_bytes(b"PK\x03\x04 not an array")
    with pytest.raises(ModelError, match="embeddings.npy"):
        EmbeddingTable.open(tmp_path, spec)
    with pytest.raises(ModelError, match="unknown embedding table dtype"):
        EmbeddingTable.open(tmp_path, spec | {"dtype": "bfloat16"})


def test_ids_outside_the_table_are_a_model_error(tmp_path, table):
    rows = EmbeddingTable.open(tmp_path, _spec(tmp_path, table))
    with pytest.raises(ModelError, match="outside the table"):
        rows.lookup(np.array([[1, 50]]))


def test_registered_model_with_a_damaged_table_names_the_file(tiny_registry, tmp_path):
    import shutil

    from engine.models import get_manifest

    copy = DataPaths(tmp_path / "home")
    shutil.copytree(tiny_registry.models / "tiny", copy.models / "tiny")
    manifest = get_manifest("tiny", copy)
    path = copy.models / "tiny" / manifest.embeddings["file"]
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(ModelError) as caught:
        load_encoder("tiny", paths=copy, variant="fp32")
    assert caught.value.path == path


def test_small_tables_keep_exact_rows_and_large_ones_the_smallest_that_keeps_parity(
        old_model, tmp_path, monkeypatch):
    import engine.encoders.migrate as migrate

    folder, manifest = old_model
    for name, limit, expected in (("small", 64 << 20, "float32"), ("large", 0, "int8")):
        monkeypatch.setattr(migrate, "SMALL_TABLE_BYTES", limit)
        dest = tmp_path / name
        dest.mkdir()
        (dest / manifest.tokenizer_file).write_bytes((folder / manifest.tokenizer_file).read_bytes())
        assert split_folder(folder, dest, manifest).embeddings["dtype"] == expected
