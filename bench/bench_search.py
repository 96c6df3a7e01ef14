"""Search quality on the dev sets: top-1 and MRR@10 per search mode (dense, keyword,
fused), in the language-neutral and the plain vector space, with and without the hubness
correction, and with and without the junk filter.

    python bench/devsets.py && python bench/bench_search.py            # every set
    python bench/bench_search.py --devsets xling --per-query           # each query's rank, top 3
    python bench/bench_search.py --devsets mixed --sweep               # the k/beta grid
    python bench/bench_search.py --weights 1 2 3 5                     # fusion keyword weights
    python bench/bench_search.py --variants filtered plain             # also unfiltered passages

Each dev set (bench/devsets.py) is indexed with the default model into a throw-away
home under bench/out/homes/ through the real Library (extract -> segment -> encode),
once with the junk filter (IndexerConfig.drop_junk) and once without; a home is reused
while its dev set's digest, variant, model and segmentation code are unchanged, so
reruns only search.
Each reading is made in each of --spaces: "neutral" (the default: each language's mean
taken out of passage and query vectors, engine/index/language_means.py) and "plain"
(the vectors as encoded); the home's FAISS file is rebuilt from the stored vectors when
it holds the other space. Readings:

  offline   exact: every passage vector of the home scored against every query in
            numpy, documents ranked by their best passage, for the cosine and for
            cos - beta * (r_p(L) - r_0(L)) at each (k, beta) asked for, L the query's
            language (engine/index/hubness.py);
  library   end to end through Library.search_results (FAISS, keyword index, fusion,
            relevance floor, grouping) per --modes with the library's own hubness
            config, once more with the penalties off, and once with the documents'
            context off (passages scored alone, engine/index/document_context.py); a query whose document is not
            among the 10 shown (or was cut by the floor) counts as missed.
  no answer for the sets with questions nothing in them answers (no_answer.json): the
            share of those for which the library shows no strong match (every match
            weaker, SearchResults.total == 0), and the share of the answerable questions
            whose answer is shown among the strong matches (fused, the default config and
            each of --configs).

A query's `acceptable` documents (bench/devsets.py) all count as its answer: the rank is
the best of theirs.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from engine.config import DataPaths, save_settings  # noqa: E402
from engine.index.hubness import HubnessConfig, HubnessPenalties, passage_penalties  # noqa: E402
from engine.langid import detect_language  # noqa: E402
from engine.indexer import IndexerConfig  # noqa: E402
from engine.library import Library, default_search_config  # noqa: E402
from engine.search_config import SearchConfig  # noqa: E402
from devsets import DEVSETS  # noqa: E402

OUT = REPO / "bench" / "out"
DEVSET_DIR = OUT / "devsets"
HOMES = OUT / "homes"
DEFAULT_MODEL = "multilingual-e5-small"
VARIANTS = {"plain": False, "filtered": True}  # variant -> IndexerConfig.drop_junk
SPACES = {"neutral": True, "plain": False}  # space -> IndexerConfig.language_neutral
# IndexerConfig passage fields other than the defaults (--passages): their homes lie beside
# the default's, so that comparing passage sizes re-indexes neither
PASSAGES: dict[str, int] = {}
SWEEP_K = (3, 5, 10, 20, 40)
SWEEP_BETA = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0)


def models_folder() -> Path:
    """Installed models: BABELFIND_TEST_MODELS, else the user's (`babelfind models list`)."""
    from engine.config import data_paths

    folder = Path(os.environ.get("BABELFIND_TEST_MODELS") or data_paths().models)
    if not (folder / DEFAULT_MODEL).is_dir():
        raise SystemExit(f"no {DEFAULT_MODEL} under {folder}; set BABELFIND_TEST_MODELS")
    return folder


