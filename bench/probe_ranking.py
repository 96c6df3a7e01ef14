"""Probes of ranking changes that are not in the product, through the real search of
bench_search's dev-set homes (fused, the default space): each swaps one function for the
run and reports top-1 / MRR@10 per setting, and the queries whose rank moved
(docs/benchmarks.md, "Large documents", "Pseudo-relevance feedback" and "A document
counted by several of its passages").

    BABELFIND_TEST_MODELS=<models> python bench/probe_ranking.py \
        --devsets english-doc xling manual5 mixed invoices --form sqrtlog --values 0 0.008 0.016
    BABELFIND_TEST_MODELS=<models> python bench/probe_ranking.py --form feedback --values 0 5:0.25 10:0.5

Long documents. A document is ranked by its best passage, and the best of n passages that
have nothing to do with a question still rises with n (the largest of n normal draws
grows as sqrt(2 ln n)): a changelog of 10,657 one-line entries has a line near most
questions. These forms change `DocumentContext.scores` (passage cosine with its
document's centroid mixed in) for a passage of a document of n passages, at each value g:

  sqrtlog  score - g * sqrt(2 ln n)                       (g in cosine units)
  disp     score - g * sqrt(2 ln n) * (1 - rho)            rho = |sum of D's vectors| / n
  ctxw     the centroid's weight grows with n: w = 0.2 + (g - 0.2) * min(1, ln n / ln 1000)

Hubs of the library itself (`csls`, values k:beta): a passage near many passages of other
documents (an overview chapter that names every topic) is near many questions too. As in
CSLS (Conneau et al., 2018) and the margin of LASER's mining, r(p) = the mean cosine of p
to its k nearest passages of other documents (every stored vector, exactly), and the
score loses beta * (r(p) - median r).

A document counted by several passages (`topm`, values m:a[:q]): each candidate's score
becomes (1 - a) s + a E, E the mean of its document's m best candidate scores, a document
with fewer candidates counted at the candidates' q-quantile for the rest (q 0.1).

Pseudo-relevance feedback (`feedback`, values m:alpha): the query vector (in the space
FAISS holds) moves toward the mean of its m best passages by corrected dense score among
FAISS's 100 nearest, q' = q + alpha * mean, re-normalised, and the search runs with q'.

The value 0 is the default search, always run first.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_search  # noqa: E402  (puts the checkout on sys.path)

import engine.library  # noqa: E402
from engine.index import document_context  # noqa: E402
from engine.search import dense_candidates  # noqa: E402

DEFAULT_WEIGHT = document_context.DocumentContextConfig().weight
FEEDBACK_POOL = 100
_default_scores = document_context.DocumentContext.scores
_default_run_search = engine.library.run_search
# The probe's current setting (value "0": the default search).
_setting = {"form": "sqrtlog", "g": 0.0, "m": 0, "alpha": 0.0, "beta": 0.0,
            "q": 0.1, "hub_ids": None, "hub_r": None, "hub_median": 0.0}


def _counts(context, documents: list[int]) -> np.ndarray:
    """Passages in each of `documents`, float64 [n] (1 for one not held)."""
    with context._lock:
        return np.array([context._counts.get(d, 1) for d in documents], np.float64)


def _spreads(context, documents: list[int]) -> np.ndarray:
    """1 - rho of each of `documents`, rho = |sum of its passage vectors| / passages."""
    with context._lock:
        return np.array([1.0 - np.linalg.norm(context._sums[d]) / context._counts[d] if d in context._sums else 0.0
                         for d in documents], np.float64)


def _size_handicapped_scores(self, ids, query, cosines):
    """DocumentContext.scores for the forms sqrtlog, disp and ctxw."""
    form, g = _setting["form"], _setting["g"]
    if g == 0.0:
        return _default_scores(self, ids, query, cosines)
    documents = self.documents_of(ids).tolist()
    counts = _counts(self, documents)
    if form == "ctxw":
        cosines = np.asarray(cosines, np.float32).ravel()
        weight = DEFAULT_WEIGHT + (g - DEFAULT_WEIGHT) * np.minimum(1.0, np.log(counts) / np.log(1000.0))
        return ((1 - weight) * cosines + weight * self.similarity(ids, query, cosines)).astype(np.float32)
    handicap = g * np.sqrt(2 * np.log(np.maximum(counts, 1)))
    if form == "disp":
        handicap *= _spreads(self, documents)
    return (_default_scores(self, ids, query, cosines) - handicap).astype(np.float32)


def _scores_with_document_evidence(self, ids, query, cosines):
    """DocumentContext.scores for the form topm."""
    scores = _default_scores(self, ids, query, cosines)
    m, a = _setting["m"], _setting["alpha"]
    if not (m and a) or len(scores) < 2:
        return scores
    documents = self.documents_of(ids)
    fill = float(np.quantile(scores, _setting["q"]))
    order = np.lexsort((-scores, documents))
    docs_sorted, scores_sorted = documents[order], scores[order]
    starts = np.flatnonzero(np.r_[True, docs_sorted[1:] != docs_sorted[:-1]])
    evidence = {}
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(order)
        best = list(scores_sorted[start:min(end, start + m)])
        best += [fill] * (m - len(best))
        evidence[int(docs_sorted[start])] = float(np.mean(best))
    of_document = np.array([evidence[int(d)] for d in documents], np.float32)
    return ((1 - a) * scores + a * of_document).astype(np.float32)


def _scores_without_library_hubs(self, ids, query, cosines):
    """DocumentContext.scores for the form csls."""
    scores = _default_scores(self, ids, query, cosines)
    if not _setting["beta"]:
        return scores
    known, median = _setting["hub_ids"], _setting["hub_median"]
    flat = np.asarray(ids, np.int64).ravel()
    at = np.clip(np.searchsorted(known, flat), 0, len(known) - 1)
    r = np.where(known[at] == flat, _setting["hub_r"][at], median)
    return (scores - _setting["beta"] * (r - median)).astype(np.float32)


def _neighbour_means(library, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(passage ids sorted, r: each one's mean cosine to its k nearest passages of other documents)."""
    ids, vectors, paths = bench_search.stored_passages(library)
    owners = np.unique(paths, return_inverse=True)[1]
    order = np.argsort(ids)
    ids, vectors, owners = ids[order], vectors[order].astype(np.float32), owners[order]
    r = np.empty(len(ids), np.float32)
    for start in range(0, len(ids), 1024):
        block = vectors[start:start + 1024] @ vectors.T
        block[owners[start:start + 1024, None] == owners[None, :]] = -2.0
        r[start:start + 1024] = np.partition(block, -k, axis=1)[:, -k:].mean(axis=1)
    return ids, r


