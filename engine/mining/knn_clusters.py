"""Approximate k nearest neighbours in both directions through one shared clustering.

    >>> steps = clustered_neighbours_steps(src, tgt, k=4, nprobe=8)   # yields progress
    >>> fwd_sims, fwd_ids, bwd_sims, bwd_ids = run_steps(steps)

An inverted-file search (as FAISS's IVF) arranged so that every inner product is a BLAS
matrix product: both sides are assigned to the same k-means cells (source and target
vectors share one space); for each cell, the source vectors probing it are multiplied
with the target vectors living in it, and the other way round. Cosines of the neighbours
found are exact; only neighbours outside the `nprobe` nearest cells can be missed.

Why not FAISS's IndexIVFFlat on CPU: the faiss-cpu wheel here loads its generic build
(no AVX2), whose list scanning is scalar code; 100k x 100k took minutes where this takes
seconds (docs/benchmarks.md). On a GPU, `engine.mining.margin` uses FAISS.
"""

from __future__ import annotations

import math
from collections.abc import Generator

import numpy as np

from engine.encoders.base import l2_normalise


def kmeans_centroids(
    vectors: np.ndarray, n_cells: int, *, iterations: int = 6, sample_per_cell: int = 20, seed: int = 0
) -> np.ndarray:
    """Unit-length centroids [n_cells, d] of spherical k-means on a sample of `vectors`."""
    rng = np.random.default_rng(seed)
    size = min(len(vectors), sample_per_cell * n_cells)
    sample = vectors[rng.choice(len(vectors), size=size, replace=False)]
    centroids = sample[rng.choice(len(sample), size=n_cells, replace=False)].copy()
    for _ in range(iterations):
        assign = np.argmax(sample @ centroids.T, axis=1)
        sums = np.zeros_like(centroids)
        np.add.at(sums, assign, sample)
        empty = ~sums.any(axis=1)
        # An empty cell restarts at a random sample vector rather than staying useless.
        sums[empty] = sample[rng.choice(len(sample), size=int(empty.sum()))]
        centroids = l2_normalise(sums)
    return centroids


def nearest_cells(vectors: np.ndarray, centroids: np.ndarray, nprobe: int, chunk: int = 8192) -> np.ndarray:
    """The `nprobe` most similar cells of each vector, most similar first: [n, nprobe]."""
    out = np.empty((len(vectors), nprobe), dtype=np.int64)
    for start in range(0, len(vectors), chunk):
        sims = vectors[start : start + chunk] @ centroids.T  # [chunk, n_cells]
        top = np.argpartition(-sims, nprobe - 1, axis=1)[:, :nprobe]
        order = np.argsort(-np.take_along_axis(sims, top, axis=1), axis=1)
        out[start : start + chunk] = np.take_along_axis(top, order, axis=1)
    return out


def _search_cells(queries, probes, base, base_cell, k, n_cells) -> Generator[int, None, tuple]:
    """Top-k of each query among the base vectors of its probed cells.

    queries [nq, d], probes [nq, nprobe] cells, base [nb, d], base_cell [nb] cell of each.
    Yields cells done; returns (sims [nq, k], ids [nq, k]) best first, -inf / -1 padded.
    """
    nq, nprobe = probes.shape
    # Candidates per query: k per probed cell, written at the cell's slot in its probe row.
    cand_sims = np.full((nq, nprobe * k), -np.inf, dtype=np.float32)
    cand_ids = np.full((nq, nprobe * k), -1, dtype=np.int64)
    flat = probes.ravel()
    by_cell = np.argsort(flat, kind="stable")
    cell_bounds = np.searchsorted(flat[by_cell], np.arange(n_cells + 1))
    base_order = np.argsort(base_cell, kind="stable")
    base_bounds = np.searchsorted(base_cell[base_order], np.arange(n_cells + 1))
    for cell in range(n_cells):
        members = base_order[base_bounds[cell] : base_bounds[cell + 1]]
        entries = by_cell[cell_bounds[cell] : cell_bounds[cell + 1]]
        if len(members) and len(entries):
            rows, slots = np.divmod(entries, nprobe)
            sims = queries[rows] @ base[members].T  # [queries probing the cell, members]
            take = min(k, len(members))
            if take < len(members):
                top = np.argpartition(-sims, take - 1, axis=1)[:, :take]
            else:
                top = np.broadcast_to(np.arange(take), (len(rows), take))
            cols = slots[:, None] * k + np.arange(take)
            cand_sims[rows[:, None], cols] = np.take_along_axis(sims, top, axis=1)
            cand_ids[rows[:, None], cols] = members[top]
        if cell % 64 == 63:
            yield cell + 1
    best = np.argsort(-cand_sims, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(cand_sims, best, axis=1), np.take_along_axis(cand_ids, best, axis=1)


def clustered_neighbours_steps(
    src: np.ndarray, tgt: np.ndarray, k: int, *, nprobe: int = 8, seed: int = 0
) -> Generator[tuple[str, int, int], None, tuple]:
    """Yields (stage, done, total); returns (fwd_sims, fwd_ids, bwd_sims, bwd_ids) with
    k' = min(k, other side's size) columns, like two exact searches would."""
    n = len(src) + len(tgt)
    # ~2 sqrt(n) cells: coarse assignment and cell scanning both run as BLAS products here,
    # and fewer cells keep k-means cheap.
    n_cells = int(min(max(16, 2 * math.sqrt(n)), n // 4))
    nprobe = min(nprobe, n_cells)
    yield "cluster", 0, 1
    centroids = kmeans_centroids(np.concatenate([src, tgt]), n_cells, seed=seed)
    src_probes = nearest_cells(src, centroids, nprobe)
    tgt_probes = nearest_cells(tgt, centroids, nprobe)
    yield "cluster", 1, 1
    # A vector lives in its nearest cell (column 0) and searches its `nprobe` nearest.
    fwd_steps = _search_cells(src, src_probes, tgt, tgt_probes[:, 0], min(k, len(tgt)), n_cells)
    fwd = yield from _staged("search source", fwd_steps, n_cells)
    bwd_steps = _search_cells(tgt, tgt_probes, src, src_probes[:, 0], min(k, len(src)), n_cells)
    bwd = yield from _staged("search target", bwd_steps, n_cells)
    return fwd[0], fwd[1], bwd[0], bwd[1]


def _staged(stage: str, steps: Generator, total: int):
    while True:
        try:
            done = next(steps)
        except StopIteration as finished:
            return finished.value
        yield stage, done, total
