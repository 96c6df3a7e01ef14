"""Real multilingual-e5-small vectors for the vector-index benches, from the int8 gate's cache.

    python bench/real_vectors.py bench/out/int8_gate/multilingual-e5-small/fp32 bench/out/real-tatoeba
    # -> bench/out/real-tatoeba.npy (as encoded), bench/out/real-tatoeba-neutral.npy (centred per language)

bench/bench_int8_gate.py keeps the fp32 vectors of every Tatoeba sentence it encodes (each
language's sentences and their English sides, "query: " prefix) as float16 in one .npz per
language. This writes their distinct rows, shuffled with a fixed seed, once as encoded and
once with each language's own mean taken out (the English sides share one mean), the way a
library's language-neutral vectors are centred; bench/bench_compressed.py --vectors reads
either (its last 200 rows are the queries).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np


def _distinct_shuffled(vectors: np.ndarray) -> np.ndarray:
    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    _, first = np.unique(vectors.astype(np.float16), axis=0, return_index=True)
    vectors = vectors[np.sort(first)]
    return vectors[np.random.default_rng(0).permutation(len(vectors))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cache", type=Path, help="the gate's fp32 cache folder (one LANG.npz per language)")
    parser.add_argument("out", help="output prefix: OUT.npy and OUT-neutral.npy")
    args = parser.parse_args()
    others, english = [], []
    for path in sorted(args.cache.glob("*.npz")):
        with np.load(path) as data:
            if "other" in data:
                others.append(data["other"].astype(np.float32))
                english.append(data["eng"].astype(np.float32))
    if not others:
        raise SystemExit(f"no cached vectors in {args.cache}: run bench/bench_int8_gate.py --langs all first")
    english_mean = np.concatenate(english).mean(axis=0)
    plain = np.concatenate(others + english)
    centred = np.concatenate([o - o.mean(axis=0) for o in others] + [e - english_mean for e in english])
    for suffix, vectors in (("", plain), ("-neutral", centred)):
        vectors = _distinct_shuffled(vectors)
        np.save(f"{args.out}{suffix}.npy", vectors.astype(np.float32))
        print(f"{args.out}{suffix}.npy: {vectors.shape}")


if __name__ == "__main__":
    main()
