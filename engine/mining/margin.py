"""Margin-based bitext mining over two sets of sentence vectors (Artetxe & Schwenk, 2019).

    >>> pairs = mine_vectors(src_vecs, tgt_vecs, k=4, margin="ratio", mode="max", threshold=1.06)
    >>> pairs[0]                         # Pair(src_index=12, tgt_index=3, score=1.21), best first

Candidates are the k nearest neighbours of every sentence in the other language, in both
directions. A candidate pair (x, y) is scored against the average similarity of each side
to its own k nearest neighbours:

    ratio:    cos(x, y) / ((avg_k(x) + avg_k(y)) / 2)
    distance: cos(x, y) - (avg_k(x) + avg_k(y)) / 2
    absolute: cos(x, y)

where avg_k(x) = mean cos of x with its k nearest neighbours on the other side, so
(avg_k(x) + avg_k(y)) / 2 = sum_{NN_k(x)} cos / 2k + sum_{NN_k(y)} cos / 2k.

The retrieval modes follow LASER's `mine_bitexts` (`--retrieval`):
    forward:   for each source sentence, its best-scoring target candidate;
    backward:  for each target sentence, its best-scoring source candidate;
    intersect: forward pairs whose target chooses the same source backward;
    max:       forward and backward pairs together, best score first, keeping a pair
               only when neither sentence was used by a better one.
The threshold keeps pairs scoring strictly above it (LASER's `>`).

No torch and no Qt here: numpy plus FAISS. Neighbours are searched exactly (FAISS
IndexFlatIP) up to `exact_max_products` query x base pairs, approximately above: FAISS IVF
on a GPU, the BLAS-based clustered search of `engine.mining.knn_clusters` on CPU.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Callable, Generator, Literal

import numpy as np

log = logging.getLogger(__name__)

Margin = Literal["ratio", "distance", "absolute"]
Mode = Literal["max", "intersect", "forward", "backward"]
MARGINS: tuple[str, ...] = ("ratio", "distance", "absolute")
MODES: tuple[str, ...] = ("max", "intersect", "forward", "backward")

# Exact search costs n_queries * n_base dot products. Two shared CPU cores do about
# 2e9 of 384-d products in ~20 s; above that the IVF index keeps 100k x 100k near a minute.
# A GPU does exact search far beyond that, so its limit is about 1M x 1M.
CPU_EXACT_MAX_PRODUCTS = 2_000_000_000
GPU_EXACT_MAX_PRODUCTS = 1_000_000_000_000
QUERY_CHUNK = 4096  # queries per FAISS call; progress and cancellation happen between calls


@dataclass(frozen=True)
class Pair:
    """One mined pair: row `src_index` of the source vectors with row `tgt_index` of the target."""

    src_index: int
    tgt_index: int
    score: float


@dataclass(frozen=True)
class MiningConfig:
    """How nearest neighbours are searched; the defaults pick exact or IVF by input size.

    Attributes:
        exact_max_products: search exactly while n_queries * n_base is at most this;
            None picks CPU_EXACT_MAX_PRODUCTS or GPU_EXACT_MAX_PRODUCTS.
        ivf_nprobe: IVF lists visited per query above the exact limit.
        use_gpu: None = use a GPU when FAISS offers one.
        seed: seeds the IVF training sample, so results repeat.
    """

    exact_max_products: int | None = None
    ivf_nprobe: int = 16
    use_gpu: bool | None = None
    seed: int = 0


@dataclass(frozen=True)
class Neighbours:
    """k nearest neighbours both ways; sims are cosines, ids -1 where fewer were found.

    fwd_sims/fwd_ids: [n_src, k_fwd] source -> target; bwd_sims/bwd_ids: [n_tgt, k_bwd].
    """

    fwd_sims: np.ndarray
    fwd_ids: np.ndarray
    bwd_sims: np.ndarray
    bwd_ids: np.ndarray

    @property
    def fwd_mean(self) -> np.ndarray:
        return _mean_valid(self.fwd_sims, self.fwd_ids)

    @property
    def bwd_mean(self) -> np.ndarray:
        return _mean_valid(self.bwd_sims, self.bwd_ids)


def _mean_valid(sims: np.ndarray, ids: np.ndarray) -> np.ndarray:
    valid = ids >= 0
    counts = np.maximum(valid.sum(axis=1), 1)
    return np.where(valid, sims, 0.0).sum(axis=1) / counts


def apply_margin(cos: np.ndarray, avg: np.ndarray, margin: str) -> np.ndarray:
    """The margin function of `margin` on cosines and their neighbourhood averages."""
    if margin == "ratio":
        # avg can only be <= 0 for degenerate vectors; keep the sign of cos then.
        return cos / np.where(np.abs(avg) > 1e-9, avg, 1e-9)
    if margin == "distance":
        return cos - avg
    if margin == "absolute":
        return np.asarray(cos, dtype=np.float64)
    raise ValueError(f"unknown margin {margin!r}; choose one of {', '.join(MARGINS)}")


def gpu_available() -> bool:
    import faiss

    return hasattr(faiss, "get_num_gpus") and faiss.get_num_gpus() > 0


def _build_index(base: np.ndarray, n_queries: int, config: MiningConfig):
    """A FAISS inner-product index over `base` [n, d]: flat when small enough, else IVF."""
    import faiss

    n, dim = base.shape
    use_gpu = gpu_available() if config.use_gpu is None else config.use_gpu
    limit = config.exact_max_products
    if limit is None:
        limit = GPU_EXACT_MAX_PRODUCTS if use_gpu else CPU_EXACT_MAX_PRODUCTS
    if n * n_queries <= limit or n < 1024:
        index = faiss.IndexFlatIP(dim)
        if use_gpu:
            index = faiss.index_cpu_to_all_gpus(index)
        index.add(base)
        return index
    # About 4 sqrt(n) lists; 10 k-means rounds on ~30 vectors per list place them well
    # enough for neighbour search at a fraction of FAISS's default training cost.
    nlist = int(min(65536, max(16, 4 * math.sqrt(n))))
    quantizer = faiss.IndexFlatIP(dim)
    index = faiss.IndexIVFFlat(quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
    rng = np.random.default_rng(config.seed)
    sample = base[np.sort(rng.choice(n, size=min(n, 30 * nlist), replace=False))]
    index.cp.seed = config.seed
    index.cp.niter = 10
    index.cp.min_points_per_centroid = 1  # the sample is sized on purpose; no warning
    index.train(sample)
    index.add(base)
    index.nprobe = min(config.ivf_nprobe, nlist)
    if use_gpu:
        index = faiss.index_cpu_to_all_gpus(index)  # the clone keeps nprobe
    log.info("IVF index: %d vectors, %d lists, nprobe %d", n, nlist, index.nprobe)
    return index


def knn_steps(
    queries: np.ndarray, base: np.ndarray, k: int, config: MiningConfig = MiningConfig()
) -> Generator[tuple[int, int], None, tuple[np.ndarray, np.ndarray]]:
    """Yields (queries done, total) per chunk; returns (sims [n_q, k'], ids [n_q, k'])
    with k' = min(k, len(base)), best first. Use `result = yield from knn_steps(...)`."""
    k = min(k, len(base))
    index = _build_index(base, len(queries), config)
    sims = np.empty((len(queries), k), dtype=np.float32)
    ids = np.empty((len(queries), k), dtype=np.int64)
    for start in range(0, len(queries), QUERY_CHUNK):
        stop = min(start + QUERY_CHUNK, len(queries))
        sims[start:stop], ids[start:stop] = index.search(queries[start:stop], k)
        yield stop, len(queries)
    return sims, ids