def _run_search_with_feedback(indexes, parsed, vector, k, mode, config, **kwargs):
    """engine.library.run_search for the form feedback."""
    m, alpha = _setting["m"], _setting["alpha"]
    if vector is not None and m and alpha:
        live = indexes.live
        ids, cosines = dense_candidates(live, vector, FEEDBACK_POOL)
        scores = live.dense_scores(ids, cosines, vector, kwargs.get("language"))
        _, vectors = live.vectors(ids[np.argsort(-scores)[:m]])
        moved = vector + alpha * vectors.mean(axis=0)
        vector = (moved / np.linalg.norm(moved)).astype(np.float32)
    return _default_run_search(indexes, parsed, vector, k, mode, config, **kwargs)


def _install(form: str) -> None:
    """Swaps in the one function the form changes."""
    if form == "topm":
        document_context.DocumentContext.scores = _scores_with_document_evidence
    elif form == "feedback":
        engine.library.run_search = _run_search_with_feedback
    else:
        document_context.DocumentContext.scores = (_scores_without_library_hubs if form == "csls"
                                                   else _size_handicapped_scores)


def _set(form: str, value: str, library) -> None:
    """Puts the probe at one setting: a float g, m:alpha for feedback, k:beta for csls."""
    first, _, second = value.partition(":")
    if form == "csls":
        _setting["beta"] = float(second or 0)
        if _setting["beta"]:
            _setting["hub_ids"], _setting["hub_r"] = _neighbour_means(library, int(first))
            _setting["hub_median"] = float(np.median(_setting["hub_r"]))
    elif form in ("feedback", "topm"):
        alpha, _, q = second.partition(":")
        _setting.update(m=int(first), alpha=float(alpha or 0), q=float(q or 0.1))
    else:
        _setting.update(form=form, g=float(value))


def probe(devset: str, form: str, values: list[str]) -> None:
    library, _ = bench_search.open_home(devset, "filtered", bench_search.DEFAULT_MODEL)
    queries = bench_search.load_queries(devset)
    readings, default = [], None
    for value in values:
        _set(form, value, library)
        outcomes = bench_search.library_outcomes(library, queries, "fused")
        found = [o["rank"] for o in outcomes]
        summary = bench_search.summarise(found)
        readings.append(f"{value}: {summary['top1']:.3f} / {summary['mrr10']:.3f}")
        if default is None:
            default = found
        moved = [(q["query"][:60], was, now) for q, was, now in zip(queries, default, found) if was != now]
        if moved:
            print(f"  {devset} {form} {value} moved (query, default rank, rank): {moved}", flush=True)
    print(f"{devset} {form} | " + " | ".join(readings), flush=True)
    library.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devsets", nargs="+", default=["english-doc", "xling", "manual5", "mixed", "invoices"])
    parser.add_argument("--form", choices=["sqrtlog", "disp", "ctxw", "feedback", "csls", "topm"], default="sqrtlog")
    parser.add_argument("--values", nargs="+", default=["0", "0.008", "0.016"],
                        help="g for the size forms, m:alpha for feedback, k:beta for csls, m:a[:q] for topm")
    args = parser.parse_args(argv)
    if args.values[0] != "0":
        args.values.insert(0, "0")  # the default search first: what the others are compared with
    _install(args.form)
    for devset in args.devsets:
        probe(devset, args.form, args.values)
    return 0


if __name__ == "__main__":
    sys.exit(main())
