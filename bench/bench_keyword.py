"""Keyword index benchmark: size, indexing cost, and search latency at 100k passages.

    PYTHONPATH=$PWD python bench/bench_keyword.py --passages 100000 --queries 200
    PYTHONPATH=$PWD python bench/bench_keyword.py --index resources/sample --models MODELS_DIR

Builds a store of synthetic passages (Zipf-distributed words, invoice-style identifiers,
a share of Chinese text) with random unit vectors (384-d, like e5-small), opens the
library's indexes over it, and reports:
  * the keyword file's size, bytes per passage, and its build time per passage;
  * the keyword index's share of indexing time, against the real e5-small encoder's time
    for the same passages (--encoder-passages of them, measured in this process);
  * search latency without query encoding (vectors are given), p50 / p90 per mode, with
    each filter (lang:, type:, path:, after:) and a phrase; wall time and CPU time
    (time.process_time, less sensitive to a loaded machine) per query.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.config import data_paths  # noqa: E402
from engine.index.keyword_index import KeywordIndex  # noqa: E402
from engine.index.live_index import LiveIndex  # noqa: E402
from engine.query import parse_query  # noqa: E402
from engine.search import SearchIndexes, run_search  # noqa: E402
from engine.store import DocumentWrite, NewPassage, Store  # noqa: E402

DIM = 384
LANGUAGES = ("en", "de", "fr", "zh")
FILE_TYPES = ("txt", "pdf", "html", "md")  # a quarter each, independent of the language
FOLDERS = 8  # documents spread over /bench/folder0..7: path:/bench/folder3 allows an eighth
FIRST_MTIME = 1_577_836_800.0  # 2020-01-01; one document every 2 hours, to mid-2024
CHINESE = "我们明年夏天去北京旅游参观故宫和长城上海是一个很大的港口城市外滩很有名茶叶绿茶乌龙茶红茶普洱茶"


def vocabulary(rng: random.Random, size: int = 30_000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyzäöüéè"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 11))) for _ in range(size)]


def passage_text(rng: random.Random, words: list[str], weights: list[float], language: str) -> str:
    if language == "zh":
        start = rng.randrange(len(CHINESE) - 40)
        return CHINESE[start : start + rng.randint(20, 40)] + f" FA-{rng.randint(2020, 2025)}-{rng.randint(1000, 9999)}"
    body = " ".join(rng.choices(words, weights, k=rng.randint(40, 90)))
    return f"{body.capitalize()}. Invoice FA-{rng.randint(2020, 2025)}-{rng.randint(1000, 9999)} ffi_call_{rng.randint(0, 999)}."


def build_store(url: str, passages: int, per_document: int = 5, seed: int = 7) -> tuple[Store, list[str]]:
    rng = random.Random(seed)
    words = vocabulary(rng)
    weights = [1.0 / (i + 1) for i in range(len(words))]  # Zipf: a few common words, a long tail
    vectors_rng = np.random.default_rng(seed)
    store = Store.open(url)
    generation = store.create_generation("bench-random", DIM, "active")
    root = store.ensure_root("/bench")
    texts: list[str] = []
    batch: list[DocumentWrite] = []
    for d in range(passages // per_document):
        language = LANGUAGES[d % len(LANGUAGES)]
        file_type = FILE_TYPES[(d // len(LANGUAGES)) % len(FILE_TYPES)]
        items = [passage_text(rng, words, weights, language) for _ in range(per_document)]
        texts.extend(items)
        vectors = vectors_rng.standard_normal((per_document, DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        batch.append(DocumentWrite(
            path=f"/bench/folder{(d // 16) % FOLDERS}/doc{d:06d}.{file_type}", size=1, mtime=FIRST_MTIME + d * 7200.0,
            content_hash=f"{d:064x}", file_type=file_type, format="text", language=language,
            passages=tuple(NewPassage(t, 0, len(t), None, language) for t in items), vectors=vectors))
        if len(batch) == 200:
            store.write_documents(root, generation.id, batch)
            batch = []
    if batch:
        store.write_documents(root, generation.id, batch)
    return store, texts


def _all_texts(url: str):
    from engine.store.search_queries import passage_ids, passage_texts

    store = Store.open(url)
    try:
        return passage_texts(store, passage_ids(store).tolist())
    finally:
        store.close()


def percentiles(samples_ms: list[float]) -> str:
    ordered = sorted(samples_ms)
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    return f"p50 {statistics.median(ordered):6.1f} ms  p90 {p90:6.1f} ms"


def default_encoder():
    """The default e5-small encoder, or None where it is not installed."""
    try:
        from engine.models import load_encoder
        return load_encoder("multilingual-e5-small", device="cpu")
    except Exception as e:  # noqa: BLE001 - the benchmark still reports the rest
        print(f"(no e5-small encoder here: {e})")
        return None


def encoder_seconds_per_passage(encoder, texts: list[str]) -> float | None:
    """The encoder's time per passage on these texts, or None without one."""
    if encoder is None:
        return None
    encoder.encode(texts[:16], kind="passage")  # warm up
    started = time.perf_counter()
    encoder.encode(texts, kind="passage")
    return (time.perf_counter() - started) / len(texts)


