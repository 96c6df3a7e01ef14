"""fp16 and int8 variants of an exported encoder, each kept only within its quality bound.

    >>> manifest = make_variants(work, manifest, ("int8",), None, None, progress)
    >>> info = make_int8_variant(manifest, folder, texts, tatoeba_dir=GateData(tatoeba, sts))
    >>> info["gate"], info["reason"]        # ('refused', 'est +4.45 points Tatoeba error ...')

int8 quantises MatMul weights (per output channel) by one of the `SCHEMES`; the embedding
table (Gather), LayerNorm, Softmax, GELU and the pooling stay float. Activations are
scaled per token ("rowwise", trainer.serving.rowwise_int8), per tensor by ONNX Runtime
("dynamic"), or by calibrated ranges ("static"). A 4-bit model (MatMulNBits layers) is
read as its exact float values first. With benchmark data
(`GateData`) the int8 gate of `trainer.serving.int8_gate` decides: Tatoeba over every language and
STS-B against fp32. Without it only the cheap cosine check runs (mean cosine to fp32 >=
0.995 on the given texts, worst >= 0.99): the file is kept but its gate is "not run", so
`engine.models.choose_variant` does not serve it by default.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from engine.encoders import int8_kernels
from engine.encoders.migrate import optimise_cpu_variant
from engine.encoders.parity import PARITY_SENTENCES
from engine.errors import InputError
from engine.model_manifest import ModelManifest
from trainer.serving.file_encoder import file_encoder, onnx_encode

log = logging.getLogger(__name__)

Progress = Callable[[float, str], None]

INT8_MIN_MEAN_COSINE = 0.995
# 20 parity sentences are a small sample: the worst one must stay close too. all-MiniLM's
# int8 passed the mean at 0.9951 here (min 0.987) yet measured 0.9946 over 2,000 sentences.
INT8_MIN_WORST_COSINE = 0.99
INT8_FILE = "model.int8.onnx"
SATURATES_HERE = "not built: this CPU's int8 kernels saturate 8-bit weights (x86-64 without VNNI)"


@dataclass(frozen=True)
class Int8Scheme:
    """One way to make the int8 file; `id` keys the evidence file, so never reuse one.

    keep: MatMuls left in float: "" (none), "ffn_out" (`sensitive_matmuls`), "qkv"
    (`attention_in_matmuls`) or "layers:0,11" (every MatMul of those encoder layers).
    method: "dynamic" (ONNX Runtime's: activations scaled per tensor, per run), "rowwise"
    (trainer.serving.rowwise_int8: activations scaled per token, per run) or "static"
    (QDQ, scales calibrated once).
    """

    id: str
    label: str
    method: str = "dynamic"
    keep: str = ""
    reduce_range: bool = False  # 7-bit weights: no int16 saturation on CPUs without VNNI

    @property
    def weight_levels(self) -> int:
        return int8_kernels.SAFE_WEIGHT_LEVELS if self.reduce_range else int8_kernels.FULL_WEIGHT_LEVELS

    def exact_here(self) -> bool:
        """Whether this CPU's int8 kernels add this scheme's products without saturating
        (engine.encoders.int8_kernels): 7-bit weights everywhere, 8-bit ones with VNNI."""
        return int8_kernels.adds_exactly(self.weight_levels)


SCHEMES = {s.id: s for s in (
    Int8Scheme("rowwise", "all MatMul weights, activations scaled per token", method="rowwise"),
    Int8Scheme("rowwise-w7", "all MatMul weights in 7 bits, activations scaled per token",
               method="rowwise", reduce_range=True),
    Int8Scheme("rowwise-qkv-fp32", "MatMul weights except Q, K, V, activations scaled per token",
               method="rowwise", keep="qkv"),
    Int8Scheme("dynamic-pc", "all MatMul weights"),
    Int8Scheme("dynamic-pc-ffn-out-fp32", "MatMul weights except FFN output", keep="ffn_out"),
    Int8Scheme("dynamic-pc-rr", "all MatMul weights, 7-bit range", reduce_range=True),
    Int8Scheme("dynamic-pc-edge-layers-fp32", "MatMul weights except first and last layer",
               keep="layers:first,last"),
    Int8Scheme("static-qdq-pc", "static QDQ, MatMul weights and inputs, calibrated on PUD "
               "and Wikipedia", method="static"),
)}
# Fastest first (docs/benchmarks.md, "int8 gate"): tried in this order by
# `make_int8_variant` when no scheme is named, and preferred in it among passed evidence.
# Those whose products saturate on this CPU are skipped (`Int8Scheme.exact_here`).
DEFAULT_SCHEMES = ("rowwise", "rowwise-w7", "dynamic-pc", "rowwise-qkv-fp32", "dynamic-pc-ffn-out-fp32")


def usable_here(scheme_ids: Sequence[str] = DEFAULT_SCHEMES) -> tuple[str, ...]:
    """Those of `scheme_ids` whose products this CPU's int8 kernels add exactly."""
    return tuple(s for s in scheme_ids if scheme(s).exact_here())


def scheme(scheme_id: str) -> Int8Scheme:
    """The scheme called `scheme_id`; InputError naming the known ones otherwise."""
    try:
        return SCHEMES[scheme_id]
    except KeyError:
        raise InputError(f"unknown int8 scheme {scheme_id!r}; choose one of "
                         f"{', '.join(SCHEMES)}") from None


def _encode(manifest, folder: Path, filename: str, texts: Sequence[str]) -> np.ndarray:
    return onnx_encode(folder / filename, folder / manifest.tokenizer_file, manifest.dim, texts,
                       prefix=manifest.prefixes.get("passage", ""),
                       max_length=manifest.max_length, pad_id=manifest.pad_token_id,
                       embeddings=manifest.embeddings)


def _mean_cosine(manifest, folder: Path, filename: str, texts: Sequence[str]) -> tuple[float, float]:
    from engine.encoders.parity import cosine_rows

    reference = _encode(manifest, folder, manifest.variant_file("fp32"), texts)
    cos = cosine_rows(reference, _encode(manifest, folder, filename, texts))
    return float(cos.mean()), float(cos.min())


def make_fp16_variant(manifest, folder: Path, texts: Sequence[str], *, tatoeba_dir=None) -> dict:
    """model.fp16.onnx for the CUDA provider: fp16 weights and compute, fp32 inputs/outputs."""
    import onnx
    from onnxruntime.transformers.float16 import convert_float_to_float16

    filename = "model.fp16.onnx"
    try:
        model = onnx.load(str(folder / manifest.variant_file("fp32")))
        # keep_io_types: callers keep feeding int64 ids and reading float32 vectors
        onnx.save(convert_float_to_float16(model, keep_io_types=True), str(folder / filename))
    except Exception as e:  # converter errors come in many types
        log.warning("fp16 conversion failed: %s", e)
        return {"file": None, "reason": f"fp16 conversion failed: {e}"}
    info = {"file": filename, "for": "cuda"}
    try:  # the CPU provider runs fp16 slowly but well enough to measure the quality
        mean, worst = _mean_cosine(manifest, folder, filename, texts)
        info |= {"mean_cosine": mean, "min_cosine": worst}
    except Exception as e:  # noqa: BLE001 - a CPU without fp16 kernels is not an error
        info["checked"] = f"not checked on CPU: {e}"
    return info


def quantise_int8(src: Path, dest: Path, exclude: Sequence[str] = (), *,
                  reduce_range: bool = False) -> Path:
    """Dynamic int8 quantisation of MatMul weights, per channel; other ops stay float."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        str(src), str(dest), op_types_to_quantize=["MatMul"], per_channel=True,
        reduce_range=reduce_range, weight_type=QuantType.QInt8, nodes_to_exclude=list(exclude),
        # weights only: activation x activation MatMuls (attention scores) stay float
        extra_options={"MatMulConstBOnly": True},
    )
    return dest


def quantise_static_int8(src: Path, dest: Path, batches: Sequence[dict],
                         exclude: Sequence[str] = ()) -> Path:
    """Static QDQ int8: per-channel MatMul weights, and the MatMul inputs scaled by ranges
    seen on `batches` (feeds of int64 input_ids / attention_mask) with MinMax calibration."""
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat,
                                          QuantType, quantize_static)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self._feeds = iter(batches)

        def get_next(self):
            return next(self._feeds, None)

    quantize_static(
        str(src), str(dest), Reader(), quant_format=QuantFormat.QDQ,
        op_types_to_quantize=["MatMul"], per_channel=True, activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax,
        # attention scores (activation x activation) stay float, as in the dynamic schemes
        nodes_to_exclude=[*exclude, *activation_matmuls(src)],
    )
    return dest


def calibration_batches(manifest, folder: Path, texts: Sequence[str], batch: int = 16) -> list[dict]:
    """Encoder feeds for static calibration: `texts` with the model's prefixes (half query,
    half passage, as served), tokenised and padded per batch of similar length."""
    encoder = file_encoder(folder / manifest.variant_file("fp32"), folder / manifest.tokenizer_file,
                           manifest.dim, prefixes=manifest.prefixes,
                           max_length=manifest.max_length, pad_id=manifest.pad_token_id,
                           embeddings=manifest.embeddings)
    half = len(texts) // 2
    ids = encoder.tokenize(list(texts[:half]), "query") + encoder.tokenize(list(texts[half:]), "passage")
    ids.sort(key=len)
    feeds = []
    for start in range(0, len(ids), batch):
        rows = ids[start:start + batch]
        width = max(len(r) for r in rows)
        input_ids = np.full((len(rows), width), manifest.pad_token_id, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for i, row in enumerate(rows):
            input_ids[i, :len(row)], mask[i, :len(row)] = row, 1
        feeds.append({"input_ids": input_ids, "attention_mask": mask})
    return feeds


def _load_graph(model_path: Path):
    import onnx

    return onnx.load(str(model_path), load_external_data=False)


def activation_matmuls(model_path: Path) -> list[str]:
    """MatMul nodes whose second input is computed, not a weight (attention scores)."""
    model = _load_graph(model_path)
    weights = {t.name for t in model.graph.initializer}
    return [n.name for n in model.graph.node if n.op_type == "MatMul" and n.input[1] not in weights]


def sensitive_matmuls(model_path: Path) -> list[str]:
    """MatMul nodes feeding the FFN output projection of each layer (the largest
    activations in BERT-style models), which int8 handles worst."""
    model = _load_graph(model_path)
    producers = {out: node for node in model.graph.node for out in node.output}
    names = []
    for node in model.graph.node:
        if node.op_type != "MatMul":
            continue
        source = producers.get(node.input[0])
        # FFN down-projection: its input comes out of the GELU (Mul after Erf)
        if source is not None and source.op_type in ("Mul", "Gelu", "FastGelu"):
            names.append(node.name)
    return names


def attention_in_matmuls(model_path: Path) -> list[str]:
    """The Q, K and V projections: weight MatMuls whose input feeds three or more of them."""
    from trainer.serving.rowwise_int8 import weight_matmul_groups

    groups = weight_matmul_groups(_load_graph(model_path)).values()
    return [node.name for nodes in groups if len(nodes) >= 3 for node in nodes]


def layer_matmuls(model_path: Path, which: str) -> list[str]:
    """MatMul nodes of the encoder layers named in `which` ("first,last" or "0,11")."""
    import re

    by_layer: dict[int, list[str]] = {}
    for node in _load_graph(model_path).graph.node:
        match = re.search(r"/layer\.(\d+)/", node.name)
        if node.op_type == "MatMul" and match:
            by_layer.setdefault(int(match[1]), []).append(node.name)
    if not by_layer:
        raise InputError(f"{model_path}: no encoder layers found in the MatMul names")
    aliases = {"first": min(by_layer), "last": max(by_layer)}
    layers = {aliases[w] if w in aliases else int(w) for w in which.split(",")}
    return [name for layer in sorted(layers) for name in by_layer.get(layer, [])]


def kept_in_float(int8_scheme: Int8Scheme, model_path: Path) -> list[str]:
    """The MatMul node names `int8_scheme` leaves in float."""
    if not int8_scheme.keep:
        return []
    if int8_scheme.keep == "ffn_out":
        return sensitive_matmuls(model_path)
    if int8_scheme.keep == "qkv":
        return attention_in_matmuls(model_path)
    if int8_scheme.keep.startswith("layers:"):
        return layer_matmuls(model_path, int8_scheme.keep.removeprefix("layers:"))
    raise InputError(f"int8 scheme {int8_scheme.id}: unknown keep {int8_scheme.keep!r}")


def build_int8(int8_scheme: Int8Scheme, manifest, folder: Path, dest: Path,
               calibration_texts: Sequence[str] = ()) -> Path:
    """Writes `dest`, the fp32 model of `folder` quantised by `int8_scheme` (4-bit
    MatMulNBits layers are read as their exact float values first)."""
    if int8_scheme.method == "static" and not calibration_texts:
        raise InputError(f"int8 scheme {int8_scheme.id} needs calibration sentences")
    with _float_matmul_graph(folder / manifest.variant_file("fp32"), dest) as src:
        exclude = kept_in_float(int8_scheme, src)
        if int8_scheme.method == "dynamic":
            return quantise_int8(src, dest, exclude, reduce_range=int8_scheme.reduce_range)
        if int8_scheme.method == "rowwise":
            return quantise_rowwise_int8(src, dest, exclude, int8_scheme.weight_levels)
        batches = calibration_batches(manifest, folder, calibration_texts)
        return quantise_static_int8(src, dest, batches, exclude)


def quantise_rowwise_int8(src: Path, dest: Path, exclude: Sequence[str] = (),
                          weight_levels: int = int8_kernels.FULL_WEIGHT_LEVELS) -> Path:
    """int8 MatMul weights with activations scaled per token (trainer.serving.rowwise_int8)."""
    import onnx

    from trainer.serving.rowwise_int8 import rowwise_int8

    onnx.save(rowwise_int8(onnx.load(str(src)), keep=set(exclude), weight_levels=weight_levels), str(dest))
    return dest


@contextmanager
def _float_matmul_graph(src: Path, dest: Path):
    """`src`, or when it has 4-bit MatMulNBits layers a scratch copy beside `dest` with
    them as float MatMuls (the quantisers read float weights); removed afterwards."""
    import onnx

    from trainer.serving.rowwise_int8 import dequantised_matmuls

    model = onnx.load(str(src))
    if not any(node.op_type == "MatMulNBits" for node in model.graph.node):
        yield src
        return
    scratch = dest.with_name(dest.name + ".float-matmuls.tmp")
    try:
        onnx.save(dequantised_matmuls(model), str(scratch))
        yield scratch
    finally:
        scratch.unlink(missing_ok=True)


def make_int8_variant(manifest, folder: Path, texts: Sequence[str], *, tatoeba_dir=None,
                      schemes: Sequence[str] | None = None) -> dict:
    """model.int8.onnx by the first of `schemes` that passes; else {"file": None, "reason"}.

    Args:
        texts: sentences for the cosine check (and the calibration of static schemes).
        tatoeba_dir: a `GateData`, or a Tatoeba folder (STS-B looked for beside it): the
            int8 gate decides and its evidence is recorded. None: only the cosine check
            runs and the variant's gate is "not run" (not served unless asked for).
    """
    from trainer.serving.int8_gate import NOT_RUN, GateData

    data = tatoeba_dir if isinstance(tatoeba_dir, GateData) or tatoeba_dir is None \
        else GateData.beside(Path(tatoeba_dir))
    dest, reference, reasons, attempts = folder / INT8_FILE, None, [], []
    for scheme_id in schemes or DEFAULT_SCHEMES:
        int8_scheme = scheme(scheme_id)
        if not int8_scheme.exact_here():
            reasons.append(f"{int8_scheme.label}: {SATURATES_HERE}")
            continue
        build_int8(int8_scheme, manifest, folder, dest, texts)
        mean, worst = _mean_cosine(manifest, folder, INT8_FILE, texts)
        info = {"file": INT8_FILE, "for": "cpu", "scheme": int8_scheme.id,
                "scheme_label": f"{int8_scheme.method} int8, {int8_scheme.label}",
                "weight_levels": int8_scheme.weight_levels, "mean_cosine": mean, "min_cosine": worst}
        if data is None:
            problem = _cosine_problem(int8_scheme.label, mean, worst)
            if problem is None:
                return info | {"gate": NOT_RUN, "reason": "no benchmark data when it was built; "
                                                          "served only when asked for (--variant int8)"}
        else:
            reference = reference or _measure(manifest, folder, manifest.variant_file("fp32"), data)
            info |= _gate(manifest, folder, data, reference)
            if info["gate"] == "passed":  # with why the faster schemes before it were not
                return info | ({"refused_before": [{"scheme": a["scheme"], "reason": a["reason"]}
                                                   for a in attempts]} if attempts else {})
            problem = f"{int8_scheme.label}: {info['reason']}"
            attempts.append(info | {"file": None})
        reasons.append(problem)
        log.info("int8 refused: %s", problem)
    dest.unlink(missing_ok=True)
    refused = {"file": None, "reason": "; ".join(reasons)}
    # the gate's verdict of the last scheme tried, and every attempt's evidence
    return refused | ({"gate": attempts[-1]["gate"], "attempts": attempts} if attempts else {})


def _cosine_problem(label: str, mean: float, worst: float) -> str | None:
    if mean < INT8_MIN_MEAN_COSINE:
        return f"{label}: mean cosine to fp32 {mean:.4f} < {INT8_MIN_MEAN_COSINE}"
    if worst < INT8_MIN_WORST_COSINE:
        return f"{label}: worst cosine to fp32 {worst:.4f} < {INT8_MIN_WORST_COSINE}"
    return None


def _measure(manifest, folder: Path, filename: str, data):
    from trainer.serving.int8_gate import measure_quality
    encoder = file_encoder(folder / filename, folder / manifest.tokenizer_file, manifest.dim,
                           prefixes=manifest.prefixes, max_length=manifest.max_length,
                           pad_id=manifest.pad_token_id, embeddings=manifest.embeddings)
    return measure_quality(encoder, data)


def _gate(manifest, folder: Path, data, reference) -> dict:
    """The gate's evidence record for the int8 file now in `folder` against `reference`
    (fp32's (Quality, Tatoeba vectors)), with the cosine over every Tatoeba sentence."""
    from trainer.serving.int8_gate import evidence_record, judge_int8, mean_cosine

    fp32, fp32_vectors = reference
    int8, vectors = _measure(manifest, folder, INT8_FILE, data)
    verdict = judge_int8(fp32, int8, min_languages=data.min_languages)
    record = evidence_record(fp32, int8, verdict, min_languages=data.min_languages)
    record["tatoeba"]["mean_cosine"], record["tatoeba"]["min_cosine"] = mean_cosine(fp32_vectors, vectors)
    return record


def make_variants(work: Path, manifest: ModelManifest, variants: Sequence[str], quality_texts,
                  tatoeba_dir, progress: Progress) -> ModelManifest:
    """Adds the fp16/int8 `variants` (each kept only within its quality bound), then saves
    the CPU variant optimised; progress(fraction of this step, message)."""
    texts = list(quality_texts or PARITY_SENTENCES)
    for i, variant in enumerate(variants):
        progress(i / max(1, len(variants)), f"making the {variant} variant")
        make = {"fp16": make_fp16_variant, "int8": make_int8_variant}.get(variant)
        if make is None:
            raise InputError(f"unknown variant {variant!r}; use fp16 or int8")
        info = make(manifest, work, texts, tatoeba_dir=tatoeba_dir)
        manifest = replace(manifest, variants=manifest.variants | {variant: info})
    return optimise_cpu_variant(work, manifest)
