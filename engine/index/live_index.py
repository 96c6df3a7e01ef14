"""The in-memory FAISS index of one generation, kept in step with the database.

On open it loads the saved file if that file reflects the database's current version
of the generation; otherwise (the app was killed, the file is damaged) it rebuilds the
index from the stored vectors, without re-encoding anything.

It also carries the keyword index (engine.index.keyword_index), so that every change the
indexer mirrors into FAISS reaches the keyword index through the same `apply`, and every
save stamps both with the same database version.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from engine.index.keyword_index import KeywordIndex
from engine.store import GenerationInfo, Store
from engine.index.vectors import VectorIndex, VectorIndexConfig

log = logging.getLogger(__name__)


class LiveIndex:
    """A generation's vectors in FAISS; `apply` after each database commit."""

    def __init__(self, store: Store, generation: GenerationInfo, folder: Path, index: VectorIndex,
                 config: VectorIndexConfig, keywords: KeywordIndex | None = None):
        self.store = store
        self.keywords = keywords
        self.generation = generation
        self.folder = folder
        self.index = index
        self.config = config
        self._dirty = False
        self._last_save = time.monotonic()

    @classmethod
    def open(cls, store: Store, generation: GenerationInfo, folder: Path,
             config: VectorIndexConfig | None = None, keywords: KeywordIndex | None = None) -> LiveIndex:
        """Loads or rebuilds the vectors; `keywords` (opened for this generation) rides along."""
        config = config or VectorIndexConfig()
        folder.mkdir(parents=True, exist_ok=True)
        path = cls.file_for(folder, generation.id)
        index = VectorIndex.load(path, expected_generation=generation.version, dim=generation.dim)
        live = cls(store, generation, folder, index, config, keywords) if index is not None else None
        if live is None:
            log.info("rebuilding the vector index of generation %d from stored vectors", generation.id)
            live = cls(store, generation, folder, cls._rebuild(store, generation, config), config, keywords)
            live.save()
        return live

    @staticmethod
    def file_for(folder: Path, generation_id: int) -> Path:
        return folder / f"generation-{generation_id}.faiss"

    @staticmethod
    def _rebuild(store: Store, generation: GenerationInfo, config: VectorIndexConfig) -> VectorIndex:
        parts = list(store.iter_vectors(generation.id, generation.dim))
        if not parts:
            return VectorIndex(generation.dim, config=config)
        ids = np.concatenate([p[0] for p in parts])
        vectors = np.concatenate([p[1] for p in parts])
        return VectorIndex.build(generation.dim, ids, vectors, config=config)

    def apply(self, removed: Sequence[int], added: Sequence[int], vectors: np.ndarray | None) -> None:
        """Mirrors a committed change: drop `removed` ids, then add `added` with `vectors`."""
        if len(removed):
            self.index.remove(np.asarray(removed, dtype=np.int64))
        if len(added):
            self.index.add(np.asarray(added, dtype=np.int64), vectors)
        if self.keywords is not None:
            self.keywords.apply(removed, added)
        self._dirty = self._dirty or bool(len(removed) or len(added))

    def save(self) -> None:
        """Writes the index atomically, stamped with the database's current version."""
        current = self.store.generation_by_id(self.generation.id)
        if current is None:
            return
        self.generation = current
        self.index.save(self.file_for(self.folder, current.id), generation=current.version)
        if self.keywords is not None:
            self.keywords.stamp(current)
        self._dirty = False
        self._last_save = time.monotonic()

    def save_if_due(self, every_s: float) -> None:
        if self._dirty and time.monotonic() - self._last_save >= every_s:
            self.save()

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self.index.search(queries, k)

    def __len__(self) -> int:
        return len(self.index)

    def delete_file(self) -> None:
        self.file_for(self.folder, self.generation.id).unlink(missing_ok=True)
