"""How the vector index trades exactness, speed, memory and rebuild work: one config.

    >>> VectorIndex(384, config=VectorIndexConfig(exact_max=50_000, nprobe=32))

Read by engine.index.vectors (which kind to build, when to rebuild) and by
engine.index.vector_kinds (how to build each kind).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from engine.errors import InputError


@dataclass(frozen=True)
class VectorIndexConfig:
    """How the vector index trades exactness, speed, memory and rebuild work."""

    # Exact flat scan up to this many vectors: a flat scan costs n*d per query, ~2-3 ms
    # of CPU for 20k x 384 here but ~19 ms at 100k once it no longer fits in cache
    # (docs/benchmarks.md); above it IVF answers in ~2 ms with recall@10 ~0.997.
    exact_max: int = 20_000
    # Back to flat only below exact_max * shrink_ratio, so sizes wobbling around the
    # threshold do not rebuild on every add/remove.
    shrink_ratio: float = 0.5
    # Retrain IVF once the size is regrow_factor x the size its lists were trained on:
    # lists grow with n, so search time grows; retraining keeps lists ~sqrt(n) long.
    regrow_factor: float = 4.0
    # nlist = lists_per_sqrt * sqrt(n): balances coarse cost (nlist*d) against list
    # scanning cost (nprobe * n/nlist * d); the usual FAISS guidance is 1-16 x sqrt(n).
    lists_per_sqrt: float = 1.0
    # Lists scanned per query: the recall/speed knob. Search costs ~0.2 ms of CPU per 1k
    # 384-d vectors scanned here, so 16 lists of ~1k at 1M keep p50 under 5 ms; clustered
    # data reaches recall@10 >= 0.99 there (docs/benchmarks.md). Unstructured (uniform
    # random) data needs far more lists: IVF cannot help where vectors have no clusters.
    nprobe: int = 16
    # IVF holds 8-bit codes, whose scores are approximate: this many candidates beyond k
    # are re-scored with full-precision vectors, so the top k are ranked by exact cosine.
    # Code scores differ from exact ones by ~1e-3 (docs/benchmarks.md, "Vector index"),
    # far less than the gaps 64 ranks span.
    rescore_margin: int = 64
    # Above this many vectors the lists hold product-quantisation codes (`pq_bytes` bytes a
    # vector) instead of 8-bit ones (dim bytes): 10M passages in ~0.6 GB instead of 3.9
    # GB. Coarser codes need more candidates re-scored for the same recall: on 158k real
    # language-neutral e5 vectors, 256 gave recall@10 0.986 and 512 0.990 (4.2 ms a query;
    # the IVF lists' own recall, 0.9905, caps it), docs/benchmarks.md.
    pq_above: int = 2_000_000
    pq_bytes: int = 48
    pq_rescore_margin: int = 512
    # ...but never scan fewer than this many vectors per query. Real embeddings cluster far
    # less than synthetic mixtures: on 158k multilingual-e5-small vectors of Tatoeba
    # sentences (as encoded and centred per language alike) recall@10 was 0.93-0.94
    # scanning 10k and 0.991 scanning 50k, at 2.3 ms a query (docs/benchmarks.md,
    # "Compressed vector index"). Below 50k passages this scans every list (exact on the
    # 8-bit codes); past ~2.5M, 16 lists scan more anyway.
    min_scanned: int = 50_000
    # k-means sample per list (FAISS warns under 39) and iterations: enough for stable
    # centroids, small enough that training 1M vectors takes seconds on 2 cores.
    train_points_per_list: int = 64
    train_iterations: int = 10
    # Seed of the k-means sample and initialisation, so rebuilds are reproducible.
    seed: int = 1234
    # "auto": search on a GPU when FAISS has GPU support and sees a device; "never":
    # CPU only; "always": fail loudly when no GPU is usable rather than run slowly.
    use_gpu: Literal["auto", "never", "always"] = "auto"
    gpu_device: int = 0
    # FAISS OpenMP threads; None keeps FAISS's default. Process-wide FAISS state.
    omp_threads: int | None = None

    def __post_init__(self) -> None:
        if self.exact_max < 1 or self.nprobe < 1 or self.train_iterations < 1:
            raise InputError("exact_max, nprobe and train_iterations must be >= 1")
        if not 0.0 < self.shrink_ratio < 1.0:
            raise InputError(f"shrink_ratio must be in (0, 1), got {self.shrink_ratio}")
        if self.regrow_factor <= 1.0 or self.lists_per_sqrt <= 0.0:
            raise InputError("regrow_factor must be > 1 and lists_per_sqrt > 0")
        if self.train_points_per_list < 1 or self.min_scanned < 0 or self.rescore_margin < 0:
            raise InputError("train_points_per_list must be >= 1, min_scanned and "
                             "rescore_margin >= 0")
        if self.pq_bytes < 1 or self.pq_rescore_margin < 0 or self.pq_above < 1:
            raise InputError("pq_above and pq_bytes must be >= 1, pq_rescore_margin >= 0")
        if self.use_gpu not in ("auto", "never", "always"):
            raise InputError(f"use_gpu must be auto, never or always, got {self.use_gpu!r}")