def open_home(devset: str, variant: str, model: str, space: str = "neutral") -> tuple[Library, dict]:
    """The indexed library of one dev set and variant, built when missing or stale; `space`
    "plain" opens it with FAISS holding the vectors as encoded (rebuilt from the stored
    vectors when the file holds the other space), "neutral" language-neutral ones."""
    folder = DEVSET_DIR / devset
    if not (folder / "manifest.json").is_file():
        from devsets import build

        build(devset)
    manifest = json.loads((folder / "manifest.json").read_text())
    # another model's home beside the default's, so that comparing models re-indexes neither
    home = HOMES / (f"{devset}-{variant}" if model == DEFAULT_MODEL else f"{devset}-{variant}-{model}")
    if PASSAGES:
        home = home.with_name(home.name + "-" + "-".join(f"{k.removeprefix('passage_')}{v}"
                                                         for k, v in sorted(PASSAGES.items())))
    stamp = {"digest": manifest["digest"], "variant": variant, "model": model, "segmentation": _code_digest()}
    config = IndexerConfig(drop_junk=VARIANTS[variant], language_neutral=SPACES[space], **PASSAGES)
    stamp_file = home / "bench-stamp.json"
    if stamp_file.is_file() and json.loads(stamp_file.read_text()) == stamp:
        return Library.open(_paths(home, model), config=config), {"index_s": None}
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    library = Library.open(_paths(home, model), config=config)
    started = time.perf_counter()
    *_, finished = library.index_paths([folder / "docs"])
    elapsed = time.perf_counter() - started
    summary = finished.summary
    if summary.skipped:
        print(f"  {devset}/{variant}: skipped {[(s.path, s.reason) for s in summary.skipped]}", file=sys.stderr)
    stamp_file.write_text(json.dumps(stamp))
    return library, {"index_s": elapsed}


def _code_digest() -> str:
    """Changes whenever what turns files into passages changes: extraction, segmentation,
    the junk filter, the passage sizes, each passage's language and the context it is
    encoded with (not the rest of the indexer)."""
    import dataclasses
    import hashlib

    digest = hashlib.sha256()
    sources = ["engine/segment.py", "engine/junk.py", "engine/spans.py", "engine/langid.py", "engine/index_writes.py",
               "engine/passage_context.py",
               *sorted(p.relative_to(REPO).as_posix() for p in (REPO / "engine" / "extract").glob("*.py"))]
    for name in sources:
        digest.update((REPO / name).read_bytes())
    sizes = {f.name: getattr(IndexerConfig(**PASSAGES), f.name) for f in dataclasses.fields(IndexerConfig)
             if f.name.startswith("passage_") or f.name == "context_weight"}
    digest.update(repr(sorted(sizes.items())).encode())
    return digest.hexdigest()[:16]


def _paths(home: Path, model: str) -> DataPaths:
    paths = DataPaths(home)
    paths.home.mkdir(parents=True, exist_ok=True)
    models = home / "models"
    if not models.exists():
        models.symlink_to(models_folder(), target_is_directory=True)
    save_settings(paths, active_model=model, device="cpu")
    return paths


def load_queries(devset: str) -> list[dict]:
    return json.loads((DEVSET_DIR / devset / "queries.json").read_text(encoding="utf-8"))


def stored_passages(library: Library) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(passage ids [n], vectors [n, d] in the space FAISS holds, document path per passage)
    of the active generation."""
    generation = library.live.generation
    parts = list(library.store.iter_vectors(generation.id, generation.dim))
    ids = np.concatenate([p[0] for p in parts])
    rows = library.store.passages(ids.tolist())
    vectors = library.live.searchable(ids, np.concatenate([p[1] for p in parts]),
                                      [rows[int(i)].language for i in ids])
    paths = [_relative(rows[int(i)].path) for i in ids]
    return ids, vectors, paths


def in_index_space(library: Library, vectors: np.ndarray, languages: list[str | None]) -> np.ndarray:
    """Encoded queries [q, d] in the space FAISS holds (language means taken out when on)."""
    for language in set(languages):
        library.live.ensure_corrections(library.encoder, query_language=language, query=True)
    return np.stack([library.live.query_vector(v, lang) for v, lang in zip(vectors, languages)])


def _relative(path: str) -> str:
    """'/.../devsets/mixed/docs/news/a.txt' -> 'news/a.txt'."""
    marker = "/docs/"
    return path.split(marker, 1)[1] if marker in path else path


def acceptable(item: dict) -> list[str]:
    """The documents that answer a query: any of them counts."""
    return item.get("acceptable") or [item["expected"]]


def shown_rank(names: list[str], item: dict) -> int | None:
    """1-based position of the first answering document among those shown, else None."""
    answers = set(acceptable(item))
    return next((i + 1 for i, name in enumerate(names) if name in answers), None)


def ranks(scores: np.ndarray, paths: list[str], expected: list[list[str]]) -> list[int | None]:
    """Rank (1-based, ties counted against it) of each query's best-placed answering document
    when documents are ranked by their best passage score; None beyond 10.
    scores: [queries, passages]; expected: each query's acceptable documents."""
    documents = sorted(set(paths))
    column = {d: i for i, d in enumerate(documents)}
    owner = np.array([column[p] for p in paths])
    best = np.full((len(scores), len(documents)), -np.inf, np.float32)
    for d in range(len(documents)):  # documents hold few passages; a loop over them is cheap
        best[:, d] = scores[:, owner == d].max(axis=1)
    out = []
    for row, targets in zip(best, expected):
        present = [column[t] for t in targets if t in column]
        if not present:
            out.append(None)
            continue
        # Ties count against the target: identical passages (the same closing line in
        # every reminder) come back from the library in no particular order. Other
        # answering documents (identical copies, often) are no rivals.
        ahead = row >= row[present].max()
        ahead[present] = False
        rank = int(ahead.sum()) + 1
        out.append(rank if rank <= 10 else None)
    return out


