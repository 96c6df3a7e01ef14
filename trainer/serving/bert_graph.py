"""A BERT sentence encoder written straight to ONNX from numpy weights (no torch).

    >>> state = read_safetensors(folder / "model.safetensors")      # BertModel names
    >>> model = bert_graph(state, BertSizes.from_config(config), pooling="mean")
    >>> onnx.save(model, "model.onnx")     # same inputs/outputs as trainer.serving.export's graph

The graph is what `trainer.serving.export.export_onnx` traces from transformers' BertModel +
pooling + L2 normalisation: int64 `input_ids`, `attention_mask` [batch, seq] ->
`embedding` [batch, hidden], opset 17, erf GELU, absolute positions from 0, token type 0.
The build then takes its word-embedding lookup out (engine.encoders.migrate.split_folder)
like any export. Weights keep torch's Linear layout [out, in]; MatMuls take [in, out].
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.encoders.embedding_table import GRAPH_INPUT
from engine.encoders.q4 import BLOCK, matmul_nbits_weights
from engine.errors import ModelError

OPSET = 17
CONTRIB_DOMAIN = "com.microsoft"
# MatMulNBits' arithmetic: 0 (unset) computes in fp32 on the dequantised weights, as the
# fp32 graph does; 4 would quantise the activations to int8 (measured: max error 0.18 on
# values of 30 in a random 96 x 48 product, so it is not used).
Q4_ACCURACY_LEVEL = 0
_SAFETENSORS_DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I64": "<i8", "I32": "<i4"}


@dataclass(frozen=True)
class BertSizes:
    """The sizes of a BertModel, from its config.json."""

    hidden: int
    layers: int
    heads: int
    layer_norm_eps: float

    @classmethod
    def from_config(cls, config: dict) -> BertSizes:
        if config.get("hidden_act", "gelu") != "gelu" or config.get(
                "position_embedding_type", "absolute") != "absolute":
            raise ModelError("only BERT with erf GELU and absolute positions can be built "
                             "without torch")
        return cls(int(config["hidden_size"]), int(config["num_hidden_layers"]),
                   int(config["num_attention_heads"]), float(config.get("layer_norm_eps", 1e-12)))


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Tensors of a .safetensors file as float32/int numpy arrays, without safetensors.

    The format: u64 little-endian header length, a JSON header naming each tensor's
    dtype, shape and byte range, then the raw little-endian data.
    Raises:
        ModelError naming `path` when it is missing, truncated or not safetensors.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
        (length,) = struct.unpack_from("<Q", data, 0)
        header = json.loads(data[8:8 + length])
    except (OSError, struct.error, ValueError) as e:
        raise ModelError(f"{path} is not a readable safetensors file: {e}", path) from e
    body = memoryview(data)[8 + length:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _SAFETENSORS_DTYPES.get(info.get("dtype"))
        start, end = info["data_offsets"]
        if dtype is None or end > len(body) or start > end:
            raise ModelError(f"{path}: tensor {name!r} has dtype {info.get('dtype')} or a byte "
                             f"range outside the file", path)
        array = np.frombuffer(body[start:end], dtype=dtype).reshape(info["shape"])
        tensors[name] = array.astype(np.float32) if array.dtype.kind == "f" else array.copy()
    return tensors


def bert_graph(state: dict[str, np.ndarray], sizes: BertSizes, pooling: str = "mean",
               q4_linear: dict[str, np.ndarray] | None = None, *, body_only: bool = False):
    """The whole encoder (`input_ids`, `attention_mask` -> `embedding`) as an onnx.ModelProto.

    `state` holds BertModel's tensors by name ("embeddings.word_embeddings.weight", ...;
    a "bert." prefix is dropped). `q4_linear`: Linear weights by the same names as Q4_0
    rows (uint8 [out, in / 32 * 18], engine.encoders.q4) that the graph keeps 4-bit, as
    ONNX Runtime's MatMulNBits (fp32 arithmetic on the exact stored values); the others
    are fp32 MatMuls. `body_only`: the graph takes the word rows already looked up, as
    `token_embeddings` [batch, seq, hidden] beside `attention_mask` (the body + table
    format engine.encoders.migrate.split_folder makes), and `state` needs no word table.
    """
    from onnx import TensorProto, helper

    if pooling not in ("mean", "cls"):
        raise ModelError(f"unknown pooling {pooling!r}; use 'mean' or 'cls'")
    builder = _Builder({k.removeprefix("bert."): v for k, v in state.items()},
                       {k.removeprefix("bert."): v for k, v in (q4_linear or {}).items()})
    hidden = builder.embeddings(sizes, body_only)
    mask_bias = builder.attention_bias()
    for layer in range(sizes.layers):
        hidden = builder.layer(hidden, mask_bias, layer, sizes)
    builder.pool(hidden, pooling)
    mask = helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"])
    inputs = ([mask, helper.make_tensor_value_info(GRAPH_INPUT, TensorProto.FLOAT, ["batch", "seq", sizes.hidden])]
              if body_only else [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]), mask])
    graph = helper.make_graph(
        builder.nodes, "bert_sentence_encoder", inputs,
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", sizes.hidden])],
        initializer=builder.initializers)
    opsets = [helper.make_opsetid("", OPSET)]
    if q4_linear:
        opsets.append(helper.make_opsetid(CONTRIB_DOMAIN, 1))
    return helper.make_model(graph, opset_imports=opsets, producer_name="babelfind.trainer.bert_graph")


class _Builder:
    """Appends nodes and initializers; each method returns the name of its output."""

    def __init__(self, state: dict[str, np.ndarray], q4_linear: dict[str, np.ndarray]):
        self.state = state
        self.q4_linear = q4_linear
        self.nodes = []
        self.initializers = []
        self._count = 0

    def weight(self, name: str) -> np.ndarray:
        try:
            return self.state[name]
        except KeyError as e:
            raise ModelError(f"the BERT weights have no tensor {name!r}") from e

    def const(self, value, name: str | None = None, dtype=np.float32) -> str:
        from onnx import numpy_helper

        name = name or self._name("const")
        self.initializers.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def op(self, op_type: str, *inputs: str, **attrs) -> str:
        from onnx import helper

        out = self._name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=out, **attrs))
        return out

    def _name(self, stem: str) -> str:
        self._count += 1
        return f"{stem}_{self._count}"

    def linear(self, x: str, prefix: str) -> str:
        bias = self.const(self.weight(f"{prefix}.bias"), f"{prefix}.bias")
        blocks = self.q4_linear.get(f"{prefix}.weight")
        if blocks is not None:
            return self.op("Add", self.q4_matmul(x, blocks, prefix), bias)
        # x @ W^T + b: the initializer is [in, out] so int8 quantises per output channel
        w = self.const(self.weight(f"{prefix}.weight").T.copy(), f"{prefix}.weight_t")
        return self.op("Add", self.op("MatMul", x, w), bias)

    def q4_matmul(self, x: str, blocks: np.ndarray, prefix: str) -> str:
        """x @ W^T with W [out, in] kept as its Q4_0 values (MatMulNBits, zero point 8)."""
        packed, scales = matmul_nbits_weights(blocks)  # [out, in / 32, 16], [out * in / 32]
        out_features, in_features = packed.shape[0], packed.shape[1] * BLOCK
        b = self.const(packed, f"{prefix}.weight_q4", dtype=np.uint8)
        s = self.const(scales, f"{prefix}.weight_q4_scales")
        return self.op("MatMulNBits", x, b, s, domain=CONTRIB_DOMAIN, K=in_features,
                       N=out_features, bits=4, block_size=BLOCK, accuracy_level=Q4_ACCURACY_LEVEL)

    def layer_norm(self, x: str, prefix: str, eps: float) -> str:
        return self.op("LayerNormalization", x, self.const(self.weight(f"{prefix}.weight"), f"{prefix}.weight"),
                       self.const(self.weight(f"{prefix}.bias"), f"{prefix}.bias"), axis=-1, epsilon=eps)

    def embeddings(self, sizes: BertSizes, looked_up: bool = False) -> str:
        """word + token type 0 + position rows, LayerNorm: [batch, seq, hidden]; the word
        rows come in as `token_embeddings` when `looked_up`."""
        words = GRAPH_INPUT if looked_up else self.op(
            "Gather", self.const(self.weight("embeddings.word_embeddings.weight"),
                                 "embeddings.word_embeddings.weight"), "input_ids")
        seq = self.op("Slice", self.op("Shape", "attention_mask"), self.const([1], dtype=np.int64),
                      self.const([2], dtype=np.int64))  # [1]: the sequence length
        positions = self.op("Slice", self.const(self.weight("embeddings.position_embeddings.weight"),
                                                "embeddings.position_embeddings.weight"),
                            self.const([0], dtype=np.int64), seq, self.const([0], dtype=np.int64))
        token_type = self.const(self.weight("embeddings.token_type_embeddings.weight")[0],
                                "embeddings.token_type_0")
        summed = self.op("Add", self.op("Add", words, token_type), positions)  # torch's order
        return self.layer_norm(summed, "embeddings.LayerNorm", sizes.layer_norm_eps)

    def attention_bias(self) -> str:
        """[batch, 1, 1, seq]: 0 for real tokens, float32's lowest for padding (as transformers)."""
        mask = self.op("Cast", "attention_mask", to=1)  # FLOAT
        self.mask = mask
        padding = self.op("Sub", self.const(1.0), mask)
        bias = self.op("Mul", padding, self.const(np.finfo(np.float32).min))
        return self.op("Unsqueeze", bias, self.const([1, 2], dtype=np.int64))

    def heads(self, x: str, sizes: BertSizes, perm: list[int]) -> str:
        shape = self.const([0, 0, sizes.heads, sizes.hidden // sizes.heads], dtype=np.int64)
        return self.op("Transpose", self.op("Reshape", x, shape), perm=perm)

    def layer(self, x: str, bias: str, layer: int, sizes: BertSizes) -> str:
        p = f"encoder.layer.{layer}"
        q = self.heads(self.linear(x, f"{p}.attention.self.query"), sizes, [0, 2, 1, 3])
        k = self.heads(self.linear(x, f"{p}.attention.self.key"), sizes, [0, 2, 3, 1])
        v = self.heads(self.linear(x, f"{p}.attention.self.value"), sizes, [0, 2, 1, 3])
        scale = self.const((sizes.hidden // sizes.heads) ** -0.5)
        scores = self.op("Add", self.op("Mul", self.op("MatMul", q, k), scale), bias)
        context = self.op("MatMul", self.op("Softmax", scores, axis=-1), v)  # [b, heads, s, d]
        context = self.op("Reshape", self.op("Transpose", context, perm=[0, 2, 1, 3]),
                          self.const([0, 0, sizes.hidden], dtype=np.int64))
        attended = self.op("Add", self.linear(context, f"{p}.attention.output.dense"), x)
        x = self.layer_norm(attended, f"{p}.attention.output.LayerNorm", sizes.layer_norm_eps)
        inner = self.linear(x, f"{p}.intermediate.dense")
        # erf GELU as torch exports it, ending in a Mul (trainer.serving.quantise looks for it)
        erf = self.op("Erf", self.op("Div", inner, self.const(np.sqrt(2.0))))
        gelu = self.op("Mul", self.op("Mul", inner, self.op("Add", erf, self.const(1.0))), self.const(0.5))
        out = self.op("Add", self.linear(gelu, f"{p}.output.dense"), x)
        return self.layer_norm(out, f"{p}.output.LayerNorm", sizes.layer_norm_eps)

    def pool(self, hidden: str, pooling: str) -> str:
        """Masked mean (or the first token) over seq, then L2-normalised: `embedding`."""
        from onnx import helper

        if pooling == "cls":
            pooled = self.op("Gather", hidden, self.const(0, dtype=np.int64), axis=1)
        else:
            weights = self.op("Unsqueeze", self.mask, self.const([2], dtype=np.int64))  # [b, s, 1]
            axis = self.const([1], dtype=np.int64)
            summed = self.op("ReduceSum", self.op("Mul", hidden, weights), axis, keepdims=0)
            count = self.op("Clip", self.op("ReduceSum", weights, axis, keepdims=0), self.const(1e-9))
            pooled = self.op("Div", summed, count)
        norm = self.op("Max", self.op("ReduceL2", pooled, axes=[1], keepdims=1), self.const(1e-12))
        self.nodes.append(helper.make_node("Div", [pooled, norm], ["embedding"], name="l2_normalise"))
        return "embedding"
