"""How the store keeps a vector: float16, little endian, one blob per passage and generation.

    >>> blobs = vector_blobs(vectors)                 # [n] bytes, 2 * dim each
    >>> decode_vectors(blobs, dim)                     # float32 [n, dim]

float16 is the store's one full-precision copy (the FAISS index holds 8-bit codes above a
few thousand passages and re-scores from these). Its rounding moves a cosine by ~1e-4
and changed no ranking measured (docs/benchmarks.md, "Vector index"). Libraries of
earlier versions hold float32 blobs (4 * dim bytes); they are read as they are, and
`Store.convert_vectors` rewrites them as float16 in one transaction.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.errors import StoreError

STORED = np.dtype("<f2")
EARLIER = np.dtype("<f4")  # what versions before the compressed index wrote


def vector_blobs(vectors: np.ndarray) -> list[bytes]:
    """One float16 blob per row of `vectors` [n, dim]."""
    rows = np.ascontiguousarray(vectors, dtype=STORED)
    return [row.tobytes() for row in rows]


def as_stored(vectors: np.ndarray) -> np.ndarray:
    """float32 [n, dim]: `vectors` as the store gives them back (rounded to float16)."""
    return np.asarray(vectors, dtype=STORED).astype(np.float32)


def decode_vectors(blobs: Sequence[bytes], dim: int) -> np.ndarray:
    """float32 [len(blobs), dim] of float16 blobs, or float32 ones of earlier versions
    (each blob read by its own length: a library being converted may hold both)."""
    if not blobs:
        return np.empty((0, dim), np.float32)
    sizes = {len(b) for b in blobs}
    if len(sizes) == 1:
        dtype = _dtype_of(sizes.pop(), dim)
        return np.frombuffer(b"".join(blobs), dtype=dtype).reshape(-1, dim).astype(np.float32)
    return np.stack([np.frombuffer(b, dtype=_dtype_of(len(b), dim)).astype(np.float32) for b in blobs])


def _dtype_of(size: int, dim: int) -> np.dtype:
    if size == STORED.itemsize * dim:
        return STORED
    if size == EARLIER.itemsize * dim:
        return EARLIER
    raise StoreError(f"a stored vector of {size} bytes is neither {dim} float16 nor float32 "
                     "values: the database is damaged (babelfind check)")