def summarise(found: list[int | None]) -> dict:
    return {"top1": float(np.mean([r == 1 for r in found])),
            "mrr10": float(np.mean([1.0 / r if r else 0.0 for r in found]))}


def offline(queries: np.ndarray, query_languages: list[str | None], vectors: np.ndarray,
            paths: list[str], expected: list[list[str]], reference: tuple[np.ndarray, list[str]],
            k: int, beta: float) -> dict:
    """Exact top-1 / MRR@10 for cos - beta * (r_p(L) - r_0(L)), L each query's language."""
    scores = queries @ vectors.T  # [q, n]
    if beta:
        hub = HubnessPenalties(*reference, HubnessConfig(k=k, beta=beta))
        groups = [np.flatnonzero(np.asarray(reference[1]) == lang) for lang in hub.languages]
        penalties = passage_penalties(vectors, reference[0], groups, k)  # [n, L]
        weights = np.stack([hub.column_weights(lang) for lang in query_languages])  # [q, L]
        scores = scores - beta * (weights @ penalties.T - (weights @ hub.baselines)[:, None])
    return summarise(ranks(scores, paths, expected))


def library_outcomes(library: Library, queries: list[dict], mode: str,
                     config: SearchConfig | None = None) -> list[dict]:
    """Per query through Library.search_results in `mode`: the answer's rank among the 10
    shown (None: not shown), whether it is a strong match, how many documents are strong,
    and the top 3 shown as (path, document language, weak)."""
    outcomes = []
    for item in queries:
        results = library.search_results(item["query"], k=10, mode=mode, config=config)
        names = [_relative(h.path) for h in results.hits]
        rank = shown_rank(names, item)
        outcomes.append({"rank": rank, "strong": bool(rank and not results.hits[rank - 1].weak),
                         "strong_documents": results.total,
                         "top3": [(name, h.language, h.weak) for name, h in zip(names[:3], results.hits)]})
    return outcomes


def through_library(library: Library, queries: list[dict], mode: str,
                    config: SearchConfig | None = None) -> dict:
    """Top-1 / MRR@10 through Library.search_results in `mode`."""
    return summarise([o["rank"] for o in library_outcomes(library, queries, mode, config)])


def no_answer_reading(library: Library, queries: list[dict], unanswerable: list[str],
                      config: SearchConfig | None = None) -> dict:
    """Fused: share of unanswerable questions with no strong match at all, share of the
    answerable ones whose answer is shown as a strong match, and the two counts behind them."""
    silent = [library.search_results(q, k=10, config=config).total == 0 for q in unanswerable]
    answered = [o["strong"] for o in library_outcomes(library, queries, "fused", config)]
    return {"no strong match": float(np.mean(silent)), "answer strong": float(np.mean(answered)),
            "unanswerable": len(silent), "answerable": len(answered),
            "unanswerable with strong matches": [q for q, quiet in zip(unanswerable, silent) if not quiet]}


def load_no_answer(devset: str) -> list[str]:
    path = DEVSET_DIR / devset / "no_answer.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []


