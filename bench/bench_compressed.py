"""The library's vector index at scale: exact flat float32 against 8-bit IVF codes re-scored
from the store, side by side in one run, each searched in a fresh process.

    python bench/bench_compressed.py --work /tmp/bench-compressed --n 1000000
    python bench/bench_compressed.py --work /tmp/bench-real --vectors bench/out/real.npy

`prepare` writes a SQLite store as a library holds it (documents, passages, float16
vectors: engine.store) with n seeded clustered unit vectors (bench/bench_vectors.py's
mixture; or real embeddings from --vectors), fresh queries from the same distribution and
their exact top-k (float32 brute force over the stored vectors). Then, per index kind,
one process builds the index through LiveIndex.open (build time, its peak memory) and
another loads it and searches (one query per call, encoding excluded):

  * flat: `IndexIDMap2(IndexFlatIP)` of float32 vectors, exact (exact_max above n);
  * ivf-float32: IVF-Flat of float32 vectors, what libraries of 20k+ passages used before
    (built with FAISS directly, no re-scoring: it is a reference, not a library kind);
  * ivf: the default VectorIndexConfig: IVF of 8-bit codes, its k + rescore_margin
    candidates re-scored with the float16 vectors read from the store;
  * ivf-pq: the codes of libraries above `pq_above` (2M by default; here forced with
    pq_above=1): product quantisation, `pq_bytes` a vector, k + pq_rescore_margin re-scored.

Reported: resident memory of the search process for the vectors (VmRSS after loading
minus before, and after the searches), p50/p95 latency (wall, and the thread's CPU time),
recall@k against the exact top-k, bytes per vector of the index file and of the store.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

DIM = 384
KINDS = ("flat", "ivf-float32", "ivf", "ivf-pq")


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def rss_mb() -> float:
    return _status_mb("VmRSS")


def peak_mb() -> float:
    """This process's peak resident memory (VmHWM: getrusage's ru_maxrss survives exec, so a
    child started by a big parent would report the parent's peak)."""
    return _status_mb("VmHWM")


# ---- the store ----------------------------------------------------------------------------