def run_steps(steps: Generator, on_progress: Callable[..., None] | None = None):
    """Exhausts a step generator (optionally reporting each step) and returns its value."""
    while True:
        try:
            step = next(steps)
        except StopIteration as done:
            return done.value
        if on_progress is not None:
            on_progress(*step)


def knn(queries: np.ndarray, base: np.ndarray, k: int, config: MiningConfig = MiningConfig()):
    """(sims, ids) of the k nearest rows of `base` for each row of `queries` (inner product)."""
    return run_steps(knn_steps(_as_f32(queries), _as_f32(base), k, config))


def _as_f32(vectors: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(vectors, dtype=np.float32)


def _check_vectors(src: np.ndarray, tgt: np.ndarray, k: int) -> None:
    if src.ndim != 2 or tgt.ndim != 2 or src.shape[1] != tgt.shape[1]:
        raise ValueError(f"need two [n, d] arrays of the same d, got {src.shape} and {tgt.shape}")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")


def candidate_scores(nb: Neighbours, margin: str) -> tuple[np.ndarray, np.ndarray]:
    """Margin scores of every candidate: (fwd [n_src, k], bwd [n_tgt, k]); -inf for no candidate."""
    fwd_mean, bwd_mean = nb.fwd_mean, nb.bwd_mean
    fwd_ids = np.maximum(nb.fwd_ids, 0)
    bwd_ids = np.maximum(nb.bwd_ids, 0)
    fwd = apply_margin(nb.fwd_sims, (fwd_mean[:, None] + bwd_mean[fwd_ids]) / 2, margin)
    bwd = apply_margin(nb.bwd_sims, (bwd_mean[:, None] + fwd_mean[bwd_ids]) / 2, margin)
    return np.where(nb.fwd_ids >= 0, fwd, -np.inf), np.where(nb.bwd_ids >= 0, bwd, -np.inf)


def select_pairs(nb: Neighbours, margin: str, mode: str, threshold: float | None) -> list[Pair]:
    """Pairs chosen by `mode` from the scored candidates, best first (ties: lower src first)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    fwd_scores, bwd_scores = candidate_scores(nb, margin)
    n_src, n_tgt = len(fwd_scores), len(bwd_scores)
    fwd_pick = fwd_scores.argmax(axis=1)
    fwd_best = nb.fwd_ids[np.arange(n_src), fwd_pick]  # [n_src] best target per source
    fwd_score = fwd_scores[np.arange(n_src), fwd_pick]
    bwd_pick = bwd_scores.argmax(axis=1)
    bwd_best = nb.bwd_ids[np.arange(n_tgt), bwd_pick]  # [n_tgt] best source per target
    bwd_score = bwd_scores[np.arange(n_tgt), bwd_pick]

    if mode == "forward":
        src, tgt, score = np.arange(n_src), fwd_best, fwd_score
    elif mode == "backward":
        src, tgt, score = bwd_best, np.arange(n_tgt), bwd_score
    elif mode == "intersect":
        agree = (fwd_best >= 0) & (bwd_best[np.maximum(fwd_best, 0)] == np.arange(n_src))
        src, tgt, score = np.flatnonzero(agree), fwd_best[agree], fwd_score[agree]
    else:
        src, tgt, score = _max_retrieval(fwd_best, fwd_score, bwd_best, bwd_score)
    keep = np.isfinite(score) & (tgt >= 0) & (src >= 0)
    if threshold is not None:
        keep &= score > threshold
    order = np.lexsort((src[keep], -score[keep]))
    return [
        Pair(int(s), int(t), float(v))
        for s, t, v in zip(src[keep][order], tgt[keep][order], score[keep][order])
    ]


def _max_retrieval(fwd_best, fwd_score, bwd_best, bwd_score):
    """Forward and backward pairs, best first, each sentence used by its best pair only."""
    n_src, n_tgt = len(fwd_best), len(bwd_best)
    src = np.concatenate([np.arange(n_src), bwd_best])
    tgt = np.concatenate([fwd_best, np.arange(n_tgt)])
    score = np.concatenate([fwd_score, bwd_score])
    # Stable sort: equal scores keep forward pairs before backward ones, as in LASER.
    order = np.argsort(-score, kind="stable")
    used_src = np.zeros(n_src, dtype=bool)
    used_tgt = np.zeros(n_tgt, dtype=bool)
    chosen = []
    for i in order.tolist():
        s, t = src[i], tgt[i]
        if s < 0 or t < 0 or used_src[s] or used_tgt[t]:
            continue
        used_src[s] = used_tgt[t] = True
        chosen.append(i)
    chosen = np.asarray(chosen, dtype=np.int64)
    return src[chosen], tgt[chosen], score[chosen]


def neighbours_steps(
    src: np.ndarray, tgt: np.ndarray, k: int, config: MiningConfig = MiningConfig()
) -> Generator[tuple[str, int, int], None, Neighbours]:
    """Yields ("search source", done, total) then ("search target", ...); returns Neighbours."""
    src, tgt = _as_f32(src), _as_f32(tgt)
    _check_vectors(src, tgt, k)
    if _use_clusters(len(src), len(tgt), config):
        from engine.mining.knn_clusters import clustered_neighbours_steps

        found = yield from clustered_neighbours_steps(src, tgt, k, nprobe=config.ivf_nprobe, seed=config.seed)
        return Neighbours(*found)
    fwd = yield from _labelled("search source", knn_steps(src, tgt, k, config))
    bwd = yield from _labelled("search target", knn_steps(tgt, src, k, config))
    return Neighbours(fwd[0], fwd[1], bwd[0], bwd[1])


def _use_clusters(n_src: int, n_tgt: int, config: MiningConfig) -> bool:
    """Large inputs on CPU go to the BLAS-based clustered search (engine.mining.knn_clusters)."""
    use_gpu = gpu_available() if config.use_gpu is None else config.use_gpu
    limit = config.exact_max_products
    if limit is None:
        limit = GPU_EXACT_MAX_PRODUCTS if use_gpu else CPU_EXACT_MAX_PRODUCTS
    return not use_gpu and n_src * n_tgt > limit and min(n_src, n_tgt) >= 1024


def _labelled(stage: str, steps: Generator):
    """Re-yields (done, total) steps as (stage, done, total); returns the steps' value."""
    while True:
        try:
            done, total = next(steps)
        except StopIteration as finished:
            return finished.value
        yield stage, done, total


def mine_vectors(
    src_vecs: np.ndarray,
    tgt_vecs: np.ndarray,
    *,
    k: int = 4,
    margin: str = "ratio",
    mode: str = "max",
    threshold: float | None = None,
    config: MiningConfig = MiningConfig(),
) -> list[Pair]:
    """Mined pairs between L2-normalised vectors src [n, d] and tgt [m, d], best first.

    Example: mine_vectors(x, y, mode="intersect") -> [Pair(0, 2, 1.31), Pair(1, 0, 1.12)]
    """
    if len(src_vecs) == 0 or len(tgt_vecs) == 0:
        return []
    nb = run_steps(neighbours_steps(src_vecs, tgt_vecs, k, config))
    return select_pairs(nb, margin, mode, threshold)


def increasing_fraction(pairs: list[tuple[int, int]]) -> float:
    """Share of pairs on the longest chain increasing in both source and target index.

    Example: increasing_fraction([(0, 0), (1, 5), (2, 1), (3, 2)]) == 0.75

    1.0 for documents that follow each other sentence by sentence; about 2/sqrt(n) for
    pairs in random order. Pairs are sorted by source index (ties by target) first.
    """
    if not pairs:
        return 0.0
    import bisect

    tails: list[int] = []  # tails[L] = smallest target ending an increasing chain of L+1
    for _, tgt in sorted(pairs):
        pos = bisect.bisect_left(tails, tgt)
        if pos == len(tails):
            tails.append(tgt)
        else:
            tails[pos] = tgt
    return len(tails) / len(pairs)
