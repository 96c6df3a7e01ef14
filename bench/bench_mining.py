"""Parallel-sentence mining benchmark: BUCC-style F1 on PUD + Tatoeba, and kNN/scoring speed.

    python bench/bench_mining.py f1 --langs de fr es ru zh ar hi      # needs ../shared/data + model
    python bench/bench_mining.py speed --sizes 10000 100000           # synthetic vectors

F1 test (in the manner of BUCC 2017/2018): for each language L -> en, PUD's 1000 aligned
sentences are shuffled and cut into a dev and a test split. In each split 40% of the PUD
sentences keep their translation on the other side (gold pairs), 30% appear only in L and
30% only in English; 250 Tatoeba L sentences and 250 *other* Tatoeba English sentences are
added as further sentences without translation. Both sides are shuffled and mined (mode
max, k=4); the threshold that maximises F1 on dev is applied to test. A "global" threshold
per margin (best mean dev F1 over all languages) is what the app ships as its default.

`--spaces plain neutral` mines once with the vectors as encoded and once with each side's
language mean taken out (engine/index/language_means.py, the correction search uses).
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from engine.encoders.base import l2_normalise  # noqa: E402
from engine.mining.margin import MARGINS, MiningConfig, mine_vectors  # noqa: E402

log = logging.getLogger("bench_mining")
TATOEBA_CODES = {"de": "deu", "fr": "fra", "es": "spa", "ru": "rus", "zh": "cmn", "ar": "ara", "hi": "hin", "it": "ita", "pt": "por", "tr": "tur"}
# LASER's published BUCC F1 (test set, LASER README tasks/bucc, "LASER [4]" row, i.e.
# Artetxe & Schwenk, TACL 2019). BUCC has no es/ar/hi data.
LASER_BUCC_F1 = {"de": 96.2, "fr": 93.1, "ru": 92.3, "zh": 92.7}


@dataclass(frozen=True)
class Split:
    src: list[str]
    tgt: list[str]
    gold: frozenset[tuple[int, int]]  # (src index, tgt index)


def pud(shared: Path, lang: str) -> list[str]:
    path = shared / "corpus" / "pud-parallel" / f"pud.{lang}.tsv"
    return [line.split("\t", 1)[1] for line in path.read_text(encoding="utf-8").splitlines()]


def tatoeba(shared: Path, lang: str) -> tuple[list[str], list[str]]:
    code = TATOEBA_CODES[lang]
    base = shared / "tatoeba" / "v1" / f"tatoeba.{code}-eng"
    read = lambda p: Path(p).read_text(encoding="utf-8").splitlines()  # noqa: E731
    return read(f"{base}.{code}"), read(f"{base}.eng")


def build_splits(shared: Path, lang: str, seed: int = 0) -> dict[str, Split]:
    """The dev and test splits for lang -> en (see the module docstring)."""
    rng = random.Random(seed)
    src_pud, en_pud = pud(shared, lang), pud(shared, "en")
    src_tat, en_tat = tatoeba(shared, lang)
    ids = list(range(len(src_pud)))
    rng.shuffle(ids)
    tat = list(range(len(src_tat)))
    rng.shuffle(tat)
    splits = {}
    for n, name in enumerate(("dev", "test")):
        part = ids[n * 500 : (n + 1) * 500]
        gold_ids, src_only, tgt_only = part[:200], part[200:350], part[350:]
        # Tatoeba: L sentences from one half of the pairs, English from the other half, so
        # no Tatoeba sentence has its translation present.
        tat_part = tat[n * 500 : (n + 1) * 500]
        src_items = [(src_pud[i], i) for i in gold_ids + src_only] + [(src_tat[t], None) for t in tat_part[:250]]
        tgt_items = [(en_pud[i], i) for i in gold_ids + tgt_only] + [(en_tat[t], None) for t in tat_part[250:]]
        src_items, tgt_items = _dedupe(src_items), _dedupe(tgt_items)
        rng.shuffle(src_items)
        rng.shuffle(tgt_items)
        tgt_pos = {i: j for j, (_, i) in enumerate(tgt_items) if i is not None}
        gold = frozenset(
            (s, tgt_pos[i]) for s, (_, i) in enumerate(src_items) if i is not None and i in tgt_pos
        )
        splits[name] = Split([t for t, _ in src_items], [t for t, _ in tgt_items], gold)
    return splits


def _dedupe(items):
    seen, out = set(), []
    for text, ident in items:
        if text not in seen:
            seen.add(text)
            out.append((text, ident))
    return out


def encode_cached(encoder, texts: list[str], cache: Path) -> np.ndarray:
    """Vectors of `texts` (kind="query", as the app mines), cached on disk by content."""
    key = hashlib.sha1((encoder.name + "\n" + "\n".join(texts)).encode()).hexdigest()[:16]
    path = cache / f"{key}.npy"
    if path.exists():
        return np.load(path)
    start = time.perf_counter()
    vecs = np.concatenate([encoder.encode(texts[i : i + 64], kind="query") for i in range(0, len(texts), 64)])
    log.info("encoded %d texts in %.0f s", len(texts), time.perf_counter() - start)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, vecs)
    return vecs


def prf(scored: list[tuple[float, tuple[int, int]]], gold: frozenset, threshold: float) -> tuple[float, float, float]:
    predicted = {pair for score, pair in scored if score > threshold}
    hits = len(predicted & gold)
    p = hits / len(predicted) if predicted else 0.0
    r = hits / len(gold)
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def best_threshold(scored, gold) -> float:
    """The threshold (just below one of the scores) with the highest F1."""
    candidates = sorted({s for s, _ in scored})
    best = max(((prf(scored, gold, t - 1e-9)[2], t - 1e-9) for t in candidates), default=(0, 0.0))
    return best[1]


def run_f1(args) -> None:
    from engine.index.language_means import LanguageMeans
    from engine.models import load_encoder

    encoder = load_encoder(args.model)
    means = LanguageMeans(encoder.dim)
    means.ensure(encoder, [*args.langs, "en"], "query")  # both sides are encoded as queries
    print(f"model: {encoder.name}, k={args.k}, mode=max")
    rows = {}
    for lang in args.langs:
        splits = build_splits(args.shared, lang, seed=args.seed)
        for name, split in splits.items():
            src = encode_cached(encoder, split.src, args.cache)
            tgt = encode_cached(encoder, split.tgt, args.cache)
            for space in args.spaces:
                a, b = src, tgt
                if space == "neutral":
                    a, b = means.neutral(src, [lang] * len(src), "query"), means.neutral(tgt, ["en"] * len(tgt), "query")
                for margin in MARGINS:
                    pairs = mine_vectors(a, b, k=args.k, margin=margin, mode="max", threshold=None)
                    rows[lang, name, margin, space] = ([(p.score, (p.src_index, p.tgt_index)) for p in pairs],
                                                       split.gold)
        sizes = {n: (len(s.src), len(s.tgt), len(s.gold)) for n, s in splits.items()}
        log.info("%s: sizes (src, tgt, gold) %s", lang, sizes)
    for space in args.spaces:
        print(f"\n## vectors: {space}")
        print_f1({key[:3]: value for key, value in rows.items() if key[3] == space}, args.langs)


def print_f1(rows: dict, langs: list[str]) -> None:
    """The F1 tables of one vector space: rows[(lang, split, margin)] = (scored pairs, gold)."""
    for margin in MARGINS:
        print(f"\n### margin = {margin}\n")
        # The shipped default: one threshold for all languages, best mean dev F1.
        grid = sorted({s for lang in langs for s, _ in rows[lang, "dev", margin][0]})
        grid = grid[:: max(1, len(grid) // 2000)]
        mean_dev = lambda t: np.mean([prf(*rows[lang, "dev", margin], t)[2] for lang in langs])  # noqa: E731
        global_t = max(grid, key=mean_dev) - 1e-9
        print(f"global threshold (best mean dev F1): {global_t:.4f}\n")
        print("| pair | dev-tuned threshold | P | R | F1 | F1 at global threshold | LASER BUCC F1 |")
        print("|---|---|---|---|---|---|---|")
        for lang in langs:
            t = best_threshold(*rows[lang, "dev", margin])
            p, r, f = prf(*rows[lang, "test", margin], t)
            fg = prf(*rows[lang, "test", margin], global_t)[2]
            laser = LASER_BUCC_F1.get(lang)
            laser_s = f"{laser:.1f}" if laser else "n/a (not in BUCC)"
            print(f"| {lang}-en | {t:.4f} | {100*p:.1f} | {100*r:.1f} | {100*f:.1f} | {100*fg:.1f} | {laser_s} |")


def synthetic(n: int, dim: int, rng, n_clusters: int = 1000):
    """Unit vectors shaped like sentence embeddings: a shared direction, topic clusters
    and per-sentence detail; the target holds noisy copies of the first half of the
    source (the planted pairs, shuffled) and as many unrelated vectors."""
    common = np.zeros(dim, dtype=np.float32)
    common[0] = 1.0
    centres = rng.standard_normal((n_clusters, dim), dtype=np.float32)

    def unit(m):
        return l2_normalise(rng.standard_normal((m, dim), dtype=np.float32))

    def draw(m):
        # cosine ~0.45 between unrelated vectors, ~0.7 within a topic
        return l2_normalise(common + 0.8 * l2_normalise(centres[rng.integers(0, n_clusters, m)]) + 0.8 * unit(m))

    src = draw(n)
    half = n // 2
    copies = l2_normalise(src[:half] + 0.3 * unit(half))  # cosine ~0.96 to the original
    tgt = np.concatenate([copies, draw(n - half)])
    perm = rng.permutation(n)
    tgt = tgt[perm]
    where = np.empty(n, dtype=np.int64)
    where[perm] = np.arange(n)
    gold = {(i, int(where[i])) for i in range(half)}
    return src, tgt, gold


def run_speed(args) -> None:
    """Wall and CPU seconds of kNN both ways + scoring + max retrieval on synthetic vectors.

    CPU seconds / threads is what the wall time would be on idle cores; on the shared
    dev box the wall time also counts waiting for other people's processes."""
    import faiss

    faiss.omp_set_num_threads(args.threads)
    print(f"threads: {args.threads}, dim {args.dim}, k {args.k}, mode max, margin ratio")
    print("| n x n | search | wall s | CPU s | CPU s / threads | recall of planted pairs |")
    print("|---|---|---|---|---|---|")
    for n in args.sizes:
        rng = np.random.default_rng(0)
        src, tgt, gold = synthetic(n, args.dim, rng)
        configs = [("auto", MiningConfig())]
        if n * n <= args.max_exact and n * n > 2_000_000_000:
            configs.append(("exact", MiningConfig(exact_max_products=10**15)))
        for label, config in configs:
            wall, cpu = time.perf_counter(), time.process_time()
            pairs = mine_vectors(src, tgt, k=args.k, margin="ratio", mode="max", config=config)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            found = {(p.src_index, p.tgt_index) for p in pairs}
            kind = "exact" if label == "exact" or n * n <= 2_000_000_000 else "IVF (auto)"
            recall = len(found & gold) / len(gold)
            print(f"| {n} x {n} | {kind} | {wall:.1f} | {cpu:.1f} | {cpu / args.threads:.1f} | {100*recall:.1f}% |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    f1 = sub.add_parser("f1")
    f1.add_argument("--langs", nargs="+", default=["de", "fr", "es", "ru", "zh", "ar", "hi"])
    f1.add_argument("--model", default=None, help="registered model (default: active)")
    f1.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "data")
    f1.add_argument("--cache", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "bench_mining_cache")
    f1.add_argument("--k", type=int, default=4)
    f1.add_argument("--seed", type=int, default=0)
    f1.add_argument("--spaces", nargs="+", default=["plain", "neutral"], choices=["plain", "neutral"])
    speed = sub.add_parser("speed")
    speed.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000])
    speed.add_argument("--dim", type=int, default=384)
    speed.add_argument("--k", type=int, default=4)
    speed.add_argument("--threads", type=int, default=2)
    speed.add_argument("--max-exact", type=int, default=10**8, help="largest n*n also timed exactly")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    (run_f1 if args.what == "f1" else run_speed)(args)


if __name__ == "__main__":
    main()
