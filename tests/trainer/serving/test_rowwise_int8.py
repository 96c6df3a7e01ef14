"""int8 with one activation scale per token (trainer.serving.rowwise_int8): the graph it
writes computes what its docstring says, an outlier token no longer costs the others
their precision, 4-bit layers are read back exactly, and the schemes' choices of what
stays float are the right MatMuls."""

from __future__ import annotations

import numpy as np
import pytest

from engine.encoders.int8_kernels import (FULL_WEIGHT_LEVELS, SAFE_WEIGHT_LEVELS, pair_sums_saturate,
                                          weight_levels_for_this_cpu)
from trainer.serving.rowwise_int8 import LEVELS, ZERO_POINT, dequantised_matmuls, rowwise_int8

K, M = 64, 48


def _matmul_graph(weight: np.ndarray, bias: np.ndarray):
    """y = x @ weight + bias for x [batch, seq, K], as the encoder graphs write a linear layer."""
    from onnx import TensorProto, helper, numpy_helper

    nodes = [helper.make_node("MatMul", ["x", "w"], ["xw"], name="linear"),
             helper.make_node("Add", ["xw", "b"], ["y"], name="bias")]
    graph = helper.make_graph(
        nodes, "linear", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", K])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(weight, "w"), numpy_helper.from_array(bias, "b")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _run(model, x: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def _reference(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, weight_levels: int) -> np.ndarray:
    """The module docstring's arithmetic in numpy: codes per row and per column, int product."""
    rows = x.reshape(-1, K)
    row_scale = np.maximum(np.abs(rows).max(1), 1e-8) / LEVELS
    codes = np.clip(np.rint(rows / row_scale[:, None]), -LEVELS, LEVELS)
    column_scale = np.abs(weight).max(0) / weight_levels
    weight_codes = np.clip(np.rint(weight / column_scale), -weight_levels, weight_levels)
    y = (codes @ weight_codes) * row_scale[:, None] * column_scale + bias
    return y.reshape(*x.shape[:-1], M)


@pytest.fixture
def layer():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((K, M)).astype(np.float32) / 8,
            rng.standard_normal(M).astype(np.float32), rng.standard_normal((3, 7, K)).astype(np.float32))


@pytest.mark.parametrize("weight_levels", [SAFE_WEIGHT_LEVELS, FULL_WEIGHT_LEVELS])
def test_the_graph_computes_per_row_codes_times_per_column_codes(layer, weight_levels):
    if weight_levels > weight_levels_for_this_cpu():
        pytest.skip("this CPU's int8 kernels saturate 8-bit weights (see the next test)")
    weight, bias, x = layer
    model = rowwise_int8(_matmul_graph(weight, bias), weight_levels=weight_levels)
    ops = [n.op_type for n in model.graph.node]
    assert "MatMul" not in ops and ops.count("MatMulIntegerToFloat") == 1
    np.testing.assert_allclose(_run(model, x), _reference(x, weight, bias, weight_levels),
                               rtol=1e-4, atol=1e-4)
    assert ZERO_POINT == 128  # codes are uint8 around 128: ORT's u8 x s8 kernels


def test_the_kernel_probe_tells_where_8_bit_weights_go_wrong(layer):
    """engine.encoders.int8_kernels' one-product probe agrees with a whole layer: on a CPU
    it says saturates, the 8-bit graph misses the exact integer arithmetic; elsewhere it
    matches it. 7-bit weights match it everywhere."""
    weight, bias, x = layer
    full = _run(rowwise_int8(_matmul_graph(weight, bias), weight_levels=FULL_WEIGHT_LEVELS), x)
    exact = _reference(x, weight, bias, FULL_WEIGHT_LEVELS)
    assert np.allclose(full, exact, rtol=1e-4, atol=1e-3) == (not pair_sums_saturate())
    safe = _run(rowwise_int8(_matmul_graph(weight, bias), weight_levels=SAFE_WEIGHT_LEVELS), x)
    np.testing.assert_allclose(safe, _reference(x, weight, bias, SAFE_WEIGHT_LEVELS), rtol=1e-4, atol=1e-3)


