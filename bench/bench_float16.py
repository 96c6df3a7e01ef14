"""Does storing vectors as float16 change what search finds? Exact top-k over float32
vectors against the same vectors rounded to float16 and re-normalised (as the store keeps
and reads them: engine.store.vector_blobs, LiveIndex.searchable), on real embeddings.

    BABELFIND_HOME=<home with the default models> python bench/bench_float16.py --passages 20000

Corpus: English Wikipedia sentences (corpus/wiki-en) and the PUD sentences of every PUD
language but English, encoded as passages by the active model; queries: the English PUD
sentences (their translations are in the corpus), encoded as queries. Reports recall@k,
top-1 agreement, the largest change of a cosine, and whether the translation's rank moved.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
DATA = Path(os.environ.get("BABELFIND_SHARED_DATA", "/work/shared/data"))


def corpus(limit: int) -> tuple[list[str], list[str], list[str], list[str]]:
    """(passages, their PUD ids or '', queries, their PUD ids)."""
    pud = sorted((DATA / "corpus" / "pud-parallel").glob("pud.*.tsv"))
    texts, ids = [], []
    queries, query_ids = [], []
    for path in pud:
        rows = [line.split("\t", 1) for line in path.read_text(encoding="utf-8").splitlines()]
        rows = [r for r in rows if len(r) == 2]
        if path.name == "pud.en.tsv":
            query_ids, queries = [r[0] for r in rows], [r[1] for r in rows]
        else:
            ids += [r[0] for r in rows]
            texts += [r[1] for r in rows]
    wiki = (DATA / "corpus" / "wiki-en" / "wiki1m_for_simcse.head.txt").read_text(encoding="utf-8").splitlines()
    wiki = [w for w in wiki if w.strip()][: max(0, limit - len(texts))]
    return texts + wiki, ids + [""] * len(wiki), queries, query_ids


def as_stored(vectors: np.ndarray) -> np.ndarray:
    rounded = vectors.astype(np.float16).astype(np.float32)
    return rounded / np.linalg.norm(rounded, axis=1, keepdims=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", type=int, default=20_000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--cache", type=Path, default=REPO / "bench" / "out" / "float16_vectors.npz")
    args = parser.parse_args()
    texts, text_ids, queries, query_ids = corpus(args.passages)
    if args.cache.is_file():
        cached = np.load(args.cache)
        vectors, query_vectors, model = cached["passages"], cached["queries"], str(cached["model"])
    else:
        from engine.models import load_encoder

        encoder = load_encoder()
        vectors = encoder.encode(texts, kind="passage")
        query_vectors = encoder.encode(queries, kind="query")
        model = f"{encoder.name} {encoder.variant}"
        args.cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(args.cache, passages=vectors, queries=query_vectors, model=model)
    exact = query_vectors @ vectors.T
    stored = query_vectors @ as_stored(vectors).T
    k = args.k
    top_exact = np.argsort(-exact, axis=1, kind="stable")[:, :k]
    top_stored = np.argsort(-stored, axis=1, kind="stable")[:, :k]
    recall = np.mean([len(set(a) & set(b)) / k for a, b in zip(top_exact.tolist(), top_stored.tolist())])
    translations: dict[str, list[int]] = {}
    for i, pid in enumerate(text_ids):
        if pid:
            translations.setdefault(pid, []).append(i)
    rank_moves = 0  # a translation whose rank among all passages differs between the two
    for q, pid in enumerate(query_ids):
        for t in translations.get(pid, []):
            rank_moves += int((exact[q] > exact[q, t]).sum() != (stored[q] > stored[q, t]).sum())
    report = {"model": model, "passages": len(texts), "queries": len(queries), "k": k,
              "recall_at_k": round(float(recall), 5),
              "top1_agreement": round(float(np.mean(top_exact[:, 0] == top_stored[:, 0])), 5),
              "max_cosine_change": float(np.abs(exact - stored).max()),
              "mean_cosine_change": float(np.abs(exact - stored).mean()),
              "translations": sum(map(len, translations.values())),
              "translation_rank_changes": rank_moves}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
