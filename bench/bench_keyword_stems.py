"""What the keyword index's stems cost: build time, file size and keyword-search latency on
the dev-set homes, for whichever Babelfind is on PYTHONPATH (run it against two checkouts
and compare; only what both versions have is called).

    BABELFIND_TEST_MODELS=<models> OMP_NUM_THREADS=1 PYTHONPATH=<checkout> \\
        python bench/bench_keyword_stems.py --devsets english-doc manual5 xling

Per dev set (each home built by bench/bench_search.py): the keyword file built from the
database in a new folder (seconds, MB), then every question of the set searched in keyword
mode, in its detected language, --rounds times (p50 / p90 ms, the first round left out as
the warm-up).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_search import DEFAULT_MODEL, load_no_answer, load_queries, open_home  # noqa: E402
from engine.index.keyword_index import FILE_NAME, KeywordIndex  # noqa: E402
from engine.langid import detect_language  # noqa: E402
from engine.library import default_search_config  # noqa: E402
from engine.query import parse_query  # noqa: E402
from engine.search import SearchIndexes, run_search  # noqa: E402


def build_cost(library) -> tuple[float, float]:
    """(seconds, MB) to build the keyword file of `library` from its database."""
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        index = KeywordIndex.open(library.store, library.live.generation, Path(folder))
        seconds = time.perf_counter() - started
        index.close()
        return seconds, (Path(folder) / FILE_NAME).stat().st_size / 1e6


def search_latency(library, questions: list[str], rounds: int) -> tuple[float, float]:
    """(p50, p90) ms of a keyword-mode search of each question, after one warm-up round."""
    indexes = SearchIndexes(library.store, library.live, library.live.keywords)
    config = default_search_config(library.live)
    parsed = [(parse_query(q), detect_language(q)) for q in questions]
    times = []
    for round_ in range(rounds + 1):
        for query, language in parsed:
            started = time.perf_counter()
            run_search(indexes, query, None, 10, "keyword", config, language=language)
            if round_:
                times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.9 * (len(times) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--devsets", nargs="+", default=["english-doc", "manual5", "xling"])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print("| dev set | passages | build s | file MB | keyword search p50 / p90 ms |")
    print("|---|---|---|---|---|")
    for devset in args.devsets:
        library, _ = open_home(devset, "filtered", DEFAULT_MODEL)
        try:
            questions = [item["query"] for item in load_queries(devset)] + load_no_answer(devset)
            seconds, size = build_cost(library)
            p50, p90 = search_latency(library, questions, args.rounds)
            print(f"| {devset} | {len(library.live.keywords)} | {seconds:.2f} | {size:.1f} | {p50:.1f} / {p90:.1f} |",
                  flush=True)
        finally:
            library.close()


if __name__ == "__main__":
    main()