@contextmanager
def correction_off(library: Library, name: str):
    """Context: the same library scoring without one correction of its dense scores:
    "hubness" (the penalties: plain cosines) or "context" (passages scored alone, without
    their documents' centroids); the correction and its config are set aside, then back."""
    live = library.live
    kept = getattr(live, name), getattr(live, f"{name}_config")
    setattr(live, name, None)
    setattr(live, f"{name}_config", None)
    try:
        yield
    finally:
        setattr(live, name, kept[0])
        setattr(live, f"{name}_config", kept[1])


def query_vectors(library: Library, devset: str, queries: list[dict]) -> np.ndarray:
    """Encoded queries [q, dim], cached under bench/out by model and query text."""
    texts = [q["query"] for q in queries]
    cache = OUT / f"queries-{devset}-{library.encoder.name}-{len(texts)}-single.npz"
    if cache.is_file():
        data = np.load(cache, allow_pickle=False)
        if list(data["texts"]) == texts:
            return data["vectors"]
    # One query per call, as Library.search encodes them: padding in a batch (and an int8
    # variant's per-batch activation scales) would give a vector a user never gets.
    vectors = np.vstack([library.encoder.encode([text], kind="query") for text in texts])
    np.savez(cache, vectors=vectors, texts=np.array(texts))
    return vectors


def nonsense_queries(n: int = 20) -> list[str]:
    """Made-up words ("qwzx vlorp"), fixed by a seed: queries nothing in any folder answers."""
    import random

    rng = random.Random(5)
    consonants, vowels = "bcdfghjklmnprstvwxzq", "aeiou"

    def word() -> str:
        return "".join(rng.choice(consonants) + (rng.choice(vowels) if rng.random() < 0.4 else "")
                       for _ in range(rng.randint(2, 4)))

    return ["qwzx vlorp bnarf"] + [" ".join(word() for _ in range(rng.randint(1, 3))) for _ in range(n - 1)]


def best_z(library: Library, query: str, mode: str = "fused") -> tuple[float, str, int, int]:
    """(z of the best result's cosine, how it matched, strong documents, weak documents)."""
    from engine.index.fusion import score_baseline

    results = library.search_results(query, k=10, mode=mode)
    if not results.hits:
        return float("nan"), "", 0, 0
    language = detect_language(query)
    vector = library.live.query_vector(library.encoder.encode([query], kind="query")[0], language)
    baseline = score_baseline(library.live, vector, language)
    best = results.hits[0].best
    z = float(baseline.z([best.cosine])[0]) if best.cosine is not None else float("nan")
    return z, best.matched_by, results.total, results.weak_total


def floor_reading(library: Library, queries: list[dict]) -> dict:
    """How the relevance floor and the weak band treat real and nonsense queries (fused)."""
    real = []
    for item in queries:
        results = library.search_results(item["query"], k=10)
        rank = shown_rank([_relative(h.path) for h in results.hits], item)
        hit = results.hits[rank - 1] if rank else None
        real.append({"found": hit is not None, "weak": bool(hit and hit.weak),
                     "strong": results.total, "weaker": results.weak_total})
    nonsense = [best_z(library, q) for q in nonsense_queries()]
    zs = [best_z(library, item["query"])[0] for item in queries]
    return {
        "expected found but weak": sum(r["weak"] for r in real),
        "expected found": sum(r["found"] for r in real),
        "queries": len(real),
        "real best z (min / median)": (float(np.nanmin(zs)), float(np.nanmedian(zs))),
        "nonsense best z (median / max)": (float(np.nanmedian([n[0] for n in nonsense])),
                                           float(np.nanmax([n[0] for n in nonsense]))),
        "nonsense strong docs (median / max)": (float(np.median([n[2] for n in nonsense])),
                                                 int(max(n[2] for n in nonsense))),
        "nonsense weak docs (median)": float(np.median([n[3] for n in nonsense])),
        "real strong docs (median)": float(np.median([r["strong"] for r in real])),
    }