def test_an_outlier_token_does_not_cost_the_other_tokens_their_precision(layer):
    """One token 30x larger than the rest (as `<s>` is in e5): per-tensor scaling (ORT's
    dynamic int8) loses the others, one scale per token keeps them."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    weight, bias, x = layer
    x[:, 0] *= 30
    exact = x @ weight + bias
    rowwise = _run(rowwise_int8(_matmul_graph(weight, bias), weight_levels=weight_levels_for_this_cpu()), x)
    import os
    import tempfile

    import onnx

    with tempfile.TemporaryDirectory() as folder:
        src, dest = os.path.join(folder, "f.onnx"), os.path.join(folder, "q.onnx")
        onnx.save(_matmul_graph(weight, bias), src)
        quantize_dynamic(src, dest, per_channel=True, weight_type=QuantType.QInt8)
        per_tensor = _run(onnx.load(dest), x)

    def error_of_ordinary_tokens(y):
        return np.abs(y[:, 1:] - exact[:, 1:]).mean() / np.abs(exact[:, 1:]).mean()

    assert error_of_ordinary_tokens(rowwise) < 0.01
    assert error_of_ordinary_tokens(per_tensor) > 3 * error_of_ordinary_tokens(rowwise)


def test_kept_matmuls_stay_float_and_shared_inputs_are_quantised_once(layer):
    from onnx import helper

    weight, bias, x = layer
    model = _matmul_graph(weight, bias)
    second = helper.make_node("MatMul", ["x", "w"], ["xw2"], name="second")
    model.graph.node.append(second)
    model.graph.output.append(helper.make_tensor_value_info("xw2", 1, None))
    both = rowwise_int8(model)
    assert [n.op_type for n in both.graph.node].count("QuantizeLinear") == 1
    assert [n.op_type for n in both.graph.node].count("MatMulIntegerToFloat") == 2
    kept = rowwise_int8(_matmul_graph(weight, bias), keep={"linear"})
    assert [n.op_type for n in kept.graph.node] == ["MatMul", "Add"]
    np.testing.assert_allclose(_run(kept, x), x @ weight + bias, rtol=1e-5, atol=1e-5)


def test_4_bit_layers_are_read_back_as_their_exact_values():
    from onnx import TensorProto, helper, numpy_helper

    from engine.encoders import q4

    rng = np.random.default_rng(1)
    blocks = q4.quantise_rows(rng.standard_normal((M, K)).astype(np.float32))  # [out, in]
    packed, scales = q4.matmul_nbits_weights(blocks)
    node = helper.make_node("MatMulNBits", ["x", "b", "s"], ["y"], name="q4", domain="com.microsoft",
                            K=K, N=M, bits=4, block_size=q4.BLOCK)
    graph = helper.make_graph(
        [node], "q4", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", K])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(packed, "b"), numpy_helper.from_array(scales, "s")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    x = rng.standard_normal((5, K)).astype(np.float32)
    before = _run(model, x)
    after = dequantised_matmuls(model)
    assert [n.op_type for n in after.graph.node] == ["MatMul"]
    assert sorted(t.name for t in after.graph.initializer) == ["b_dequantised"]
    np.testing.assert_array_equal(numpy_helper.to_array(after.graph.initializer[0]),
                                  q4.dequantise_rows(blocks).T)
    np.testing.assert_allclose(_run(after, x), before, rtol=1e-5, atol=1e-5)


def test_schemes_keep_the_projections_they_name_in_float(tiny_registry, tmp_path):
    import onnx

    from engine.model_manifest import read_manifest
    from trainer.serving.quantise import attention_in_matmuls, build_int8, scheme

    folder = tiny_registry.models / "tiny"
    manifest = read_manifest(folder)
    qkv = attention_in_matmuls(folder / "model.onnx")
    assert len(qkv) == 6  # Q, K and V of the tiny model's two layers
    for scheme_id, float_matmuls in (("rowwise", 0), ("rowwise-qkv-fp32", 6)):
        dest = tmp_path / f"{scheme_id}.onnx"
        build_int8(scheme(scheme_id), manifest, folder, dest)
        nodes = onnx.load(str(dest)).graph.node
        weights = {t.name for t in onnx.load(str(dest)).graph.initializer}
        assert sum(n.op_type == "MatMul" and n.input[1] in weights for n in nodes) == float_matmuls
        assert sum(n.op_type == "MatMulIntegerToFloat" for n in nodes) == 12 - float_matmuls
