"""Vector index: a fast, disposable cache of the passage vectors kept in the database.

    index = VectorIndex.build(384, ids, vectors); scores, ids = index.search(queries, k=10)

Vectors are L2-normalised float32, so inner product is cosine similarity. Ids are the
caller's passage ids (int64 >= 0), never FAISS positions.

Which index holds the vectors (why not HNSW):
  * up to `exact_max` vectors: an exact flat scan (`IndexIDMap2(IndexFlatIP)`); nothing to
    train, perfect recall, and fast enough at that size.
  * above it: IVF with 8-bit codes (`IndexIVFScalarQuantizer`, spherical k-means lists,
    inner product): d + 8 bytes a vector in memory instead of 4*d + 8 (392 instead of
    1,544 at 384 dimensions). Its scores are approximate, so the best `k +
    config.rescore_margin` candidates are re-scored with full-precision vectors from an
    `ExactVectors` source (a library reads them from its store on demand) and the top k
    of those returned: the ranking is exact cosine among the candidates. IVF was chosen
    over HNSW because (1) it really removes vectors (`remove_ids`), where FAISS HNSW
    cannot and would need tombstones, a larger k at search time and periodic rebuilds;
    (2) it builds 1M x 384 in well under a minute on 2 cores, where HNSW takes many
    minutes; (3) FAISS can move it to a GPU; (4) it stores one code per vector with no
    graph links. Above `config.pq_above` vectors the lists hold product-quantisation codes
    ("ivf-pq", `pq_bytes` a vector) and `pq_rescore_margin` candidates are re-scored.
    `bench/bench_compressed.py` measures the latency, recall and memory.
The kind switches by itself: flat -> IVF when the size passes `exact_max`, IVF -> flat when
it falls below `exact_max * shrink_ratio`, and IVF is retrained when the size has grown
`regrow_factor` times since its lists were trained. A rebuild runs outside the search lock,
so searches keep answering from the old index meanwhile.

Files (`save`/`load`) hold one FAISS index followed by a JSON trailer (generation, dim,
kind, count, payload length and CRC32) and a magic tail: a truncated or damaged file fails
the check and `load` returns None, so the caller rebuilds from the database (as it does for
a file of an earlier format, such as the float32 IVF-Flat of earlier versions).
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np

from engine.errors import InputError
from engine.index.exact_vectors import ExactVectors, HeldVectors
from engine.index.vector_config import VectorIndexConfig
from engine.index.vector_file import read_index_file, write_index_file
from engine.index.vector_kinds import EXACT_KINDS, Kind, all_ids, build_kind, id_selector, new_flat, rescore_margin

log = logging.getLogger(__name__)

PLAIN_SPACE = "plain"  # the vectors as the encoder gave them


def gpu_available() -> bool:
    """True when the installed FAISS has GPU support and sees at least one device."""
    import faiss

    return hasattr(faiss, "StandardGpuResources") and faiss.get_num_gpus() > 0


_GPU_RESOURCES = None


def _gpu_resources():
    """One StandardGpuResources per process: it reserves GPU scratch memory."""
    global _GPU_RESOURCES
    if _GPU_RESOURCES is None:
        import faiss

        _GPU_RESOURCES = faiss.StandardGpuResources()
    return _GPU_RESOURCES


class VectorIndex:
    """Inner-product search over L2-normalised vectors keyed by int64 passage ids.

    Thread safe: one thread may search while another adds or removes. `exact` is where
    full-precision vectors are read (re-scoring, `vectors`, rebuilds); None keeps them in
    memory (`HeldVectors`), for an index used on its own.
    """

    def __init__(self, dim: int, *, config: VectorIndexConfig = VectorIndexConfig(),
                 exact: ExactVectors | None = None):
        if dim < 1:
            raise InputError(f"vector dimension must be >= 1, got {dim}")
        self._dim = int(dim)
        self._config = config
        self._exact = exact if exact is not None else HeldVectors(self._dim)
        self._lock = threading.RLock()  # guards the live FAISS index (search and mutation)
        self._writer = threading.Lock()  # one mutator at a time, also across rebuilds
        self._use_gpu = self._decide_gpu(config)
        if config.omp_threads is not None:
            import faiss

            faiss.omp_set_num_threads(config.omp_threads)
        self._install(new_flat(self._dim), "flat", trained_count=0)

    # ---- construction -------------------------------------------------------------

    @classmethod
    def build(
        cls,
        dim: int,
        ids: np.ndarray,
        vectors: np.ndarray,
        *,
        config: VectorIndexConfig = VectorIndexConfig(),
        exact: ExactVectors | None = None,
    ) -> VectorIndex:
        """Builds an index from these vectors, choosing flat or IVF by size.

            index = VectorIndex.build(384, passage_ids, passage_vectors)
        """
        index = cls(dim, config=config, exact=exact)
        ids, vectors = index._check_batch(ids, vectors)
        index._exact.add(ids, vectors)
        with index._writer, index._lock:
            index._install(*build_kind(index._kind_for(len(ids)), dim, lambda: [(ids, vectors)],
                                       len(ids), config))
        return index

    @classmethod
    def build_from(cls, dim: int, exact: ExactVectors, *,
                   config: VectorIndexConfig = VectorIndexConfig()) -> VectorIndex:
        """Builds an index of every vector `exact` holds, read in its batches (a store-backed
        source is never loaded whole)."""
        index = cls(dim, config=config, exact=exact)
        count = len(exact)
        with index._writer, index._lock:
            index._install(*build_kind(index._kind_for(count), dim, exact.batches, count, config))
        return index

    def _kind_for(self, count: int) -> Kind:
        if count <= self._config.exact_max:
            return "flat"
        return "ivf-pq" if count > self._config.pq_above else "ivf"

    @classmethod
    def load(
        cls,
        path: Path,
        *,
        expected_generation: int,
        dim: int,
        config: VectorIndexConfig = VectorIndexConfig(),
        space: str = PLAIN_SPACE,
        exact: ExactVectors | None = None,
    ) -> VectorIndex | None:
        """Loads a saved index; None when missing, damaged, of another dim or generation,
        of an earlier format, or holding vectors of another `space` (see `save`).
        `exact`: its full-precision vectors (the file has none)."""
        loaded = read_index_file(Path(path), expected_generation=expected_generation, dim=dim)
        if loaded is None:
            return None
        faiss_index, meta = loaded
        if meta.get("space", PLAIN_SPACE) != space:
            log.info("saved vector index %s holds %s vectors, not %s; rebuilding", path,
                     meta.get("space", PLAIN_SPACE), space)
            return None
        index = cls(dim, config=config, exact=exact)
        with index._lock:
            index._install(faiss_index, meta["kind"], trained_count=meta["trained_count"])
        return index

    def save(self, path: Path, generation: int, space: str = PLAIN_SPACE) -> None:
        """Writes the index atomically: a crash leaves either the old or the new file.

        `space` names what the vectors are (PLAIN_SPACE: the encoder's own; the caller's
        name for a transformed form, e.g. language-neutral ones), so a file of another
        form is rebuilt rather than searched.
        """
        if generation < 0:
            raise InputError(f"generation must be >= 0, got {generation}")
        # The writer lock keeps the index still while it is serialised; searches go on.
        with self._writer:
            meta = {"kind": self._kind, "trained_count": self._trained_count, "space": space}
            write_index_file(Path(path), self._index, generation=generation, meta=meta)

    # ---- queries ------------------------------------------------------------------

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def kind(self) -> Kind:
        return self._kind

    @property
    def exact(self) -> bool:
        """True when search scores come straight from full-precision vectors (no re-scoring)."""
        return self._kind in EXACT_KINDS

    @property
    def config(self) -> VectorIndexConfig:
        return self._config

    @property
    def effective_nprobe(self) -> int | None:
        """IVF lists an unfiltered search scans now; None for the flat index."""
        with self._lock:
            return None if self._kind == "flat" else self._nprobe()

    def set_nprobe(self, nprobe: int) -> None:
        """Changes config.nprobe, the IVF speed/recall knob; the flat index ignores it."""
        with self._lock:
            self._config = replace(self._config, nprobe=nprobe)  # validates nprobe >= 1
            self._gpu = None

    def __len__(self) -> int:
        with self._lock:
            return int(self._index.ntotal)

    def ids(self) -> np.ndarray:
        """All ids held, sorted ascending, int64 [n]."""
        with self._lock:
            return np.sort(all_ids(self._index, self._kind))

    def vectors(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ids int64 [n], vectors float32 [n, dim]) of those of `ids` (unique) the exact
        source holds, in the order given: full precision, whatever the index kind.

            found, vectors = index.vectors(np.array([7, 8]))   # exact cosines of a few ids
        """
        return self._exact.get(_as_ids(ids, "ids"))

    def search(
        self, queries: np.ndarray, k: int, *, candidate_filter: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-k by inner product; rows with fewer hits are padded with id -1, score -inf.

            scores, ids = index.search(encoder.encode(["cat"], kind="query"), k=10)

        Args:
            queries: float32 [m, dim], L2-normalised.
            k: hits per query, >= 1.
            candidate_filter: optional int64 ids; only these may be returned.
        Returns:
            scores float32 [m, k] (descending), ids int64 [m, k].
        """
        queries = self._check_vectors(queries, "queries")
        if k < 1:
            raise InputError(f"k must be >= 1, got {k}")
        selector_ids = None if candidate_filter is None else _as_ids(candidate_filter, "candidate_filter")
        with self._lock:
            exact = self.exact
            fetch = int(k) + rescore_margin(self._kind, self._config)
            scores, ids = self._search_locked(queries, fetch, selector_ids)
        scores[ids < 0] = -np.inf
        return (scores, ids) if exact else self._rescored(queries, scores, ids, int(k))

    def _rescored(self, queries: np.ndarray, scores: np.ndarray, ids: np.ndarray, k: int):
        """The top k of each row's candidates by exact cosine (full-precision vectors from
        the exact source); a candidate it lacks (removed meanwhile) keeps its code's score."""
        top_scores = np.full((len(queries), k), -np.inf, np.float32)
        top_ids = np.full((len(queries), k), -1, np.int64)
        for row, query in enumerate(queries):
            held = ids[row] >= 0
            candidates, row_scores = ids[row][held], scores[row][held]
            found, vectors = self._exact.get(candidates)
            row_scores[np.isin(candidates, found, assume_unique=True)] = vectors @ query
            order = np.argsort(-row_scores, kind="stable")[:k]
            top_scores[row, :len(order)], top_ids[row, :len(order)] = row_scores[order], candidates[order]
        return top_scores, top_ids

    def _search_locked(self, queries: np.ndarray, k: int, selector_ids: np.ndarray | None):
        import faiss

        if selector_ids is None:
            if self._use_gpu:
                return self._gpu_index().search(queries, k)
            if self._kind == "flat":
                return self._index.search(queries, k)
            return self._ivf_search(queries, k, faiss.SearchParametersIVF(nprobe=self._nprobe()))
        sel, _keep = id_selector(selector_ids)  # _keep: the memory FAISS reads, alive until we return
        if self._kind == "flat":
            return self._index.search(queries, k, params=faiss.SearchParameters(sel=sel))
        # With a selective filter few candidates lie in the usual lists; scanning lists in
        # proportion to n / |filter| keeps the expected candidate count (and so recall) as
        # without a filter, up to scanning every list, which is exact.
        selectivity = max(1, len(selector_ids)) / max(1, self._index.ntotal)
        nprobe = min(self._index.nlist, math.ceil(self._nprobe() / selectivity))
        return self._ivf_search(queries, k, faiss.SearchParametersIVF(sel=sel, nprobe=nprobe))

    def _ivf_search(self, queries: np.ndarray, k: int, params):
        # FAISS shares a batch out one query per thread; a single query (a search box's)
        # would then scan its lists on one thread, so its lists are shared out instead
        # (2 threads: 5.3 -> 3.1 ms at 100k passages; docs/benchmarks.md). The results
        # are the same.
        self._index.parallel_mode = 1 if len(queries) == 1 else 0
        return self._index.search(queries, k, params=params)

    def _nprobe(self) -> int:
        """IVF lists to scan: config.nprobe, raised to reach config.min_scanned vectors."""
        nlist, cfg = self._index.nlist, self._config
        mean_list = max(1.0, self._index.ntotal / nlist)
        return min(nlist, max(cfg.nprobe, math.ceil(cfg.min_scanned / mean_list)))

    # ---- mutation -----------------------------------------------------------------

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Adds vectors; an id already present gets the new vector (upsert).

            index.add(np.array([7, 8]), encoder.encode(["a", "b"]))
        """
        ids, vectors = self._check_batch(ids, vectors)
        if len(ids) == 0:
            return
        with self._writer:
            self._exact.add(ids, vectors)
            with self._lock:
                self._index.remove_ids(ids)
                self._index.add_with_ids(vectors, ids)
                self._gpu = None
            self._rebuild_if_needed()

    def remove(self, ids: np.ndarray) -> int:
        """Removes the given ids; returns how many were present. Unknown ids are ignored."""
        ids = _as_ids(ids, "ids")
        if len(ids) == 0:
            return 0
        with self._writer:
            self._exact.remove(ids)
            with self._lock:
                removed = int(self._index.remove_ids(ids))
                self._gpu = None
            self._rebuild_if_needed()
        return removed

    def _rebuild_if_needed(self) -> None:
        """Switches kind or retrains; caller holds the writer lock, not the search lock."""
        target = self._target_kind()
        if target is None:
            return
        count = len(self._exact)
        log.info("rebuilding vector index: %s -> %s at %d vectors", self._kind, target, count)
        built = build_kind(target, self._dim, self._exact.batches, count, self._config)
        with self._lock:
            self._install(*built)

    def _target_kind(self) -> Kind | None:
        """The kind to rebuild as now, or None. Codes switch with size only when the lists
        are retrained anyway (growth by regrow_factor), or when shrinking far below."""
        n, cfg = self._index.ntotal, self._config
        if self._kind == "flat":
            return self._kind_for(n) if n > cfg.exact_max else None
        if n < cfg.exact_max * cfg.shrink_ratio:
            return "flat"
        if n > self._trained_count * cfg.regrow_factor:
            return self._kind_for(n)
        if self._kind == "ivf-pq" and n < cfg.pq_above * cfg.shrink_ratio:
            return "ivf"
        return None

    def _install(self, faiss_index, kind: Kind, trained_count: int) -> None:
        """Makes `faiss_index` the live index; caller holds the lock (or is __init__).

        No id -> entry map on IVF (it cost ~50 bytes a vector): vectors by id come from
        the exact source, and `remove_ids` scans the lists' ids instead (~ms per 1M).
        """
        self._index, self._kind, self._trained_count = faiss_index, kind, trained_count
        self._gpu = None

    # ---- GPU ----------------------------------------------------------------------

    @staticmethod
    def _decide_gpu(config: VectorIndexConfig) -> bool:
        if config.use_gpu == "never":
            return False
        available = gpu_available()
        if config.use_gpu == "always" and not available:
            raise InputError("use_gpu='always' but FAISS has no GPU support or sees no GPU")
        return available

    def _gpu_index(self):
        """GPU copy of the live index for unfiltered search, re-made after each change.

        The CPU index stays the master (it is what gets saved and mutated); FAISS GPU
        indexes cannot remove ids, so copying after changes is the simple correct way.
        """
        if self._gpu is None:
            import faiss

            gpu = faiss.index_cpu_to_gpu(_gpu_resources(), self._config.gpu_device, self._index)
            if self._kind != "flat":
                faiss.GpuParameterSpace().set_index_parameter(gpu, "nprobe", self._nprobe())
            self._gpu = gpu
        return self._gpu

    # ---- input checks -------------------------------------------------------------

    def _check_batch(self, ids: np.ndarray, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ids = _as_ids(ids, "ids")
        vectors = self._check_vectors(vectors, "vectors")
        if len(ids) != len(vectors):
            raise InputError(f"{len(ids)} ids but {len(vectors)} vectors")
        if len(np.unique(ids)) != len(ids):
            raise InputError("ids must be unique within one batch")
        return ids, vectors

    def _check_vectors(self, vectors: np.ndarray, what: str) -> np.ndarray:
        vectors = np.asarray(vectors)
        if vectors.ndim != 2 or vectors.shape[1] != self._dim:
            raise InputError(f"{what} must have shape [n, {self._dim}], got {vectors.shape}")
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))  # [n]; no [n, d] temporary
        if not np.all(np.isfinite(norms)) or np.any(np.abs(norms - 1.0) > 1e-3):
            raise InputError(f"{what} must be finite and L2-normalised")
        return vectors


# ---- helpers -----------------------------------------------------------------------------


def _as_ids(ids: np.ndarray, what: str) -> np.ndarray:
    ids = np.asarray(ids)
    if ids.ndim != 1 or (ids.size and not np.issubdtype(ids.dtype, np.integer)):
        raise InputError(f"{what} must be a 1-D integer array, got {ids.dtype} {ids.shape}")
    ids = np.ascontiguousarray(ids, dtype=np.int64)
    if ids.size and ids.min() < 0:
        raise InputError(f"{what} must be >= 0 (-1 marks padding in results)")
    return ids
