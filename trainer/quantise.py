"""fp16 and int8 variants of an exported encoder, each kept only within its quality bound.

    >>> info = make_int8_variant(manifest, folder, texts)
    >>> info["file"] or info["reason"]     # 'model.int8.onnx' or why it was refused

int8: dynamic quantisation of MatMul weights only, per output channel; the embedding
table (Gather), LayerNorm, Softmax, GELU and the pooling stay float. Kept when mean
cosine to fp32 >= 0.995 (on the parity set, whose worst sentence must stay >= 0.99, and
with Tatoeba data on all sentences of CHECK_LANGS) and the Tatoeba error moves by <= 0.5
point.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Sequence

import numpy as np

log = logging.getLogger(__name__)

INT8_MIN_MEAN_COSINE = 0.995
# 20 parity sentences are a small sample: the worst one must stay close too. all-MiniLM's
# int8 passed the mean at 0.9951 here (min 0.987) yet measured 0.9946 over 2,000 sentences.
INT8_MIN_WORST_COSINE = 0.99
INT8_MAX_TATOEBA_DELTA = 0.5  # percentage points of error
# Languages for the int8 Tatoeba check: several scripts, full 1000 pairs each.
CHECK_LANGS = ("deu", "fra", "rus", "cmn", "ara", "hin")


def _encode(manifest, folder: Path, filename: str, texts: Sequence[str]) -> np.ndarray:
    from trainer.serving_build import onnx_encode

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


def quantise_int8(src: Path, dest: Path, exclude: Sequence[str] = ()) -> Path:
    """Dynamic int8 quantisation of MatMul weights, per channel; other ops stay float."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        str(src), str(dest), op_types_to_quantize=["MatMul"], per_channel=True,
        weight_type=QuantType.QInt8, nodes_to_exclude=list(exclude),
        # weights only: activation x activation MatMuls (attention scores) stay float
        extra_options={"MatMulConstBOnly": True},
    )
    return dest


def sensitive_matmuls(model_path: Path) -> list[str]:
    """MatMul nodes feeding the FFN output projection of each layer (the largest
    activations in BERT-style models), which int8 handles worst."""
    import onnx

    model = onnx.load(str(model_path), load_external_data=False)
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


def make_int8_variant(manifest, folder: Path, texts: Sequence[str], *, tatoeba_dir=None) -> dict:
    """model.int8.onnx when it keeps quality; else {"file": None, "reason": ...}.

    Tries all MatMul weights first, then again with the FFN output projections in float.
    """
    filename = "model.int8.onnx"
    src = folder / manifest.variant_file("fp32")
    attempts = [("all MatMul weights", ()),
                ("MatMul weights except FFN output", tuple(sensitive_matmuls(src)))]
    reasons = []
    for label, exclude in attempts:
        quantise_int8(src, folder / filename, exclude)
        mean, worst = _mean_cosine(manifest, folder, filename, texts)
        info = {"file": filename, "scheme": f"dynamic per-channel int8, {label}",
                "mean_cosine": mean, "min_cosine": worst, "for": "cpu"}
        problem = None
        if mean < INT8_MIN_MEAN_COSINE:
            problem = f"{label}: mean cosine to fp32 {mean:.4f} < {INT8_MIN_MEAN_COSINE}"
        elif worst < INT8_MIN_WORST_COSINE:
            problem = f"{label}: worst cosine to fp32 {worst:.4f} < {INT8_MIN_WORST_COSINE}"
        elif tatoeba_dir is not None:
            check = _tatoeba_check(manifest, folder, filename, Path(tatoeba_dir))
            info["tatoeba"] = check
            problem = _tatoeba_problem(label, check)
        if problem is None:
            return info
        reasons.append(problem)
        log.info("int8 refused: %s", problem)
    (folder / filename).unlink(missing_ok=True)
    return {"file": None, "reason": "; ".join(reasons)}


def _tatoeba_problem(label: str, check: dict | None) -> str | None:
    """Why the Tatoeba check failed, or None when it passed (or had no data)."""
    if check is None:
        return None
    if check["mean_cosine"] < INT8_MIN_MEAN_COSINE:
        return (f"{label}: mean cosine to fp32 {check['mean_cosine']:.4f} < "
                f"{INT8_MIN_MEAN_COSINE} over {check['sentences']} Tatoeba sentences")
    if abs(check["delta"]) > INT8_MAX_TATOEBA_DELTA:
        return (f"{label}: Tatoeba error {check['int8']:.2f}% vs fp32 {check['fp32']:.2f}% "
                f"({check['delta']:+.2f} > {INT8_MAX_TATOEBA_DELTA} point)")
    return None


def _tatoeba_check(manifest, folder: Path, filename: str, tatoeba_dir: Path) -> dict | None:
    """fp32 vs int8 on CHECK_LANGS: Tatoeba error of each, and the cosine between them
    over every sentence (a far larger sample than the built-in parity set)."""
    from engine.eval_tatoeba import available_languages, load_pair, nearest_neighbour_error
    from engine.encoders.parity import cosine_rows
    from trainer.serving_build import file_encoder

    langs = [lang for lang in CHECK_LANGS if lang in available_languages(tatoeba_dir)]
    if not langs:
        return None
    encoders = {variant: file_encoder(folder / file, folder / manifest.tokenizer_file,
                                      manifest.dim, prefixes=manifest.prefixes,
                                      max_length=manifest.max_length, pad_id=manifest.pad_token_id,
                                      embeddings=manifest.embeddings)
                for variant, file in (("fp32", manifest.variant_file("fp32")), ("int8", filename))}
    errors, cosines = {"fp32": [], "int8": []}, []
    for lang in langs:
        sides = load_pair(tatoeba_dir, lang)
        # vectors[variant] = (xxx side [n, d], eng side [n, d])
        vectors = {v: [e.encode(side, kind="query") for side in sides] for v, e in encoders.items()}
        for variant, (other, english) in vectors.items():
            errors[variant].append(np.mean(nearest_neighbour_error(other, english)))
        cosines.extend(cosine_rows(np.concatenate(vectors["fp32"]),
                                   np.concatenate(vectors["int8"])).tolist())
    fp32, int8 = float(np.mean(errors["fp32"])), float(np.mean(errors["int8"]))
    return {"langs": langs, "fp32": fp32, "int8": int8, "delta": int8 - fp32,
            "mean_cosine": float(np.mean(cosines)), "sentences": len(cosines)}
