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

Full-precision vectors stay in the store (float16, engine.store.vector_blobs); above a few
thousand passages FAISS holds 8-bit codes, and its candidates are re-scored with the
stored vectors, read on demand (`StoredVectors`), so a search process keeps only the
codes in memory. Every vector search compares passes through `searchable`: those FAISS
is given (`apply`, and rebuilds through `StoredVectors.batches`) and those re-scoring
reads (`StoredVectors.get`), so a correction of the stored vectors is made in one place.
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
from engine.index.vector_config import VectorIndexConfig
from engine.index.vector_file import read_trailer
from engine.index.vectors import VectorIndex
from engine.store import GenerationInfo, Store
from engine.store.search_queries import vectors_of
from engine.store.vector_blobs import as_stored

log = logging.getLogger(__name__)


class StoredVectors:
    """A generation's full-precision vectors, read from the store on demand and made
    `searchable`: the `ExactVectors` of a library's VectorIndex. The store writes them
    itself, before `LiveIndex.apply`, so `add` and `remove` have nothing to do."""

    def __init__(self, store: Store, generation: GenerationInfo, searchable):
        self.store, self.generation, self.searchable = store, generation, searchable

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        pass

    def remove(self, ids: np.ndarray) -> None:
        pass

    def get(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        found, vectors = vectors_of(self.store, self.generation.id, self.generation.dim, ids.tolist())
        order = np.argsort(found)
        found, vectors = found[order], vectors[order]
        wanted = ids[np.isin(ids, found, assume_unique=True)]  # in the order asked
        rows = np.searchsorted(found, wanted)
        return wanted, self.searchable(wanted, vectors[rows])

    def batches(self):
        for ids, vectors in self.store.iter_vectors(self.generation.id, self.generation.dim):
            yield ids, self.searchable(ids, vectors)

    def __len__(self) -> int:
        return self.store.count_vectors(self.generation.id)


class LiveIndex:
    """A generation's vectors in FAISS; `apply` after each database commit."""

    def __init__(self, store: Store, generation: GenerationInfo, folder: Path, index: VectorIndex | None,
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
        folder.mkdir(parents=True, exist_ok=True)
        live = cls(store, generation, folder, None, config, keywords, hubness_config)
        live.index, rebuilt = live._opened_index(generation)
        if rebuilt:
            live.save()
        live._load_hubness()
        return live

    def _opened_index(self, generation: GenerationInfo) -> tuple[VectorIndex, bool]:
        """(`generation`'s index from its file, or rebuilt from the stored vectors, True if
        rebuilt). The file is redone when it is missing, damaged, of an earlier format, or
        older than the database: `generation.version` was read before the vectors, so a
        writer committing while they are read leaves a stamp older than the database."""
        exact = StoredVectors(self.store, generation, self.searchable)
        index = VectorIndex.load(self.file_for(self.folder, generation.id), expected_generation=generation.version,
                                 dim=generation.dim, config=self.config, exact=exact)
        if index is not None:
            return index, False
        log.info("rebuilding the vector index of generation %d from stored vectors", generation.id)
        return VectorIndex.build_from(generation.dim, exact, config=self.config), True

    def searchable(self, ids: np.ndarray, vectors: np.ndarray) -> np.ndarray:
        """`vectors` (float32 [n, dim], as stored) of the passages `ids`, as search compares
        them: everything FAISS is given and every vector re-scoring reads comes through
        here. Today the stored vectors re-normalised (float16 rounding moves a unit
        vector's norm by up to ~1e-4, and a passage should match itself with cosine 1)."""
        norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))[:, None]
        return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)

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
        index, rebuilt = self._opened_index(current)
        with self._hubness_lock:
            self.index, self.generation, self.version = index, current, current.version
            self.hubness = None  # the other process's side file, or a rebuild on next use
            self._load_hubness()
        self._dirty = False
        if rebuilt:
            self.save()
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
            for ids, vectors in StoredVectors(self.store, self.generation, self.searchable).batches():
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

    def apply(self, removed: Sequence[int], added: Sequence[int], vectors: np.ndarray | None) -> None:
        """Mirrors a committed change: drop `removed` ids, then add `added` with `vectors`.

        The caller holds the library's write lock, so the database's version right after
        its commit is the one this index now holds. `vectors` are the encoder's; the
        index gets them as the store gives them back, made `searchable`.
        """
        added = np.asarray(added, dtype=np.int64)
        if len(added):
            vectors = self.searchable(added, as_stored(vectors))
        if len(removed):
            self.index.remove(np.asarray(removed, dtype=np.int64))
        if len(added):
            self.index.add(added, vectors)
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

    def search(self, queries: np.ndarray, k: int, *,
               candidate_filter: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top-k by cosine (VectorIndex.search: codes, then re-scored from the store)."""
        return self.index.search(queries, k, candidate_filter=candidate_filter)

    def vectors(self, ids: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ids int64 [n], vectors float32 [n, dim]) of those of `ids` that have a vector,
        sorted: the stored vectors, made `searchable` (so also passages another process
        added that this index has not caught up with yet)."""
        return self.index.vectors(np.unique(np.asarray(ids, np.int64)))

    def __len__(self) -> int:
        return len(self.index)

    def delete_file(self) -> None:
        self.file_for(self.folder, self.generation.id).unlink(missing_ok=True)
        self.hubness_file_for(self.folder, self.generation.id).unlink(missing_ok=True)
