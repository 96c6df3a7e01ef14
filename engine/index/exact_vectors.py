"""Where a vector index reads full-precision vectors: to re-score the candidates of its
compressed kind, to answer `vectors(ids)`, and to rebuild itself.

    >>> held = HeldVectors(384); held.add(ids, vectors); held.get(np.array([7]))

`ExactVectors` is what engine.index.vectors.VectorIndex needs. A library's index reads
them from the store on demand (engine.index.live_index.StoredVectors), so a search
process keeps only the compressed codes in memory; `HeldVectors` keeps them in memory,
for an index used on its own (benchmarks, tests).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

import numpy as np


class ExactVectors(Protocol):
    """Full-precision vectors by passage id, kept in step with the index."""

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """The index added these (an upsert); a source that stores them elsewhere ignores it."""

    def remove(self, ids: np.ndarray) -> None:
        """The index removed these."""

    def get(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ids int64 [m], vectors float32 [m, d]) of those of `ids` (unique) it has, in
        the order given."""

    def batches(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Every vector, as (ids, vectors) batches, to rebuild the index from."""

    def __len__(self) -> int: ...


class HeldVectors:
    """Full-precision vectors kept in memory, sorted by id (an index on its own)."""

    def __init__(self, dim: int):
        # (ids sorted, vectors): one attribute, swapped whole, so a reader in another
        # thread never sees the ids of one state with the vectors of another
        self._held = (np.empty(0, np.int64), np.empty((0, dim), np.float32))

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        held_ids, held = self._held
        keep = ~np.isin(held_ids, ids)
        merged_ids = np.concatenate([held_ids[keep], ids])
        order = np.argsort(merged_ids, kind="stable")
        self._held = merged_ids[order], np.concatenate([held[keep], vectors])[order]

    def remove(self, ids: np.ndarray) -> None:
        held_ids, held = self._held
        keep = ~np.isin(held_ids, ids)
        self._held = held_ids[keep], held[keep]

    def get(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        held_ids, held = self._held
        rows = np.searchsorted(held_ids, ids)
        found = rows < len(held_ids)
        found[found] = held_ids[rows[found]] == ids[found]
        return ids[found], held[rows[found]]

    def batches(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        yield self._held

    def __len__(self) -> int:
        return len(self._held[0])
