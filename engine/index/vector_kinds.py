"""The two FAISS index kinds behind engine.index.vectors.VectorIndex: building and reading them.

    index, kind, trained_count = build_kind("ivf", 384, ids, vectors, config)

"flat" is `IndexIDMap2(IndexFlatIP)` (exact); "ivf" is `IndexIVFFlat` with spherical k-means
lists (approximate, removable). Also reading vectors back by id, and the id selector
of a filtered search. Callers hold the locks; nothing here keeps state.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from engine.index.vector_config import VectorIndexConfig

Kind = Literal["flat", "ivf"]
BITMAP_IDS_PER_MEMBER = 64  # a filter bitmap may spend up to 8 bytes (64 ids) per id it holds


def new_flat(dim: int):
    import faiss

    return faiss.IndexIDMap2(faiss.IndexFlatIP(dim))


def build_kind(kind: Kind, dim: int, ids: np.ndarray, vectors: np.ndarray, config: VectorIndexConfig):
    """Returns (faiss index, kind, trained_count) holding exactly `ids`/`vectors`."""
    if kind == "flat":
        index = new_flat(dim)
        if len(ids):
            index.add_with_ids(vectors, ids)
        return index, "flat", 0
    return _build_ivf(dim, ids, vectors, config), "ivf", len(ids)


def _build_ivf(dim: int, ids: np.ndarray, vectors: np.ndarray, config: VectorIndexConfig):
    import faiss

    n = len(ids)
    nlist = max(1, min(n, round(config.lists_per_sqrt * math.sqrt(n))))
    index = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, nlist, faiss.METRIC_INNER_PRODUCT)
    index.cp.niter = config.train_iterations
    index.cp.seed = config.seed
    index.cp.spherical = True  # unit-norm centroids: assignment by cosine, like the search
    sample_size = min(n, nlist * config.train_points_per_list)
    index.cp.max_points_per_centroid = config.train_points_per_list
    sample = np.random.default_rng(config.seed).choice(n, sample_size, replace=False)
    index.train(vectors[np.sort(sample)])
    index.add_with_ids(vectors, ids)
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


def all_vectors(index, kind: Kind) -> tuple[np.ndarray, np.ndarray]:
    """(ids int64 [n], vectors float32 [n, d]) copied out of a flat or IVF-Flat index."""
    import faiss

    dim = index.d
    if kind == "flat":
        ids = faiss.vector_to_array(index.id_map).astype(np.int64)
        flat = faiss.downcast_index(index.index)
        vectors = faiss.vector_to_array(flat.codes).view(np.float32).reshape(-1, dim)
        return ids, vectors.copy()
    lists, id_parts, vector_parts = index.invlists, [], []
    for i in range(index.nlist):
        size = lists.list_size(i)
        if size == 0:
            continue
        id_parts.append(faiss.rev_swig_ptr(lists.get_ids(i), size).copy())
        codes = faiss.rev_swig_ptr(lists.get_codes(i), size * lists.code_size).copy()
        vector_parts.append(codes.view(np.float32).reshape(size, dim))
    if not id_parts:
        return np.empty(0, np.int64), np.empty((0, dim), np.float32)
    return np.concatenate(id_parts).astype(np.int64), np.concatenate(vector_parts)


def lookup_vectors(index, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ids int64 [n], vectors float32 [n, d]) of those of `ids` the index holds, in order.

    Needs the IVF index's direct map (VectorIndex installs one); the flat IndexIDMap2
    has its own.
    """
    try:
        return ids, index.reconstruct_batch(ids)
    except RuntimeError:  # some id is not held (removed meanwhile): one at a time
        found, vectors = [], []
        for i in ids.tolist():
            try:
                vectors.append(index.reconstruct(i))
            except RuntimeError:
                continue
            found.append(i)
    return np.asarray(found, np.int64), np.asarray(vectors, np.float32).reshape(-1, index.d)


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
