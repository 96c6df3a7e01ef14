"""The encoder interface every part of Babelfind uses.

    >>> vectors = encoder.encode(["Hello world", "Hallo Welt"], kind="passage")
    >>> vectors.shape, vectors.dtype   # ((2, encoder.dim), float32), rows L2-normalised
"""

from __future__ import annotations

from typing import Literal, Protocol, Sequence, runtime_checkable

import numpy as np

# e5-style models read "query: " and "passage: " prefixes; others ignore the kind.
TextKind = Literal["query", "passage"]


@runtime_checkable
class Encoder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    name: str  # registry name; recorded with every index so a mismatch is caught
    dim: int

    def encode(self, texts: Sequence[str], kind: TextKind = "passage") -> np.ndarray:
        """Returns a float32 array [len(texts), dim] with unit-length rows, in input order."""
        ...


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero); float32 out."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)