def run_devset(devset: str, args) -> dict:
    result = {"devset": devset, "readings": {}, "sweep": {}, "library": {}, "weights": {}, "no_answer": {},
              "per_query": []}
    queries = load_queries(devset)
    unanswerable = load_no_answer(devset)
    expected = [acceptable(q) for q in queries]
    languages = [detect_language(q["query"]) for q in queries]
    hub = HubnessConfig(k=args.k, beta=args.beta)
    outcomes: dict[str, list[dict]] = {}
    for variant in args.variants:
        for space in args.spaces:
            library, info = open_home(devset, variant, args.model, space)
            try:
                library.live.ensure_corrections(library.encoder)
                ids, vectors, paths = stored_passages(library)
                q = in_index_space(library, query_vectors(library, devset, queries), languages)
                reference = (library.live.hubness.reference, library.live.hubness.reference_languages)
                result[variant] = {"passages": int(len(ids)), "documents": len(set(paths)), **info}

                def score(k: int, beta: float) -> dict:
                    return offline(q, languages, vectors, paths, expected, reference, k, beta)

                result["readings"][f"{variant}, {space}, cosine"] = score(hub.k, 0.0)
                result["readings"][f"{variant}, {space}, hubness k={hub.k} beta={hub.beta}"] = score(hub.k, hub.beta)
                if args.sweep and variant == "filtered":
                    for k in SWEEP_K:
                        for beta in SWEEP_BETA:
                            result["sweep"][f"{space}, k={k} beta={beta}"] = score(k, beta)
                if variant == "filtered":
                    library_readings(library, queries, unanswerable, space, args, result, outcomes)
            finally:
                library.close()
    if args.per_query:
        shown = f"fused, {args.spaces[0]}, hubness"
        result["per_query"] = per_query_rows(queries, languages, outcomes, shown)
    for name, found in outcomes.items():
        result["library"][name] = summarise([o["rank"] for o in found])
    return result


def library_readings(library: Library, queries: list[dict], unanswerable: list[str], space: str, args,
                     result: dict, outcomes: dict[str, list[dict]]) -> None:
    """End to end through Library.search_results in one space, with the hubness penalties and
    without; the floor, weights and configs only in the first space asked for (the default)."""
    for mode in args.modes:
        if mode == "keyword":
            outcomes.setdefault("keyword", library_outcomes(library, queries, mode))
            continue
        outcomes[f"{mode}, {space}, hubness"] = library_outcomes(library, queries, mode)
        with correction_off(library, "hubness"):
            outcomes[f"{mode}, {space}, no hubness"] = library_outcomes(library, queries, mode)
        with correction_off(library, "context"):
            outcomes[f"{mode}, {space}, hubness, no context"] = library_outcomes(library, queries, mode)
    if space != args.spaces[0]:
        return
    if unanswerable:
        result["no_answer"]["default"] = no_answer_reading(library, queries, unanswerable)
    if args.floor:
        result["floor"] = floor_reading(library, queries)
    default = default_search_config(library.live)  # the answer floor of this model, as a search has
    for weight in args.weights:
        config = dataclasses.replace(default, keyword_weight=weight)
        result["weights"][str(weight)] = through_library(library, queries, "fused", config)
    for options in args.configs:
        config = dataclasses.replace(default, **json.loads(options))
        outcomes[f"fused {options}"] = found = library_outcomes(library, queries, "fused", config)
        result["weights"][options] = summarise([o["rank"] for o in found])
        if unanswerable:
            result["no_answer"][options] = no_answer_reading(library, queries, unanswerable, config)


def per_query_rows(queries: list[dict], languages: list[str | None], outcomes: dict[str, list[dict]],
                   shown: str) -> list[dict]:
    """One row per query: its rank in every reading, and the top 3 of the `shown` reading.
    `languages`: each query's language as the library detects it (None: unknown)."""
    rows = []
    for i, item in enumerate(queries):
        top = outcomes[shown][i]["top3"] if shown in outcomes else next(iter(outcomes.values()))[i]["top3"]
        rows.append({"query": item["query"], "language": languages[i], "expected": acceptable(item),
                     "ranks": {name: found[i]["rank"] for name, found in outcomes.items()}, "top3": top})
    return rows


def print_per_query(rows: list[dict]) -> None:
    """Each query: its ranks per reading ('-': not among the 10 shown), its detected language,
    its answer, the top 3 shown with each document's language ('~' marks a weaker match)."""
    if not rows:
        return
    names = list(rows[0]["ranks"])
    print("\nper query: " + " | ".join(f"[{i}] {n}" for i, n in enumerate(names)))
    for row in rows:
        ranks = " ".join(f"{row['ranks'][n] or '-':>2}" for n in names)
        top = "; ".join(f"{'~' if weak else ''}{path} [{lang or '?'}]" for path, lang, weak in row["top3"])
        print(f"{ranks}  ({row['language'] or '-'}) {row['query']}\n"
              f"      answer: {' | '.join(row['expected'])}\n      top 3: {top}")


