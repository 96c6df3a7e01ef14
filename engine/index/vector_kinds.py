"""The FAISS index kinds behind engine.index.vectors.VectorIndex: building and reading them.

    index, kind, trained_count = build_kind("ivf", 384, lambda: [(ids, vectors)], len(ids), config)

"flat" is `IndexIDMap2(IndexFlatIP)`: exact float32 vectors, for small libraries. "ivf" is
`IndexIVFScalarQuantizer`: spherical k-means lists of 8-bit codes (one byte per dimension,
ranges trained per dimension on the residuals to each list's centroid), a quarter of the
float32 bytes. "ivf-pq" is `IndexIVFPQ`, for the largest libraries: the same lists holding
product-quantisation codes of the residuals (`pq_bytes` sub-vectors of 8 bits). Scores
from codes are approximate, so VectorIndex re-scores the candidates with full-precision
vectors (engine.index.exact_vectors). Also the id selector of a filtered search. Callers
hold the locks; nothing here keeps state.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Literal

import numpy as np

from engine.index.vector_config import VectorIndexConfig

Kind = Literal["flat", "ivf", "ivf-pq"]
Batches = Callable[[], Iterable[tuple[np.ndarray, np.ndarray]]]  # fresh (ids, vectors) batches
BITMAP_IDS_PER_MEMBER = 64  # a filter bitmap may spend up to 8 bytes (64 ids) per id it holds
EXACT_KINDS = frozenset({"flat"})  # kinds whose scores are exact cosines


def new_flat(dim: int):
    import faiss

    return faiss.IndexIDMap2(faiss.IndexFlatIP(dim))


def build_kind(kind: Kind, dim: int, batches: Batches, count: int, config: VectorIndexConfig):
    """Returns (faiss index, kind, trained_count) holding exactly the vectors `batches()`
    yields (`count` of them). An IVF index reads them twice: once for the k-means sample,
    once to add them, so a store-backed source never holds all of them in memory."""
    if kind == "flat":
        index = new_flat(dim)
        for ids, vectors in batches():
            index.add_with_ids(vectors, ids)
        return index, "flat", 0
    index = _trained_ivf(kind, dim, _training_sample(batches, count, config), count, config)
    for ids, vectors in batches():
        index.add_with_ids(vectors, ids)
    return index, kind, count


def rescore_margin(kind: Kind, config: VectorIndexConfig) -> int:
    """Candidates beyond k to re-score: none for exact scores, more for coarser codes."""
    return {"flat": 0, "ivf": config.rescore_margin, "ivf-pq": config.pq_rescore_margin}[kind]


def pq_sub_vectors(dim: int, wanted: int) -> int:
    """The largest number of PQ sub-vectors <= `wanted` that divides `dim`."""
    return max(m for m in range(1, min(wanted, dim) + 1) if dim % m == 0)


def _lists(count: int, config: VectorIndexConfig) -> int:
    return max(1, min(count, round(config.lists_per_sqrt * math.sqrt(count))))


def _training_sample(batches: Batches, count: int, config: VectorIndexConfig) -> np.ndarray:
    """The k-means sample: `train_points_per_list` vectors per list, at seeded positions."""
    size = min(count, _lists(count, config) * config.train_points_per_list)
    chosen = np.sort(np.random.default_rng(config.seed).choice(count, size, replace=False))
    parts, start = [], 0
    for _ids, vectors in batches():
        lo, hi = np.searchsorted(chosen, [start, start + len(vectors)])
        parts.append(vectors[chosen[lo:hi] - start])
        start += len(vectors)
    return np.ascontiguousarray(np.concatenate(parts)) if parts else np.empty((0, 0), np.float32)


def _trained_ivf(kind: Kind, dim: int, sample: np.ndarray, count: int, config: VectorIndexConfig):
    import faiss

    nlist = _lists(count, config)
    if kind == "ivf-pq":
        index = faiss.IndexIVFPQ(faiss.IndexFlatIP(dim), dim, nlist, pq_sub_vectors(dim, config.pq_bytes),
                                 8, faiss.METRIC_INNER_PRODUCT)
    else:
        index = faiss.IndexIVFScalarQuantizer(faiss.IndexFlatIP(dim), dim, nlist,
                                              faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)
    index.cp.niter = config.train_iterations
    index.cp.seed = config.seed
    index.cp.spherical = True  # unit-norm centroids: assignment by cosine, like the search
    index.cp.max_points_per_centroid = config.train_points_per_list
    index.train(sample)
    return index


def all_ids(index, kind: Kind) -> np.ndarray:
    import faiss

    if kind == "flat":
        return faiss.vector_to_array(index.id_map).astype(np.int64)
    lists = index.invlists
    parts = [
        faiss.rev_swig_ptr(lists.get_ids(i), lists.list_size(i)).copy()
        for i in range(index.nlist)
        if lists.list_size(i)
    ]
    return np.concatenate(parts).astype(np.int64) if parts else np.empty(0, np.int64)


def flat_vectors(index) -> tuple[np.ndarray, np.ndarray]:
    """(ids int64 [n], vectors float32 [n, d]) copied out of a flat index (exact)."""
    import faiss

    ids = faiss.vector_to_array(index.id_map).astype(np.int64)
    flat = faiss.downcast_index(index.index)
    return ids, faiss.vector_to_array(flat.codes).view(np.float32).reshape(-1, index.d).copy()


def id_selector(ids: np.ndarray):
    """(FAISS id selector for `ids`, the array it reads, to keep alive during the search).

    A bitmap (bit id % 8 of byte id // 8) where the ids are dense enough, as passage ids
    (autoincrement) are: made in microseconds, a bit test per candidate. IDSelectorBatch
    builds a hash set of the ids on every search (~1.5 ms for 25k); it stays for sparse
    ids, where a bitmap would be large.
    """
    import faiss

    top = int(ids.max()) if len(ids) else 0
    if top >= BITMAP_IDS_PER_MEMBER * len(ids) + (1 << 20):
        return faiss.IDSelectorBatch(len(ids), faiss.swig_ptr(ids)), ids
    mask = np.zeros(top + 1, bool)
    mask[ids] = True
    bitmap = np.packbits(mask, bitorder="little")
    return faiss.IDSelectorBitmap(len(bitmap), faiss.swig_ptr(bitmap)), bitmap
