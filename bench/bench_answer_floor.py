"""Where the answer floor lies: the best passage's score for questions with and without
an answer, and what each floor would silence and keep.

    BABELFIND_TEST_MODELS=<models> python bench/bench_answer_floor.py --devsets english-doc manual5 mixed xling

For each dev set (bench_search's homes, the default space): each question's first shown
passage's corrected cosine (language-neutral, its document's context mixed in, less the
hubness penalty: LiveIndex.dense_scores)
and keyword share, for the answerable questions, the unanswerable ones (no_answer.json)
and nonsense; the best corrected cosine that everyday reference sentences (the hubness
reference queries) reach in the same library; then, for each floor, the share of
unanswerable and nonsense questions left without a strong match and of right first
results kept strong (a keyword share of 0.3 or more keeps a match strong whatever its
cosine, as SearchConfig.keyword_answer_share does).

`--dump features.json` also writes, per question, what else a floor could read: the
query's mean and spread of corrected cosines over the library (the z baseline), its 10th
and 30th best dense candidates, and the best that the library's reference sentences of
the query's language reach; `--rules features.json` compares floors on those signals,
each threshold chosen on the other dev sets and scored on the one left out.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_search as bs  # noqa: E402

from engine.index.fusion import score_baseline  # noqa: E402
from engine.search import dense_candidates, reference_bests  # noqa: E402
from engine.search_config import SearchConfig  # noqa: E402

KEYWORD_SHARE = SearchConfig().keyword_answer_share


def first_passage(library, text: str) -> tuple[float | None, float, list[str]]:
    """(corrected cosine, keyword share, shown paths) of a query's first result: the dense
    score search ranks its first passage by (LiveIndex.dense_scores)."""
    results = library.search_results(text, k=10)
    best = results.hits[0].best if results.hits else None
    names = [bs._relative(h.path) for h in results.hits]
    if best is None or best.cosine is None:
        return None, 0.0, names
    return best.cosine, best.keyword_score, names


def reference_best(library, per_language: bool = False):
    """The best corrected cosine each hubness reference query reaches in the library; with
    `per_language`, a dictionary of those bests by the reference query's language."""
    live = library.live
    live.ensure_corrections(library.encoder)
    best = reference_bests(live)
    if not per_language:
        return best
    by_language: dict[str, list[float]] = {}
    for value, language in zip(best.tolist(), live.hubness_reference[1]):
        by_language.setdefault(language, []).append(value)
    return by_language


def dense_profile(library, text: str) -> dict:
    """The query's corrected cosines as the search sees them: its mean and spread over the
    library (the z baseline) and its 1st, 10th and 30th best dense candidates."""
    live = library.live
    _, vector, language = library.query_vector(text)
    baseline = score_baseline(live, vector, language)
    ids, scores = dense_candidates(live, vector, 64)
    ranked = np.sort(live.dense_scores(ids, scores, vector, language))[::-1]
    at = lambda n: float(ranked[min(n, len(ranked)) - 1])  # noqa: E731
    return {"language": language, "mean": baseline.mean, "std": baseline.std,
            "best": at(1), "tenth": at(10), "thirtieth": at(30)}


def dump(devsets: list[str]) -> list[dict]:
    """One row per question of every dev set: its kind, whether its answer is first, and
    every signal a floor could read."""
    rows = []
    for devset in devsets:
        library, _ = bs.open_home(devset, "filtered", bs.DEFAULT_MODEL, "neutral")
        try:
            reference = reference_best(library, per_language=True)
            everyone = [v for values in reference.values() for v in values]
            asked = [(item["query"], "answerable", item) for item in bs.load_queries(devset)]
            asked += [(q, "unanswerable", None) for q in bs.load_no_answer(devset)]
            asked += [(q, "nonsense", None) for q in bs.nonsense_queries()]
            for text, kind, item in asked:
                cosine, share, names = first_passage(library, text)
                profile = dense_profile(library, text)
                own = reference.get(profile["language"], everyone)
                rows.append({"devset": devset, "query": text, "kind": kind,
                             "right_first": bool(item and bs.shown_rank(names, item) == 1),
                             "first": cosine, "share": share, **profile,
                             "reference_p50": float(np.nanpercentile(own, 50)),
                             "reference_p90": float(np.nanpercentile(own, 90)),
                             "reference_max": float(np.nanmax(own))})
        finally:
            library.close()
    return rows