def print_devset(r: dict) -> None:
    """One dev set's tables, printed as soon as it is scored (a full run takes many minutes)."""
    sizes = ", ".join(f"{r[v]['passages']} {v}" for v in VARIANTS if v in r)
    some = next(r[v] for v in VARIANTS if v in r)
    print(f"\n### {r['devset']}  ({some['documents']} documents; passages: {sizes})")
    print("| reading | top-1 | MRR@10 |\n|---|---|---|")
    for name, m in {**r["readings"], **{f"Library.search, {k}": v for k, v in r["library"].items()}}.items():
        print(f"| {name} | {m['top1']:.3f} | {m['mrr10']:.3f} |")
    if r["sweep"]:
        print("\nsweep (filtered): top-1 / MRR@10")
        print("| k \\ beta | " + " | ".join(str(b) for b in SWEEP_BETA) + " |")
        print("|---" * (len(SWEEP_BETA) + 1) + "|")
        for k in SWEEP_K:
            cells = [r["sweep"][f"k={k} beta={b}"] for b in SWEEP_BETA]
            print(f"| {k} | " + " | ".join(f"{c['top1']:.3f} / {c['mrr10']:.3f}" for c in cells) + " |")
    if r.get("floor"):
        print("\nrelevance floor (fused): " + json.dumps(r["floor"]))
    if r["weights"]:
        print("\nfused, keyword_weight or SearchConfig fields: top-1 / MRR@10")
        print("| " + " | ".join(r["weights"]) + " |\n" + "|---" * len(r["weights"]) + "|")
        print("| " + " | ".join(f"{m['top1']:.3f} / {m['mrr10']:.3f}" for m in r["weights"].values()) + " |")
    if r["no_answer"]:
        print("\nno answer (fused): config | unanswerable with no strong match | answerable with the answer strong")
        for name, m in r["no_answer"].items():
            print(f"| {name} | {m['no strong match']:.3f} of {m['unanswerable']} | "
                  f"{m['answer strong']:.3f} of {m['answerable']} |")
        print("  unanswerable with strong matches (default): "
              + "; ".join(r["no_answer"]["default"]["unanswerable with strong matches"]))
    print_per_query(r["per_query"])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devsets", nargs="+", default=list(DEVSETS))
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--k", type=int, default=HubnessConfig().k)
    parser.add_argument("--beta", type=float, default=HubnessConfig().beta)
    parser.add_argument("--sweep", action="store_true", help="also score the k x beta grid (offline)")
    parser.add_argument("--modes", nargs="+", default=["dense", "keyword", "fused"])
    parser.add_argument("--variants", nargs="+", default=["filtered"], choices=list(VARIANTS),
                        help="filtered: the junk filter on (the default); plain: off")
    parser.add_argument("--spaces", nargs="+", default=list(SPACES), choices=list(SPACES),
                        help="neutral: language means taken out (the default); plain: the vectors as encoded")
    parser.add_argument("--configs", nargs="*", default=[],
                        help='also run fused with these SearchConfig fields, e.g. \'{"keyword_knee": 0.2}\'')
    parser.add_argument("--floor", action="store_true",
                        help="also report the relevance floor on real and nonsense queries")
    parser.add_argument("--weights", nargs="*", type=float, default=[],
                        help="also run fused with these SearchConfig.keyword_weight values")
    parser.add_argument("--per-query", action="store_true",
                        help="print each query's rank in every reading and the top 3 documents "
                             "of the default fused search, with their languages")
    parser.add_argument("--passages", type=json.loads, default={},
                        help='index with these IndexerConfig passage fields, e.g. \'{"passage_max_chars": 1000}\'')
    args = parser.parse_args(argv)
    PASSAGES.update(args.passages)
    results = []
    for name in args.devsets:
        results.append(run_devset(name, args))
        print_devset(results[-1])
        sys.stdout.flush()
    (OUT / "bench_search.json").write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