def real_indexing_share(folder: Path, models: Path) -> None:
    """Indexes `folder` with the default model; prints the keyword index's share of the run."""
    from engine.config import save_settings
    from engine.library import Library

    home = Path(tempfile.mkdtemp(prefix="bench-keyword-run-"))
    (home / "models").symlink_to(models.resolve(), target_is_directory=True)
    paths = data_paths(home)
    save_settings(paths, active_model="multilingual-e5-small")
    library = Library.open(paths)
    started = time.perf_counter()
    *_, finished = library.index_paths([folder])
    total = time.perf_counter() - started
    keyword = library.live.keywords.seconds
    stages = dict(finished.summary.stage_seconds)
    print(f"indexing {folder}: {finished.summary.indexed} files, {finished.summary.passages} passages in "
          f"{total:.1f} s (encode {stages.get('encode', 0):.1f} s); keyword index {keyword:.2f} s = "
          f"{keyword / total:.1%} of the run")
    library.close()
    shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--encoder-passages", type=int, default=256)
    parser.add_argument("--index", type=Path, help="instead: index this folder with e5-small and report the share")
    parser.add_argument("--models", type=Path, help="models folder for --index (holding multilingual-e5-small)")
    parser.add_argument("--keep", action="store_true", help="keep the built store for --reuse")
    parser.add_argument("--reuse", type=Path, help="home folder of a run made with --keep")
    parser.add_argument("--query-language", help="the queries' language as detected (ISO 639-1; default none): "
                        "'en' also matches the stems of their words")
    parser.add_argument("--cases", help="only the query cases whose names contain one of these (comma separated)")
    parser.add_argument("--context", nargs="+", default=["on"], choices=["on", "off"],
                        help="time with the documents' context in dense scores (the default), without, or both")
    args = parser.parse_args()
    if args.index:
        real_indexing_share(args.index, args.models)
        return
    home = args.reuse or Path(tempfile.mkdtemp(prefix="bench-keyword-"))
    paths = data_paths(home)
    started = time.perf_counter()
    if args.reuse:  # the store of an earlier run (built with the same seed): queries only
        store, texts = Store.open(paths.db_url), [t for _, _, t in _all_texts(paths.db_url)]
    else:
        store, texts = build_store(paths.db_url, args.passages)
        print(f"store: {args.passages} passages written in {time.perf_counter() - started:.1f} s")
    generation = store.generation("active")

    started = time.perf_counter()
    keywords = KeywordIndex.open(store, generation, paths.indexes)  # builds from stored text
    build_s = time.perf_counter() - started
    size = keywords.path.stat().st_size + sum(p.stat().st_size for p in keywords.path.parent.glob("keywords.sqlite-*"))
    print(f"keyword index: {size / 2**20:.1f} MiB ({size / args.passages:.0f} bytes/passage), "
          f"built in {build_s:.1f} s ({build_s / args.passages * 1e3:.2f} ms/passage, includes reading the text)")
    encoder = default_encoder()
    encode_s = None if args.reuse else encoder_seconds_per_passage(encoder, texts[: args.encoder_passages])
    if encode_s is not None:
        keyword_s = build_s / args.passages
        print(f"e5-small encoding: {encode_s * 1e3:.2f} ms/passage; keyword share of indexing time "
              f"(keyword / (encode + keyword)): {keyword_s / (encode_s + keyword_s):.1%}")

    # The default space is language-neutral: its means need the model once (engine/index/
    # language_means.py); without the model, the plain space is timed, and said so.
    live = LiveIndex.open(store, generation, paths.indexes, keywords=keywords, language_neutral=encoder is not None)
    if encoder is not None:
        live.ensure_corrections(encoder, passage_languages=LANGUAGES, query=True)
    if not live.mirror.usable:  # a store of an earlier version: the copy its next index run leaves
        started = time.perf_counter()
        live.save()
        print(f"vector copy written in {time.perf_counter() - started:.1f} s")
    print(f"vectors: {'language-neutral' if live.means is not None else 'plain (no model here)'}, "
          f"{'hubness penalties' if live.hubness is not None else 'no hubness penalties'}, "
          f"re-scored from {'the vector copy' if live.mirror.usable else 'the database'}")
    indexes = SearchIndexes(store, live, keywords)
    rng = random.Random(3)
    sample_texts = rng.sample(texts, args.queries)

    def words(text: str) -> str:  # the first 3 words of a passage: mostly common ones
        return " ".join(text.split()[:3])

    cases = {
        "dense  words": lambda t: parse_query(words(t)),
        "keyword words": lambda t: parse_query(words(t)),
        "fused  words": lambda t: parse_query(words(t)),
        "fused  identifier": lambda t: parse_query(t.split()[-2]),
        "fused  phrase": lambda t: parse_query('"' + " ".join(t.split()[1:3]) + '"'),
        "dense  lang:de": lambda t: parse_query(words(t) + " lang:de"),
        "fused  lang:de": lambda t: parse_query(words(t) + " lang:de"),
        "fused  type:pdf": lambda t: parse_query(words(t) + " type:pdf"),
        "fused  path:": lambda t: parse_query(words(t) + " path:/bench/folder3"),
        "fused  after:": lambda t: parse_query(words(t) + " after:2023-01-01"),
        "fused  lang+type+after": lambda t: parse_query(words(t) + " lang:de type:pdf after:2023-01-01"),
    }
    only = set(args.cases.split(",")) if args.cases else None
    kept_context = live.context, live.context_config
    runs = [(context, name, make) for context in args.context for name, make in cases.items()
            if not only or any(o in name for o in only)]
    for context, name, make in runs:
        live.context, live.context_config = kept_context if context == "on" else (None, None)
        mode = name.split()[0]
        timings, cpu = [], []
        queries_rng = np.random.default_rng(3)  # the same query vectors for every case
        for text in sample_texts:
            query = make(text)
            vector = queries_rng.standard_normal(DIM).astype(np.float32)
            vector /= np.linalg.norm(vector)
            started, started_cpu = time.perf_counter(), time.process_time()
            searched = None if mode == "keyword" else live.query_vector(vector, None)  # as Library.search_results
            run_search(indexes, query, searched, 10, mode, language=args.query_language)
            timings.append((time.perf_counter() - started) * 1e3)
            cpu.append((time.process_time() - started_cpu) * 1e3)
        print(f"search {name:24s} {percentiles(timings[5:])}  cpu p50 {statistics.median(cpu[5:]):6.1f} ms  "
              f"({live.index.kind} vectors, context {context})")
    keywords.close()
    store.close()
    if args.keep or args.reuse:  # a reused store stays for the next run
        print(f"kept the store in {home} (--reuse {home})")
    else:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
