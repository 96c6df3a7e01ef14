"""Benchmark of engine.index.vectors: exact flat scan vs IVF on synthetic unit vectors.

    python bench/bench_vectors.py --sizes 10000 100000 --distributions clustered uniform

For each size and distribution it builds the exact index and the approximate one through
`VectorIndex.build`, then measures build time, single-query search latency (p50/p95 over
the query set, one query per call, encoding excluded; the search thread's CPU time and the
wall time), vectors scanned per query, bytes per vector of the saved file, and recall@10
of the approximate results against the exact ones. Prints a markdown table.

Synthetic data (seeded):
  * clustered: a Gaussian mixture. `--clusters` centres uniform on the unit sphere; each
    vector is a random centre plus isotropic Gaussian noise of expected norm `--noise`,
    then L2-normalised (noise 1.0: cosine to its centre ~0.7, to other clusters ~0), a
    rough stand-in for sentence embeddings, which gather by topic.
  * uniform: Gaussian vectors normalised, i.e. uniform on the sphere; no structure at
    all, the worst case for any approximate index.
  * file: real embeddings from `--vectors FILE.npy` (float32 [n, d], normalised on load);
    the last `--queries` rows are held out as queries, the data set is the first n rows.
Queries are fresh draws from the same distribution, not vectors of the data set.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.index.vector_config import VectorIndexConfig
from engine.index.vectors import VectorIndex  # noqa: E402

_CHUNK = 100_000  # vectors generated per step: bounds the temporary float64 buffers


def make_vectors(n: int, dim: int, distribution: str, *, seed: int, clusters: int, noise: float,
                 centres_seed: int) -> np.ndarray:
    """Seeded synthetic unit vectors, float32 [n, dim]; see the module docstring."""
    rng = np.random.default_rng(seed)
    centres = _unit(np.random.default_rng(centres_seed).standard_normal((clusters, dim)))
    out = np.empty((n, dim), np.float32)
    for start in range(0, n, _CHUNK):
        size = min(_CHUNK, n - start)
        x = rng.standard_normal((size, dim), dtype=np.float32)
        if distribution == "clustered":
            x = centres[rng.integers(0, clusters, size)] + x * (noise / np.sqrt(dim))
        out[start:start + size] = _unit(x)
    return out


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def latencies_ms(index: VectorIndex, queries: np.ndarray, k: int, threads: int) -> dict:
    """One-query search timings in ms (CPU and wall p50/p95), ids found [m, k], vectors scanned.

    CPU time is the searching thread's own time: on a shared machine wall time also counts
    the time other people's jobs held the core, which says little about the index.
    """
    import faiss

    build_threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(threads)
    for q in queries[:10]:  # warm caches and lazy initialisation
        index.search(q[None], k)
    cpu, wall, found = [], [], []
    faiss.cvar.indexIVF_stats.reset()
    for q in queries:
        cpu_start, wall_start = time.thread_time(), time.perf_counter()
        _, ids = index.search(q[None], k)
        wall.append(time.perf_counter() - wall_start)
        cpu.append(time.thread_time() - cpu_start)
        found.append(ids[0])
    faiss.omp_set_num_threads(build_threads)
    cpu_p50, cpu_p95 = np.percentile(np.array(cpu) * 1e3, [50, 95])
    wall_p50, wall_p95 = np.percentile(np.array(wall) * 1e3, [50, 95])
    scanned = faiss.cvar.indexIVF_stats.ndis / len(queries) if index.kind == "ivf" else len(index)
    return dict(cpu_p50=cpu_p50, cpu_p95=cpu_p95, wall_p50=wall_p50, wall_p95=wall_p95,
                found=np.stack(found), scanned=scanned)


def recall_at_k(found: np.ndarray, truth: np.ndarray) -> float:
    return sum(len(set(f) & set(t)) for f, t in zip(found.tolist(), truth.tolist())) / truth.size


def bytes_per_vector(index: VectorIndex, workdir: Path) -> float:
    """Size of the saved file (what `save` writes, ids included) per vector."""
    path = workdir / "bench.faiss"
    index.save(path, generation=0)
    size = path.stat().st_size
    path.unlink()
    return size / max(1, len(index))


def make_data(n: int, distribution: str, args) -> tuple[np.ndarray, np.ndarray]:
    """(data [n, dim], queries [m, dim]) for one benchmark row."""
    if distribution == "file":
        stored = np.load(args.vectors, mmap_mode="r")  # [total, dim]
        if stored.ndim != 2 or len(stored) < args.queries + n:
            raise SystemExit(f"{args.vectors}: need at least {args.queries + n} rows, shape {stored.shape}")
        return _unit(np.asarray(stored[:n])), _unit(np.asarray(stored[-args.queries:]))
    data_seed = 1_000 + n
    vectors = make_vectors(n, args.dim, distribution, seed=data_seed, clusters=args.clusters,
                           noise=args.noise, centres_seed=args.seed)
    queries = make_vectors(args.queries, args.dim, distribution, seed=data_seed + 1,
                           clusters=args.clusters, noise=args.noise, centres_seed=args.seed)
    return vectors, queries


def bench_one(n: int, distribution: str, args, workdir: Path) -> list[dict]:
    vectors, queries = make_data(n, distribution, args)
    dim = vectors.shape[1]
    ids = np.arange(n, dtype=np.int64)
    rows = []

    start = time.perf_counter()
    exact = VectorIndex.build(dim, ids, vectors, config=VectorIndexConfig(exact_max=n, use_gpu="never"))
    build_s = time.perf_counter() - start
    timing = latencies_ms(exact, queries, args.k, args.search_threads)
    _, truth = exact.search(queries, args.k)  # batched: same exact results, faster
    rows.append(dict(timing, distribution=distribution, n=n, kind=exact.kind, params="-", build_s=build_s,
                     bpv=bytes_per_vector(exact, workdir), recall=1.0))
    del exact

    config = VectorIndexConfig(exact_max=1, lists_per_sqrt=args.lists_per_sqrt, min_scanned=args.min_scanned,
                               use_gpu="never")
    start = time.perf_counter()
    approx = VectorIndex.build(dim, ids, vectors, config=config)
    build_s = time.perf_counter() - start
    del vectors
    bpv = bytes_per_vector(approx, workdir)
    nlist = approx._index.nlist  # reported only
    imbalance = approx._index.invlists.imbalance_factor()  # 1.0: equal lists
    for nprobe in args.nprobe:
        approx.set_nprobe(nprobe)
        timing = latencies_ms(approx, queries, args.k, args.search_threads)
        params = f"nlist={nlist} (imbalance {imbalance:.2f}) nprobe={nprobe}"
        if approx.effective_nprobe != nprobe:
            params += f" (scans {approx.effective_nprobe}: min_scanned)"
        rows.append(dict(timing, distribution=distribution, n=n, kind=approx.kind, params=params,
                         build_s=build_s, bpv=bpv, recall=recall_at_k(timing["found"], truth)))
    return rows


def markdown(rows: list[dict], k: int) -> str:
    lines = [
        f"| data | n | index | parameters | vectors scanned | build s | CPU p50 ms | CPU p95 ms "
        f"| wall p50 ms | wall p95 ms | bytes/vector | recall@{k} |",
        "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['distribution']} | {r['n']:,} | {r['kind']} | {r['params']} | {r['scanned']:,.0f} "
            f"| {r['build_s']:.1f} | {r['cpu_p50']:.2f} | {r['cpu_p95']:.2f} | {r['wall_p50']:.2f} "
            f"| {r['wall_p95']:.2f} | {r['bpv']:.0f} | {r['recall']:.3f} |"
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--distributions", nargs="+", choices=["clustered", "uniform", "file"],
                        default=["clustered", "uniform"])
    parser.add_argument("--vectors", type=Path, help="real embeddings, .npy float32 [n, d] (data 'file')")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--nprobe", type=int, nargs="+", default=[16, 32, 64])
    parser.add_argument("--lists-per-sqrt", type=float, default=VectorIndexConfig.lists_per_sqrt)
    parser.add_argument("--clusters", type=int, default=1_000, help="mixture components (clustered)")
    parser.add_argument("--noise", type=float, default=1.0, help="noise norm relative to the centre")
    parser.add_argument("--min-scanned", type=int, default=VectorIndexConfig.min_scanned,
                        help="IVF scans at least this many vectors per query")
    parser.add_argument("--threads", type=int, default=2, help="FAISS OpenMP threads for builds")
    parser.add_argument("--search-threads", type=int, default=1,
                        help="FAISS OpenMP threads while timing one-query searches (one query "
                             "uses one thread; idle spinning threads only add noise on a busy machine)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if "file" in args.distributions and args.vectors is None:
        parser.error("--distributions file needs --vectors FILE.npy")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    import faiss

    faiss.omp_set_num_threads(args.threads)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for distribution in args.distributions:
            for n in args.sizes:
                rows.extend(bench_one(n, distribution, args, Path(tmp)))
                print(markdown(rows[-1 - len(args.nprobe):], args.k), file=sys.stderr, flush=True)
    print(markdown(rows, args.k))


if __name__ == "__main__":
    main()
