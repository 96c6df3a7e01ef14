"""int8 MatMuls with one activation scale per token: a rewrite of an encoder graph.

    >>> model = rowwise_int8(dequantised_matmuls(onnx.load(path)), keep=())
    >>> onnx.save(model, dest)

ONNX Runtime's dynamic int8 (`quantize_dynamic`, DynamicQuantizeMatMul) scales a whole
batch's activations by one number. In BERT-style encoders a few tokens carry activations
five to fifteen times the others' (`<s>` and `</s>`: 33 against a median row maximum of
3.2 after the first layer of multilingual-e5-small), so one scale per tensor leaves the
ordinary tokens a handful of the 256 levels; that, not the int8 weights (mean cosine to
fp32 0.99989 with int8 weights alone), is what cost the dynamic scheme its Tatoeba points.
Here every token's row gets its own scale (its largest magnitude / 127), so each token
uses the whole range:

    x [..., K] -> rows [n, K]; s = max |row| / 127 per row
    q = QuantizeLinear(rows, s, 128, axis=0)            uint8, symmetric around 128
    y = MatMulIntegerToFloat(q, W int8 [K, M], s[:, None], w_scale [M], 128)
    y [..., M] <- y [n, M]; the bias Add that followed stays as it was

The row scale factors out of the integer product (y[i, j] = s_i w_j sum_k q_ik W_kj), so
the int8 GEMM stays one call; weights are int8 per output column, symmetric, with
`weight_levels` codes each side of zero: 127, or 63 where ONNX Runtime's kernels would
saturate full-range weights (engine.encoders.int8_kernels: x86-64 without VNNI). MatMuls
sharing an input (Q, K, V) share its quantisation. Activation x activation MatMuls
(attention scores) stay float. MatMulIntegerToFloat's bias input is not used: with a
per-row scale ONNX Runtime 1.32 dropped the bias in a whole graph (not in a one-node
graph), so the original Add stays.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from engine.encoders.int8_kernels import FULL_WEIGHT_LEVELS

MS_DOMAIN = "com.microsoft"
ZERO_POINT = 128  # uint8 code of 0: symmetric activations in u8 for the u8 x s8 kernels
LEVELS = 127  # activation codes on each side of the zero point
TINY_SCALE = 1e-8  # an all-zero row still divides by something


def dequantised_matmuls(model):
    """`model` with each 4-bit MatMulNBits (zero point 8, as engine.encoders.q4 packs) as a
    float MatMul of the same, exactly dequantised, weights [K, N]."""
    from onnx import helper, numpy_helper

    from engine.encoders.q4 import unpack_matmul_nbits

    inits = {t.name: t for t in model.graph.initializer}
    nodes, used = [], set()
    for node in model.graph.node:
        if node.op_type != "MatMulNBits":
            nodes.append(node)
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if attrs.get("bits") != 4 or len(node.input) > 3 and node.input[3]:
            raise ValueError(f"{node.name}: only 4-bit MatMulNBits without zero points are read")
        packed, scales = (numpy_helper.to_array(inits[name]) for name in node.input[1:3])
        weight = unpack_matmul_nbits(packed, scales).T.copy()  # [K, N]
        name = f"{node.input[1]}_dequantised"
        model.graph.initializer.append(numpy_helper.from_array(weight, name))
        nodes.append(helper.make_node("MatMul", [node.input[0], name], list(node.output), name=node.name))
        used.update(node.input[1:3])
    _replace_nodes(model, nodes)
    _drop_initializers(model, used)
    return model


def weight_matmul_groups(model) -> dict[str, list]:
    """{input tensor: [MatMul nodes with a weight initializer reading it]}, in graph order."""
    weights = {t.name for t in model.graph.initializer}
    groups: dict[str, list] = {}
    for node in model.graph.node:
        if node.op_type == "MatMul" and node.input[1] in weights:
            groups.setdefault(node.input[0], []).append(node)
    return groups


def rowwise_int8(model, keep: Collection[str] = (), weight_levels: int = FULL_WEIGHT_LEVELS):
    """`model` with its weight MatMuls (except the node names in `keep`) in int8 with one
    activation scale per row (the module docstring) and weights of `weight_levels` codes
    each side of zero; ModelProto, changed in place."""
    from onnx import helper

    if not any(op.domain == MS_DOMAIN for op in model.opset_import):
        model.opset_import.append(helper.make_opsetid(MS_DOMAIN, 1))
    rewrite = _Rewrite(model, weight_levels)
    for tensor, nodes in weight_matmul_groups(model).items():
        nodes = [n for n in nodes if n.name not in keep]
        if nodes:
            rewrite.quantise(tensor, nodes)
    return rewrite.finish()


class _Rewrite:
    """Collects the new nodes; `finish` puts each where its input is made."""

    def __init__(self, model, weight_levels: int):
        from onnx import numpy_helper

        self.model = model
        self.weight_levels = weight_levels
        self.weights = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
        self.after: dict[str, list] = {}  # tensor -> nodes that quantise it
        self.instead: dict[str, list] = {}  # MatMul name -> its int8 replacement
        self.consts: list = []
        self.replaced_weights: set[str] = set()
        self.zero_point = self._const("rowwise_zero_point", np.array(ZERO_POINT, np.uint8))
        self.inverse_levels = self._const("rowwise_inverse_levels", np.array(1 / LEVELS, np.float32))
        self.tiny = self._const("rowwise_tiny_scale", np.array(TINY_SCALE, np.float32))
        self.axis_1 = self._const("rowwise_axis_1", np.array([1], np.int64))
        self.first = self._const("rowwise_start", np.array([0], np.int64))
        self.last = self._const("rowwise_end", np.array([-1], np.int64))

    def quantise(self, tensor: str, nodes: list) -> None:
        from onnx import helper

        k = self.weights[nodes[0].input[1]].shape[0]
        p = f"{tensor}_rowwise"
        node = helper.make_node
        self.after[tensor] = [
            node("Reshape", [tensor, self._const(f"{p}_shape", np.array([-1, k], np.int64))], [f"{p}_rows"]),
            node("Abs", [f"{p}_rows"], [f"{p}_abs"]),
            node("ReduceMax", [f"{p}_abs"], [f"{p}_max"], axes=[1], keepdims=0),
            node("Mul", [f"{p}_max", self.inverse_levels], [f"{p}_raw_scale"]),
            node("Max", [f"{p}_raw_scale", self.tiny], [f"{p}_scale"]),
            # QuantizeLinear along an axis takes one zero point per scale
            node("Shape", [f"{p}_scale"], [f"{p}_count"]),
            node("Expand", [self.zero_point, f"{p}_count"], [f"{p}_zero_points"]),
            node("QuantizeLinear", [f"{p}_rows", f"{p}_scale", f"{p}_zero_points"], [f"{p}_q"], axis=0),
            node("Unsqueeze", [f"{p}_scale", self.axis_1], [f"{p}_row_scale"]),
            node("Shape", [tensor], [f"{p}_in_shape"]),
            node("Slice", [f"{p}_in_shape", self.first, self.last], [f"{p}_lead"]),
        ]
        for matmul in nodes:
            self.instead[matmul.name] = self._int8_matmul(matmul, p)

    def _int8_matmul(self, matmul, p: str) -> list:
        from onnx import helper

        weight = self.weights[matmul.input[1]]  # [K, M]
        levels = self.weight_levels
        scale = np.maximum(np.abs(weight).max(axis=0), TINY_SCALE) / levels  # per column
        codes = np.clip(np.rint(weight / scale), -levels, levels).astype(np.int8)
        m = f"{matmul.name}_rowwise"
        self.replaced_weights.add(matmul.input[1])
        return [
            helper.make_node("MatMulIntegerToFloat", [
                f"{p}_q", self._const(f"{m}_weight", codes),
                f"{p}_row_scale", self._const(f"{m}_weight_scale", scale.astype(np.float32)),
                self.zero_point], [f"{m}_rows"], domain=MS_DOMAIN),
            helper.make_node("Concat", [f"{p}_lead", self._const(f"{m}_width", np.array(
                [weight.shape[1]], np.int64))], [f"{m}_shape"], axis=0),
            helper.make_node("Reshape", [f"{m}_rows", f"{m}_shape"], list(matmul.output)),
        ]

    def _const(self, name: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        self.consts.append(numpy_helper.from_array(value, name))
        return name

    def finish(self):
        graph_inputs = [i.name for i in self.model.graph.input]
        nodes = [n for tensor in graph_inputs for n in self.after.pop(tensor, [])]
        for node in self.model.graph.node:
            nodes += self.instead.get(node.name, [node])
            for output in node.output:
                nodes += self.after.pop(output, [])
        for i, node in enumerate(nodes):
            if not node.name:
                node.name = f"rowwise_{i}_{node.op_type}"
        _replace_nodes(self.model, nodes)
        self.model.graph.initializer.extend(self.consts)
        _drop_initializers(self.model, self.replaced_weights)
        return self.model


def _replace_nodes(model, nodes: list) -> None:
    del model.graph.node[:]
    model.graph.node.extend(nodes)


def _drop_initializers(model, names: set[str]) -> None:
    """Removes the initializers in `names` that no node reads any more."""
    read = {name for node in model.graph.node for name in node.input}
    kept = [t for t in model.graph.initializer if t.name not in names or t.name in read]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)
