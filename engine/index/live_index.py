"""The in-memory FAISS index of one generation, kept in step with the database.

On open it loads the saved file if that file reflects the database's current version
of the generation; otherwise (the app was killed, the file is damaged) it rebuilds the
index from the stored vectors, without re-encoding anything.

`version` is the generation version the in-memory index actually holds, and the file is
stamped with that, never with whatever the database says at save time: another process
may have committed passages this one never saw (the file would then claim them and the
next open would trust it). Writers hold the library's write lock (engine.locking) and
call `refresh()` after taking it, so they start from everything committed before.

It also carries the keyword index (engine.index.keyword_index), so that every change the
indexer mirrors into FAISS reaches the keyword index through the same `apply`, and every
save stamps both with the same version. The passages' hubness penalties
(engine.index.hubness) ride along the same way in a side file beside the FAISS file; they
need the generation's model once (to encode the reference queries), so `ensure_hubness`
makes them on first use by a caller that has the model loaded, never at open.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from engine.index.hubness import HubnessConfig, HubnessPenalties, QueryEncoder, reference_vectors
from engine.index.keyword_index import KeywordIndex
from engine.store import GenerationInfo, Store
from engine.store.search_queries import vectors_of
from engine.index.vector_file import damage, read_trailer
from engine.index.vectors import VectorIndex
from engine.index.vector_config import VectorIndexConfig
from engine.private import private_folder
from engine.repairs import repaired

log = logging.getLogger(__name__)


class LiveIndex:
    """A generation's vectors in FAISS; `apply` after each database commit."""

    def __init__(self, store: Store, generation: GenerationInfo, folder: Path, index: VectorIndex,
                 config: VectorIndexConfig, keywords: KeywordIndex | None = None,
                 hubness_config: HubnessConfig | None = HubnessConfig()):
        self.store = store
        self.keywords = keywords
        self.generation = generation
        self.version = generation.version  # what `index` holds (see the module docstring)
        self.folder = folder
        self.index = index
        self.config = config
        self._dirty = False
        self._last_save = time.monotonic()
        # None: plain cosine scores (no config, or not measured yet: see ensure_hubness)
        self.hubness: HubnessPenalties | None = None
        self.hubness_config = hubness_config
        self._hubness_reference: tuple[np.ndarray, list[str]] | None = None  # kept from the side file
        self._hubness_lock = threading.Lock()  # an indexing thread applies while a search ensures

    @classmethod
    def open(cls, store: Store, generation: GenerationInfo, folder: Path,
             config: VectorIndexConfig | None = None, keywords: KeywordIndex | None = None,
             hubness_config: HubnessConfig | None = HubnessConfig()) -> LiveIndex:
        """Loads or rebuilds the vectors; `keywords` (opened for this generation) rides along.

        The hubness penalties come from their side file when it holds this version;
        otherwise `ensure_hubness` measures them on first use. `hubness_config` None:
        plain cosine scores.
        """
        config = config or VectorIndexConfig()
        private_folder(folder)
        path = cls.file_for(folder, generation.id)
        index = VectorIndex.load(path, expected_generation=generation.version, dim=generation.dim)
        live = cls(store, generation, folder, index, config, keywords, hubness_config) if index is not None else None
        if live is None:
            # `generation.version` was read before the vectors: if a writer commits while
            # they are read, the file's stamp is older than the database and is redone.
            if (problem := damage(path, generation.version)) is not None:
                repaired("the vector index %s %s; rebuilding it from the stored vectors", path, problem)
            else:
                log.info("rebuilding the vector index of generation %d from stored vectors", generation.id)
            live = cls(store, generation, folder, cls._rebuild(store, generation, config), config, keywords,
                       hubness_config)
            live.save()
        live._load_hubness()
        return live

    def stale(self) -> GenerationInfo | None:
        """The database's newer state of this generation when another writer changed it."""
        current = self.store.generation_by_id(self.generation.id)
        if current is None or current.version == self.version:
            return None
        return current

    def refresh(self) -> bool:
        """Reloads from the file (or the stored vectors) if the database moved on; True if so."""
        current = self.stale()
        if current is None:
            return False
        log.info("generation %d changed in another process (version %d -> %d); reloading",
                 current.id, self.version, current.version)
        fresh = LiveIndex.open(self.store, current, self.folder, self.config, hubness_config=None)
        with self._hubness_lock:
            self.index, self.generation, self.version = fresh.index, current, fresh.version
            self.hubness = None  # the other process's side file, or a rebuild on next use
            self._load_hubness()
        self._dirty = False
        return True

    # -- hubness penalties (engine/index/hubness.py) -----------------------------------

    @staticmethod
    def hubness_file_for(folder: Path, generation_id: int) -> Path:
        return folder / f"generation-{generation_id}.hubness.npz"

    def _load_hubness(self) -> None:
        """Takes the side file's penalties when they hold this index's version."""
        if self.hubness_config is None:
            return
        penalties, reference = HubnessPenalties.load(
            self.hubness_file_for(self.folder, self.generation.id), expected_generation=self.version,
            dim=self.generation.dim, config=self.hubness_config)
        self.hubness = penalties
        self._hubness_reference = reference or self._hubness_reference

    def ensure_hubness(self, encoder: QueryEncoder) -> None:
        """Measures the penalties of every stored passage when none are loaded.

        `encoder` must be the generation's model: it encodes the reference queries, only
        when no side file kept them (a new generation; about 10 s on two CPU cores for the
        default model). After a stale side file, penalties are rebuilt from the stored
        vectors without encoding anything.
        """
        if self.hubness_config is None or self.hubness is not None:
            return
        with self._hubness_lock:
            if self.hubness is not None:
                return
            reference = self._hubness_reference or reference_vectors(encoder)
            log.info("measuring the hubness penalties of generation %d", self.generation.id)
            penalties = HubnessPenalties(*reference, self.hubness_config)
            for ids, vectors in self.store.iter_vectors(self.generation.id, self.generation.dim):
                penalties.add(ids, vectors)
            penalties.save(self.hubness_file_for(self.folder, self.generation.id), self.version)
            self.hubness, self._hubness_reference = penalties, reference

    def hubness_offsets(self, ids: np.ndarray, language: str | None) -> np.ndarray | None:
        """What to subtract from these passages' cosines for a query in `language`, float32
        [n]; None when scores are plain cosines (no penalties)."""
        penalties = self.hubness
        return None if penalties is None else penalties.offsets(ids, language)

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
        """Mirrors a committed change: drop `removed` ids, then add `added` with `vectors`.

        The caller holds the library's write lock, so the database's version right after
        its commit is the one this index now holds.
        """
        if len(removed):
            self.index.remove(np.asarray(removed, dtype=np.int64))
        if len(added):
            self.index.add(np.asarray(added, dtype=np.int64), vectors)
        with self._hubness_lock:
            if self.hubness is not None:  # otherwise measured from the stored vectors when needed
                self.hubness.remove(np.asarray(removed, dtype=np.int64))
                if len(added):
                    self.hubness.add(np.asarray(added, dtype=np.int64), vectors)
        if self.keywords is not None:
            self.keywords.apply(removed, added)
        current = self.store.generation_by_id(self.generation.id)
        if current is not None:
            self.version = current.version
        self._dirty = self._dirty or bool(len(removed) or len(added))

    def save(self) -> None:
        """Writes the index atomically, stamped with the version it holds.

        A file a later writer saved (its stamp newer than ours, not newer than the
        database) is kept; one from a database restored to an older state is replaced.
        """
        current = self.store.generation_by_id(self.generation.id)
        if current is None:
            return
        path = self.file_for(self.folder, self.generation.id)
        stamp = (read_trailer(path) or {}).get("generation")
        if isinstance(stamp, int) and self.version < stamp <= current.version:
            log.info("keeping %s: it holds version %d, newer than this process's %d",
                     path, stamp, self.version)
        else:
            self.index.save(path, generation=self.version)
        if self.keywords is not None:  # stamped, like the FAISS file, with what it holds
            self.keywords.stamp(dataclasses.replace(current, version=self.version))
        with self._hubness_lock:
            if self.hubness is not None:
                self.hubness.save(self.hubness_file_for(self.folder, self.generation.id), self.version)
        self._dirty = False
        self._last_save = time.monotonic()

    def save_if_due(self, every_s: float) -> None:
        if self._dirty and time.monotonic() - self._last_save >= every_s:
            self.save()

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self.index.search(queries, k)

    def vectors(self, ids: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ids int64 [n], vectors float32 [n, dim]) of those of `ids` that have a vector, sorted.

        From memory; an id the index does not hold (another process added it and this
        one has not caught up yet) is looked up in the database, so the answer is what
        the stored vectors say either way.
        """
        wanted = np.unique(np.asarray(ids, np.int64))
        found, vectors = self.index.vectors(wanted)
        if len(found) < len(wanted):
            missing = np.setdiff1d(wanted, found, assume_unique=True)
            stored_ids, stored = vectors_of(self.store, self.generation.id, self.generation.dim, missing.tolist())
            found, vectors = np.concatenate([found, stored_ids]), np.concatenate([vectors, stored])
            order = np.argsort(found, kind="stable")
            found, vectors = found[order], vectors[order]
        return found, vectors

    def __len__(self) -> int:
        return len(self.index)

    def delete_file(self) -> None:
        self.file_for(self.folder, self.generation.id).unlink(missing_ok=True)
        self.hubness_file_for(self.folder, self.generation.id).unlink(missing_ok=True)