# Signals a floor could read, each from one row of dump(); a question is left without a
# strong match when one of its rule's signals is under its threshold and no passage holds
# its words. The last rule is what the engine does (SearchConfig.answer_floor and
# answer_margin): the floor, or not standing above the reference sentences' level.
SIGNALS = {
    "best": lambda r: r["best"],
    "best - mean": lambda r: r["best"] - r["mean"],
    "z of the best": lambda r: (r["best"] - r["mean"]) / r["std"],
    "best - 10th": lambda r: r["best"] - r["tenth"],
    "best - 30th": lambda r: r["best"] - r["thirtieth"],
    "best - reference p90": lambda r: r["best"] - r["reference_p90"],
    "best - reference max": lambda r: r["best"] - r["reference_max"],
}
RULES = {name: (name,) for name in SIGNALS} | {"best, or best - reference p90": ("best", "best - reference p90")}


def _keeping_all(rows: list[dict], signal) -> float:
    """The highest threshold that keeps every right first result of `rows` strong."""
    kept = [signal(r) for r in rows if r["kind"] == "answerable" and r["right_first"] and r["share"] < KEYWORD_SHARE]
    return min(kept) if kept else float("inf")


def _silenced(rows: list[dict], signals: tuple[str, ...], thresholds: list[float], kind: str) -> list[bool]:
    """Whether each question of `kind` in `rows` is left without a strong match."""
    def silent(r):
        return r["share"] < KEYWORD_SHARE and any(SIGNALS[s](r) < t for s, t in zip(signals, thresholds))
    if kind == "answerable":
        return [silent(r) for r in rows if r["kind"] == kind and r["right_first"]]
    return [silent(r) for r in rows if r["kind"] == kind]


def rules(rows: list[dict]) -> None:
    """Each rule's thresholds fixed on all dev sets but one (the highest that keep every
    right first result there strong), then read on the one left out: unanswerable
    questions left silent / right first results kept strong; nonsense apart."""
    devsets = sorted({r["devset"] for r in rows})
    print("| rule | " + " | ".join(devsets) + " | all: unanswerable silent / answers kept | nonsense silent |")
    print("|---|" + "---|" * (len(devsets) + 2))
    for name, signals in RULES.items():
        cells, totals = [], {"unanswerable": [], "answerable": [], "nonsense": []}
        for held_out in devsets:
            train = [r for r in rows if r["devset"] != held_out]
            thresholds = [_keeping_all(train, SIGNALS[s]) for s in signals]
            test = [r for r in rows if r["devset"] == held_out]
            read = {kind: _silenced(test, signals, thresholds, kind) for kind in totals}
            for kind, values in read.items():
                totals[kind] += values
            silent = f"{np.mean(read['unanswerable']):.2f}" if read["unanswerable"] else "-"
            cells.append(f"{silent} / {1 - np.mean(read['answerable']):.2f}")
        print(f"| {name} | " + " | ".join(cells) + f" | {np.mean(totals['unanswerable']):.3f} / "
              f"{1 - np.mean(totals['answerable']):.3f} | {np.mean(totals['nonsense']):.2f} |")
    print(f"\nThresholds on all {len(devsets)} sets:")
    for name, signals in RULES.items():
        thresholds = [_keeping_all(rows, SIGNALS[s]) for s in signals]
        silent = {d: np.mean(_silenced([r for r in rows if r["devset"] == d], signals, thresholds, "unanswerable"))
                  for d in devsets if any(r["devset"] == d and r["kind"] == "unanswerable" for r in rows)}
        print(f"  {name}: {', '.join(f'{t:.3f}' for t in thresholds)} -> unanswerable silent "
              + ", ".join(f"{d} {v:.2f}" for d, v in silent.items()))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devsets", nargs="+", default=["english-doc", "manual5", "mixed", "xling", "faq4"])
    parser.add_argument("--floors", nargs="+", type=float, default=[0.50, 0.52, 0.53, 0.54])
    parser.add_argument("--dump", type=Path, help="write every question's signals to this file")
    parser.add_argument("--rules", type=Path, help="compare floors on a --dump file")
    args = parser.parse_args(argv)
    if args.rules:
        rules(json.loads(args.rules.read_text()))
        return 0
    if args.dump:
        args.dump.write_text(json.dumps(dump(args.devsets), ensure_ascii=False, indent=1))
        rules(json.loads(args.dump.read_text()))
        return 0
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
