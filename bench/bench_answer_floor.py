"""Where the answer floor lies: the best passage's score for questions with and without
an answer, and what each floor would silence and keep.

    BABELFIND_TEST_MODELS=<models> python bench/bench_answer_floor.py --devsets english-doc manual5 mixed xling

For each dev set (bench_search's homes, the default space): each question's first shown
passage's corrected cosine (language-neutral, less the hubness penalty; engine.explain)
and keyword share, for the answerable questions, the unanswerable ones (no_answer.json)
and nonsense; the best corrected cosine that everyday reference sentences (the hubness
reference queries) reach in the same library; then, for each floor, the share of
unanswerable and nonsense questions left without a strong match and of right first
results kept strong (a keyword share of 0.3 or more keeps a match strong whatever its
cosine, as SearchConfig.keyword_answer_share does).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_search as bs  # noqa: E402

from engine.search import dense_candidates, hubness_corrected  # noqa: E402
from engine.search_config import SearchConfig  # noqa: E402

KEYWORD_SHARE = SearchConfig().keyword_answer_share


def first_passage(library, text: str) -> tuple[float | None, float, list[str]]:
    """(corrected cosine, keyword share, shown paths) of a query's first result."""
    results = library.search_results(text, k=10, explain=True)
    parts = results.hits[0].best.explanation if results.hits else None
    names = [bs._relative(h.path) for h in results.hits]
    if parts is None or parts.cosine is None:
        return None, 0.0, names
    return parts.cosine - parts.hubness, parts.keyword_share, names


def reference_best(library) -> np.ndarray:
    """The best corrected cosine each hubness reference query reaches in the library."""
    live = library.live
    live.ensure_corrections(library.encoder)
    vectors, languages = live.hubness_reference
    best = []
    for vector, language in zip(vectors, languages):
        ids, scores = dense_candidates(live, vector, 8)
        best.append(float(hubness_corrected(live, ids, scores, language).max()) if len(ids) else np.nan)
    return np.array(best)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devsets", nargs="+", default=["english-doc", "manual5", "mixed", "xling"])
    parser.add_argument("--floors", nargs="+", type=float, default=[0.50, 0.52, 0.53, 0.54])
    args = parser.parse_args(argv)
    for devset in args.devsets:
        library, _ = bs.open_home(devset, "filtered", bs.DEFAULT_MODEL, "neutral")
        try:
            answerable = []
            for item in bs.load_queries(devset):
                cosine, share, names = first_passage(library, item["query"])
                answerable.append((cosine, share, bs.shown_rank(names, item) == 1))
            unanswerable = [first_passage(library, q)[:2] for q in bs.load_no_answer(devset) + bs.nonsense_queries()]
            reference = reference_best(library)
        finally:
            library.close()
        a = np.array([c for c, _, _ in answerable if c is not None])
        u = np.array([c for c, _ in unanswerable if c is not None])
        print(f"### {devset}: {len(a)} answerable, {len(u)} unanswerable or nonsense")
        print(f"answerable p10/p50 {np.percentile(a, 10):.3f} / {np.percentile(a, 50):.3f}; "
              f"unanswerable p50/p90 {np.percentile(u, 50):.3f} / {np.percentile(u, 90):.3f}; "
              f"reference sentences' best p50/p90 {np.nanpercentile(reference, 50):.3f} / "
              f"{np.nanpercentile(reference, 90):.3f}")
        print("| floor | unanswerable with no strong match | right first results kept strong |")
        print("|---|---|---|")
        for floor in args.floors:
            silent = np.mean([c < floor and s < KEYWORD_SHARE for c, s in unanswerable if c is not None])
            kept = np.mean([c >= floor or s >= KEYWORD_SHARE for c, s, first in answerable if c is not None and first])
            print(f"| {floor:.2f} | {silent:.2f} | {kept:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