def prepare(work: Path, args) -> dict:
    """The store, the queries and their exact answers under `work` (reused when there)."""
    from engine.store import Store
    from engine.store.vector_blobs import vector_blobs

    info_path = work / "prepared.json"
    if info_path.is_file():
        return json.loads(info_path.read_text())
    work.mkdir(parents=True, exist_ok=True)
    vectors, queries = _data(args)
    n = len(vectors)
    url = f"sqlite:///{work / 'store.db'}"
    store = Store.open(url)  # the schema, as a library has it
    generation = store.create_generation("bench", DIM, "active")
    store.close()
    start = time.perf_counter()
    db = sqlite3.connect(work / "store.db")
    db.execute("INSERT INTO roots (id, path, watch, added_at) VALUES (1, '/bench', 0, '2026-01-01')")
    per_document = 100
    with db:
        db.executemany(
            "INSERT INTO documents (id, root_id, path, size, mtime, content_hash, file_type, format, "
            "language, status, indexed_at) VALUES (?, 1, ?, 1, 1.0, 'h', 'txt', 'text', 'en', 'indexed', "
            "'2026-01-01')", ((d + 1, f"/bench/{d}.txt") for d in range(-(-n // per_document))))
        for lo in range(0, n, 100_000):
            hi = min(n, lo + 100_000)
            db.executemany(
                "INSERT INTO passages (id, document_id, ordinal, text, start, \"end\", language) "
                "VALUES (?, ?, ?, ?, 0, 10, 'en')",
                ((i + 1, i // per_document + 1, i % per_document, f"passage {i}") for i in range(lo, hi)))
            db.executemany("INSERT INTO vectors (generation_id, passage_id, data) VALUES (?, ?, ?)",
                           ((generation.id, i + 1, blob) for i, blob in zip(range(lo, hi), vector_blobs(vectors[lo:hi]))))
    db.execute("UPDATE index_generations SET version = 1")
    db.commit()
    db.close()
    stored = _stored(vectors)  # what the store gives back: float16, re-normalised
    truth = _exact_top(stored, queries, args.k) + 1  # passage ids start at 1
    np.save(work / "queries.npy", queries)
    np.save(work / "truth.npy", truth)
    info = {"n": n, "dim": DIM, "data": "file" if args.vectors else f"clustered ({args.clusters} clusters)",
            "prepare_s": round(time.perf_counter() - start, 1),
            "store_bytes_per_vector": (work / "store.db").stat().st_size / n,
            "url": url, "generation": generation.id}
    info_path.write_text(json.dumps(info, indent=1))
    return info


def _data(args) -> tuple[np.ndarray, np.ndarray]:
    from bench_vectors import _unit, make_vectors

    if args.vectors:
        stored = np.load(args.vectors, mmap_mode="r")
        return _unit(np.asarray(stored[:-args.queries])), _unit(np.asarray(stored[-args.queries:]))
    vectors = make_vectors(args.n, DIM, "clustered", seed=1_000 + args.n, clusters=args.clusters,
                           noise=1.0, centres_seed=0)
    queries = make_vectors(args.queries, DIM, "clustered", seed=1_001 + args.n, clusters=args.clusters,
                           noise=1.0, centres_seed=0)
    return vectors, queries


def _stored(vectors: np.ndarray) -> np.ndarray:
    out = np.empty(vectors.shape, np.float32)
    for lo in range(0, len(vectors), 100_000):
        part = vectors[lo:lo + 100_000].astype(np.float16).astype(np.float32)
        out[lo:lo + 100_000] = part / np.linalg.norm(part, axis=1, keepdims=True)
    return out


def _exact_top(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """Row positions [m, k] of the exact top-k, best first (chunked: bounded memory)."""
    best_scores = np.full((len(queries), k), -np.inf, np.float32)
    best = np.zeros((len(queries), k), np.int64)
    for lo in range(0, len(vectors), 100_000):
        scores = queries @ vectors[lo:lo + 100_000].T
        top = np.argpartition(-scores, min(k, scores.shape[1] - 1), axis=1)[:, :k]
        merged_scores = np.concatenate([best_scores, np.take_along_axis(scores, top, axis=1)], axis=1)
        merged = np.concatenate([best, top + lo], axis=1)
        order = np.argsort(-merged_scores, axis=1, kind="stable")[:, :k]
        best_scores, best = np.take_along_axis(merged_scores, order, axis=1), np.take_along_axis(merged, order, axis=1)
    return best


# ---- one kind: built in one process, searched in another ------------------------------------


def config_of(kind: str, n: int):
    from engine.index.vector_config import VectorIndexConfig

    if kind == "flat":
        return VectorIndexConfig(exact_max=n + 1, use_gpu="never")
    return VectorIndexConfig(pq_above=1 if kind == "ivf-pq" else VectorIndexConfig.pq_above, use_gpu="never")


def build(work: Path, kind: str) -> dict:
    info = json.loads((work / "prepared.json").read_text())
    folder = work / f"indexes-{kind}"
    folder.mkdir(exist_ok=True)
    start = time.perf_counter()
    if kind == "ivf-float32":
        _build_ivf_float32(work, info, folder)
    else:
        from engine.index.live_index import LiveIndex
        from engine.store import Store

        store = Store.open(info["url"])
        live = LiveIndex.open(store, store.generation_by_id(info["generation"]), folder,
                              config_of(kind, info["n"]), hubness_config=None,
                              language_neutral=False)  # synthetic vectors: no language to take out
        assert live.index.kind == kind, live.index.kind
    files = list(folder.iterdir())
    return {"build_s": time.perf_counter() - start, "build_peak_mb": peak_mb(),
            "file_bytes_per_vector": sum(p.stat().st_size for p in files) / info["n"]}


def _build_ivf_float32(work: Path, info: dict, folder: Path) -> None:
    import math

    import faiss

    from engine.index.vector_config import VectorIndexConfig
    from engine.store import Store

    store = Store.open(info["url"])
    parts = list(store.iter_vectors(info["generation"], DIM))
    ids = np.concatenate([p[0] for p in parts])
    vectors = np.concatenate([p[1] for p in parts])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    config = VectorIndexConfig()
    nlist = round(math.sqrt(len(ids)))
    index = faiss.IndexIVFFlat(faiss.IndexFlatIP(DIM), DIM, nlist, faiss.METRIC_INNER_PRODUCT)
    index.cp.spherical, index.cp.niter, index.cp.seed = True, config.train_iterations, config.seed
    index.cp.max_points_per_centroid = config.train_points_per_list
    sample = np.random.default_rng(config.seed).choice(len(ids), min(len(ids), nlist * 64), replace=False)
    index.train(vectors[np.sort(sample)])
    index.add_with_ids(vectors, ids)
    index.set_direct_map_type(faiss.DirectMap.Hashtable)  # as it was kept, for vectors by id
    faiss.write_index(index, str(folder / "ivf-float32.faiss"))


def search(work: Path, kind: str, k: int) -> dict:
    import faiss

    from engine.index.vector_config import VectorIndexConfig

    from engine.index.live_index import LiveIndex
    from engine.store import Store

    info = json.loads((work / "prepared.json").read_text())
    queries, truth = np.load(work / "queries.npy"), np.load(work / "truth.npy")
    faiss.omp_set_num_threads(1)
    folder = work / f"indexes-{kind}"
    store = Store.open(info["url"])  # imports and the database connection are not the vectors
    before = rss_mb()
    if kind == "ivf-float32":
        index = faiss.read_index(str(folder / "ivf-float32.faiss"))
        nlist = index.nlist
        config = VectorIndexConfig()
        nprobe = min(nlist, max(config.nprobe, -(-config.min_scanned * nlist // index.ntotal)))
        params = faiss.SearchParametersIVF(nprobe=nprobe)

        def one(q):
            return index.search(q[None], k, params=params)
    else:
        live = LiveIndex.open(store, store.generation_by_id(info["generation"]), folder,
                              config_of(kind, info["n"]), hubness_config=None,
                              language_neutral=False)  # synthetic vectors: no language to take out
        assert live.index.kind == kind, live.index.kind
        nprobe = live.index.effective_nprobe

        def one(q):
            return live.search(q[None], k)
    loaded = rss_mb()
    for q in queries[:10]:
        one(q)
    wall, cpu, found = [], [], []
    for q in queries:
        w, c = time.perf_counter(), time.thread_time()
        _, ids = one(q)
        wall.append(time.perf_counter() - w)
        cpu.append(time.thread_time() - c)
        found.append(ids[0])
    found = np.stack(found)
    recall = np.mean([len(set(f) & set(t)) / k for f, t in zip(found.tolist(), truth.tolist())])
    return {"rss_before_mb": before, "rss_loaded_mb": loaded, "rss_after_mb": rss_mb(),
            "vectors_mb": loaded - before, "nprobe": nprobe, "recall": float(recall),
            "wall_p50_ms": 1e3 * float(np.median(wall)), "wall_p95_ms": 1e3 * float(np.percentile(wall, 95)),
            "cpu_p50_ms": 1e3 * float(np.median(cpu)), "cpu_p95_ms": 1e3 * float(np.percentile(cpu, 95))}


def _in_subprocess(action: str, work: Path, kind: str, k: int) -> dict:
    code = (f"import json, sys; sys.path.insert(0, {str(REPO / 'bench')!r}); import bench_compressed as b; "
            f"from pathlib import Path; print(json.dumps(b.{action}(Path({str(work)!r}), {kind!r}"
            + (f", {k}" if action == "search" else "") + ")))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=os.environ | {"PYTHONPATH": str(REPO)})
    if done.returncode != 0:
        raise SystemExit(f"{action} {kind} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def markdown(info: dict, rows: dict, k: int) -> str:
    lines = [f"n = {info['n']:,} ({info['data']}), store {info['store_bytes_per_vector']:.0f} bytes/vector "
             f"(float16 vectors, passages, ids)", "",
             f"| index | build s | build peak MB | file bytes/vector | resident MB for the vectors "
             f"| RSS after searches MB | nprobe | wall p50 ms | wall p95 ms | CPU p50 ms | CPU p95 ms "
             f"| recall@{k} |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for kind, r in rows.items():
        lines.append(f"| {kind} | {r['build_s']:.1f} | {r['build_peak_mb']:.0f} | {r['file_bytes_per_vector']:.0f} "
                     f"| {r['vectors_mb']:.0f} | {r['rss_after_mb']:.0f} | {r['nprobe'] or '-'} "
                     f"| {r['wall_p50_ms']:.2f} | {r['wall_p95_ms']:.2f} | {r['cpu_p50_ms']:.2f} "
                     f"| {r['cpu_p95_ms']:.2f} | {r['recall']:.4f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--vectors", type=Path, help="real embeddings .npy [n + queries, 384]")
    parser.add_argument("--clusters", type=int, default=1_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    args = parser.parse_args()
    info = prepare(args.work, args)
    print(json.dumps(info), file=sys.stderr, flush=True)
    rows = {}
    for kind in args.kinds:
        rows[kind] = _in_subprocess("build", args.work, kind, args.k)
        rows[kind] |= _in_subprocess("search", args.work, kind, args.k)
        print(kind, json.dumps(rows[kind]), file=sys.stderr, flush=True)
    (args.work / "results.json").write_text(json.dumps({"info": info, "rows": rows}, indent=1))
    print(markdown(info, rows, args.k))


if __name__ == "__main__":
    main()
