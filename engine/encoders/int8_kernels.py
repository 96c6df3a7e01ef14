"""Whether ONNX Runtime's int8 matrix products on this CPU are exact for full-range weights.

    >>> if pair_sums_saturate():        # x86-64 without VNNI
    ...     weight_levels = SAFE_WEIGHT_LEVELS

ONNX Runtime multiplies uint8 activations by int8 weights. On x86-64 CPUs without VNNI
(AVX2, AVX-512 without VNNI) its kernels use vpmaddubsw, which adds each pair of
products into a signed 16-bit lane: 2 x 255 x 127 = 64,770 does not fit in 32,767, so
the sum saturates wherever large activation codes meet large weights. A tiny encoder's
int8 vectors fell to a mean cosine of 0.968 against fp32 on such a CPU, where a VNNI CPU
(vpdpbusd adds in 32 bits) keeps them above 0.995. Weights of at most 63 levels each
side (2 x 255 x 63 = 32,130) never saturate, on any CPU.

CPU flags name the hardware, not the kernel ONNX Runtime picks, and their names differ
by operating system; so `pair_sums_saturate` asks ONNX Runtime itself: one product that a
saturating kernel gets wrong, compared with the exact sum. The probe graph ships as
resources/models/int8_probe.onnx (written by `probe_model_bytes`; a test keeps the two
equal), so that serving never imports the onnx package (a quarter of a second).
"""

from __future__ import annotations

import functools
import logging

import numpy as np

log = logging.getLogger(__name__)

FULL_WEIGHT_LEVELS = 127  # int8 weights use -127..127
SAFE_WEIGHT_LEVELS = 63  # 7-bit weights: a pair of u8 x s8 products fits in int16
PROBE_FILE = "int8_probe.onnx"
_ZERO_POINT = 128  # activations as the int8 graphs store them: uint8 around 128
_ROWS, _DEPTH, _COLUMNS = 4, 64, 8  # a depth long enough for the kernels' blocked inner loop


@functools.cache
def pair_sums_saturate() -> bool:
    """True when ONNX Runtime's u8 x s8 product on this CPU adds pairs of products in
    16 bits, so that weights of `FULL_WEIGHT_LEVELS` give wrong sums (cached per process).
    A missing or unreadable probe file counts as saturating: 7-bit weights are right
    everywhere."""
    import onnxruntime as ort

    from engine.resources import resources_dir

    activations = np.full((_ROWS, _DEPTH), 255, np.uint8)
    exact = (activations.astype(np.int64) - _ZERO_POINT) @ _probe_weights().astype(np.int64)
    try:
        options = ort.SessionOptions()
        options.log_severity_level = 3
        session = ort.InferenceSession(str(resources_dir() / "models" / PROBE_FILE), options,
                                       providers=["CPUExecutionProvider"])
        product = session.run(None, {"a": activations})[0]
    except Exception as e:  # a damaged install: take the choice that is exact everywhere
        log.warning("int8 kernel probe failed (%s); int8 weights limited to 7 bits", e)
        return True
    return not np.array_equal(product, exact)


def adds_exactly(weight_levels: int) -> bool:
    """Whether this CPU's int8 kernels add products with weights of `weight_levels` codes
    each side of zero without saturating: 7-bit weights everywhere, 8-bit ones where the
    pairs of products are added in 32 bits (VNNI, ARM)."""
    return weight_levels <= SAFE_WEIGHT_LEVELS or not pair_sums_saturate()


def weight_levels_for_this_cpu() -> int:
    """The most weight levels each side of zero that this CPU's int8 kernels add exactly."""
    return SAFE_WEIGHT_LEVELS if pair_sums_saturate() else FULL_WEIGHT_LEVELS


def probe_model_bytes() -> bytes:
    """The probe: MatMulInteger of a uint8 input `a` [4, 64] (zero point 128) by full-range
    int8 weights held in the file (needs the onnx package)."""
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["a", "w", "a_zero_point"], ["y"])], "int8_probe",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [_ROWS, _DEPTH])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [_ROWS, _COLUMNS])],
        [numpy_helper.from_array(_probe_weights(), "w"),
         numpy_helper.from_array(np.array(_ZERO_POINT, np.uint8), "a_zero_point")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="babelfind")
    model.ir_version = 8  # readable by every ONNX Runtime the project supports
    return model.SerializeToString()


def _probe_weights() -> np.ndarray:
    return np.full((_DEPTH, _COLUMNS), FULL_WEIGHT_LEVELS, np.int8)
