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
(engine.index.hubness) ride along the same way in a side file beside the FAISS file, and
so do the documents' centroids that give each passage its document's context
(engine.index.document_context).

FAISS holds language-neutral vectors (engine.index.language_means): each passage's vector
minus its language's mean, re-normalised, so every dense score, the z baseline and the
floor are made in that space; the database keeps the vectors as encoded. The means are
measured with the generation's model and kept in a side file too. Both side files need the
model for what they lack (a language seen for the first time, a new generation), so
`ensure_corrections` completes them, and a FAISS file that must be rebuilt without the
means at hand, by a caller that has the model loaded, never at open.

Full-precision vectors stay in the store (float16, engine.store.vector_blobs); above a few
thousand passages FAISS holds 8-bit codes, and its candidates are re-scored with the
stored vectors, read on demand (`StoredVectors`), so a search process keeps only the
codes in memory; a copy of them in a file beside the index spares the SQLite lookups
while it holds this version (engine.index.vector_mirror). Every vector search compares
passes through `searchable`: those FAISS is given (`apply`, and rebuilds through `StoredVectors.batches`) and those re-scoring
reads (`StoredVectors.get`), so the language correction is made in one place.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.encoders.base import l2_normalise
from engine.index.document_context import DocumentContext, DocumentContextConfig
from engine.index.hubness import HubnessConfig, HubnessPenalties, QueryEncoder, reference_vectors
from engine.index.keyword_index import KeywordIndex
from engine.index.language_means import LanguageMeans, reference_digest
from engine.index.vector_config import VectorIndexConfig
from engine.index.vector_file import damage, read_trailer
from engine.index.vector_mirror import VectorMirror
from engine.index.vectors import PLAIN_SPACE, VectorIndex
from engine.private import private_folder
from engine.repairs import repaired
from engine.store import GenerationInfo, Store
from engine.store.catalog import passage_catalog
from engine.store.search_queries import vectors_of
from engine.store.vector_blobs import as_stored

log = logging.getLogger(__name__)


class StoredVectors:
    """A generation's full-precision vectors, read from the store on demand and made
    `searchable`: the `ExactVectors` of a library's VectorIndex. The store writes them
    itself, before `LiveIndex.apply`, so `add` and `remove` have nothing to do."""

    def __init__(self, store: Store, generation: GenerationInfo, searchable, mirror: VectorMirror):
        self.store, self.generation, self.searchable, self.mirror = store, generation, searchable, mirror

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        pass

    def remove(self, ids: np.ndarray) -> None:
        pass

    def get(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The copy's rows where it has them (engine.index.vector_mirror), the store's for the rest."""
        found, vectors = self.mirror.get(ids)
        rest = ids[~np.isin(ids, found)]
        if len(rest):
            stored_ids, stored = vectors_of(self.store, self.generation.id, self.generation.dim, rest.tolist())
            found, vectors = np.concatenate([found, stored_ids]), np.concatenate([vectors, stored])
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


@dataclass(eq=False)
class FixedScorer:
    """LiveIndex.dense_scores for one fixed set of passages (LiveIndex.fixed_scorer)."""

    ids: np.ndarray  # int64 [n]
    rows: np.ndarray  # float32 [n, dim]: the vectors with their document context mixed in
    # what it was made with: the index's version, its document context and hubness penalties
    version: int
    context: DocumentContext | None
    hubness: HubnessPenalties | None
    _offsets: dict[str | None, np.ndarray] = field(default_factory=dict)  # language -> float32 [n]

    def scores(self, query: np.ndarray, language: str | None) -> np.ndarray:
        """float32 [n]: these passages' corrected cosines with `query` (in the space FAISS holds)."""
        cosines = self.rows @ np.asarray(query, np.float32).reshape(-1)
        if self.hubness is None:
            return cosines
        offsets = self._offsets.get(language)
        if offsets is None:
            offsets = self._offsets[language] = self.hubness.offsets(self.ids, language)
        return (cosines - offsets).astype(np.float32)


class LiveIndex:
    """A generation's vectors in FAISS; `apply` after each database commit."""

    def __init__(self, store: Store, generation: GenerationInfo, folder: Path, index: VectorIndex | None,
                 config: VectorIndexConfig, keywords: KeywordIndex | None = None,
                 hubness_config: HubnessConfig | None = HubnessConfig(),
                 means: LanguageMeans | None = None,
                 context_config: DocumentContextConfig | None = DocumentContextConfig()):
        self.store = store
        self.keywords = keywords
        self.generation = generation
        self.version = generation.version  # what `index` holds (see the module docstring)
        self.folder = folder
        self.index = index
        self.config = config
        self._dirty = False
        self._last_save = time.monotonic()
        # None: plain cosine scores (no config, or not measured yet: see ensure_corrections)
        self.hubness: HubnessPenalties | None = None
        self.hubness_config = hubness_config
        self._hubness_reference: tuple[np.ndarray, list[str]] | None = None  # kept from the side file
        # the side files' state (penalties, centroids): an indexing thread applies while a search ensures
        self._side_lock = threading.Lock()
        # None: FAISS holds the vectors as encoded (the correction is off)
        self.means = means
        self.complete = True  # False: FAISS waits for a rebuild that needs the model (ensure_corrections)
        # None: passages are scored alone (no config, or not measured yet: see ensure_corrections)
        self.context: DocumentContext | None = None
        self.context_config = context_config
        self.mirror = VectorMirror(folder, generation.id, generation.dim)  # loaded by `open`

    @classmethod
    def open(cls, store: Store, generation: GenerationInfo, folder: Path,
             config: VectorIndexConfig | None = None, keywords: KeywordIndex | None = None,
             hubness_config: HubnessConfig | None = HubnessConfig(),
             language_neutral: bool = True,
             context_config: DocumentContextConfig | None = DocumentContextConfig()) -> LiveIndex:
        """Loads or rebuilds the vectors; `keywords` (opened for this generation) rides along.

        The hubness penalties come from their side file when it holds this version;
        otherwise `ensure_corrections` measures them on first use. `hubness_config` None:
        no hubness penalties. `language_neutral` False: FAISS holds the vectors as encoded.
        `context_config` None: passages are scored without their document's context.
        A rebuild that needs a language mean not measured yet waits for `ensure_corrections`.
        """
        config = config or VectorIndexConfig()
        private_folder(folder)
        means = (LanguageMeans.load(cls.means_file_for(folder, generation.id), model=generation.model_name,
                                    dim=generation.dim) if language_neutral else None)
        live = cls(store, generation, folder, None, config, keywords, hubness_config, means, context_config)
        live.mirror.load(generation.version)
        path = cls.file_for(folder, generation.id)
        space = vector_space(means)
        index = VectorIndex.load(path, expected_generation=generation.version, dim=generation.dim, config=config,
                                 space=space, exact=live._exact_source())
        live.index = index or VectorIndex(generation.dim, config=config, exact=live._exact_source())
        if index is None:
            if (problem := damage(path, generation.version, space)) is not None:
                repaired("the vector index %s %s; rebuilding it from the stored vectors", path, problem)
            live.complete = False
            live._rebuild_if_possible()
        live._load_hubness()
        live._load_context()
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
        fresh = LiveIndex.open(self.store, current, self.folder, self.config, hubness_config=None,
                               language_neutral=self.means is not None, context_config=None)
        with self._side_lock:
            self.index, self.generation, self.version = fresh.index, current, fresh.version
            self.mirror = fresh.mirror
            self.means, self.complete = fresh.means, fresh.complete
            self.hubness = None  # the other process's side file, or a rebuild on next use
            self._load_hubness()
            self.context = None  # likewise
            self._load_context()
        self._dirty = False
        return True

    # -- hubness penalties (engine/index/hubness.py) -----------------------------------

    @staticmethod
    def hubness_file_for(folder: Path, generation_id: int) -> Path:
        return folder / f"generation-{generation_id}.hubness.npz"

    def _load_hubness(self) -> None:
        """Takes the side file's penalties when they hold this index's version."""
        if self.hubness_config is None or not self.complete:
            return
        penalties, reference = HubnessPenalties.load(
            self.hubness_file_for(self.folder, self.generation.id), expected_generation=self.version,
            dim=self.generation.dim, space=vector_space(self.means), config=self.hubness_config)
        self.hubness = penalties
        self._hubness_reference = reference or self._hubness_reference

    def ensure_corrections(self, encoder: QueryEncoder, *, passage_languages: Sequence[str | None] = (),
                           query_language: str | None = None, query: bool = False) -> None:
        """Makes everything the scores need with the generation's model `encoder`: the
        language means of `passage_languages` (about to be added) and, with `query`, of
        `query_language`; a rebuild of FAISS that waited for means; the hubness penalties.

        Cheap once done: a language mean is measured once per generation (about a second
        on two CPU cores), the penalties once (about 10 s when the reference queries must
        be encoded, a new generation).
        """
        if self.means is not None:
            wanted = list(passage_languages) + ([] if self.complete else self._stored_languages())
            changed = self.means.ensure(encoder, wanted, "passage")
            if query:
                changed = self.means.ensure(encoder, [query_language], "query") or changed
            if changed:
                self.means.save(self.means_file_for(self.folder, self.generation.id), self.generation.model_name)
            if not self.complete:
                self._rebuild_if_possible()
        self._ensure_hubness(encoder)
        self._ensure_context()

    def _ensure_hubness(self, encoder: QueryEncoder) -> None:
        """Measures the penalties of every stored passage when none are loaded.

        The reference queries are encoded only when no side file kept them (a new
        generation); after a stale side file, penalties are rebuilt from the stored
        vectors without encoding anything.
        """
        if self.hubness_config is None or self.hubness is not None:
            return
        with self._side_lock:
            if self.hubness is not None:
                return
            reference = self._hubness_reference or reference_queries(encoder, self.means)
            log.info("measuring the hubness penalties of generation %d", self.generation.id)
            penalties = HubnessPenalties(*reference, self.hubness_config)
            for ids, vectors in self._stored_vectors():
                penalties.add(ids, vectors)
            penalties.save(self.hubness_file_for(self.folder, self.generation.id), self.version,
                           vector_space(self.means))
            self.hubness, self._hubness_reference = penalties, reference

    # -- document context (engine/index/document_context.py) ---------------------------

    @staticmethod
    def context_file_for(folder: Path, generation_id: int) -> Path:
        return folder / f"generation-{generation_id}.documents.npz"

    def _load_context(self) -> None:
        """Takes the side file's centroids when they hold this index's version."""
        if self.context_config is None or not self.complete:
            return
        self.context = DocumentContext.load(
            self.context_file_for(self.folder, self.generation.id), expected_generation=self.version,
            dim=self.generation.dim, space=vector_space(self.means), config=self.context_config)

    def _ensure_context(self) -> None:
        """Sums every stored passage into its document's centroid when none are loaded
        (no encoding: the stored vectors and the catalog's documents are enough)."""
        if self.context_config is None or self.context is not None or not self.complete:
            return
        with self._side_lock:
            if self.context is not None:
                return
            log.info("measuring the document centroids of generation %d", self.generation.id)
            context = DocumentContext(self.generation.dim, self.context_config)
            for ids, vectors in self._stored_vectors():
                known, documents = self._documents_of(ids)
                context.add(ids[known], documents, vectors[known])
            context.save(self.context_file_for(self.folder, self.generation.id), self.version,
                         vector_space(self.means))
            self.context = context

    def _documents_of(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(bool [n]: the passage is catalogued, document ids of those passages)."""
        catalog = passage_catalog(self.store)
        rows = catalog.document_positions(ids)
        return rows >= 0, catalog.document_ids[rows[rows >= 0]]

    def dense_scores(self, ids: np.ndarray, cosines: np.ndarray, query: np.ndarray,
                     language: str | None) -> np.ndarray:
        """The scores search ranks by, float32 [n], from the cosines of passages `ids` with
        `query` (in the space FAISS holds): their documents' context mixed in, then the
        hubness offsets for a query in `language` taken off. The one place dense scores
        are corrected, so candidates, keyword-only candidates, the z baseline and the
        answer level all agree."""
        cosines = np.asarray(cosines, np.float32).ravel()
        context = self.context
        scores = cosines if context is None else context.scores(ids, query, cosines)
        offsets = self.hubness_offsets(ids, language)
        return scores if offsets is None else (scores - offsets).astype(np.float32)

    def fixed_scorer(self, ids: np.ndarray, vectors: np.ndarray) -> FixedScorer:
        """dense_scores of these passages (`vectors` as FAISS holds them) for query after
        query, each at the cost of one product: their document context mixed into the
        vectors once, the hubness offsets kept per language. For the z baseline's sample;
        valid while `scores_like` says so."""
        rows = vectors if self.context is None else self.context.mixed(ids, vectors)
        return FixedScorer(np.asarray(ids, np.int64), np.asarray(rows, np.float32), self.version,
                           self.context, self.hubness)

    def scores_like(self, scorer: FixedScorer) -> bool:
        """Whether `scorer` still gives this index's dense_scores: made at this version,
        with these document context and hubness penalties."""
        return scorer.version == self.version and scorer.context is self.context and scorer.hubness is self.hubness

    @property
    def hubness_reference(self) -> tuple[np.ndarray, list[str]] | None:
        """The hubness reference queries in the space FAISS holds, and their languages
        (None until measured or loaded: ensure_corrections)."""
        return self._hubness_reference

    # -- the space FAISS holds -----------------------------------------------------------

    @staticmethod
    def means_file_for(folder: Path, generation_id: int) -> Path:
        return folder / f"generation-{generation_id}.means.npz"

    def passage_vectors(self, vectors: np.ndarray, languages: Sequence[str | None]) -> np.ndarray:
        """Encoded passage vectors [n, dim] in the form FAISS holds (language-neutral when on)."""
        vectors = np.asarray(vectors, np.float32)
        return vectors if self.means is None else self.means.neutral(vectors, languages, "passage")

    def query_vector(self, vector: np.ndarray, language: str | None) -> np.ndarray:
        """An encoded query [dim] in the space FAISS holds; its means ensured with `query=True`."""
        vector = np.asarray(vector, np.float32).reshape(1, -1)
        return (vector if self.means is None else self.means.neutral(vector, [language], "query"))[0]

    def _stored_languages(self) -> list[str | None]:
        return list(passage_catalog(self.store).languages)

    def searchable(self, ids: np.ndarray, vectors: np.ndarray,
                   languages: Sequence[str | None] | None = None) -> np.ndarray:
        """`vectors` (float32 [n, dim], as stored) of the passages `ids` (of `languages`,
        looked up when not given), as search compares them: everything FAISS is given and
        every vector re-scoring reads comes through here. Re-normalised (float16 rounding
        moves a unit vector's norm by up to ~1e-4, and a passage should match itself with
        cosine 1), and language-neutral when the correction is on."""
        if self.means is not None:
            if languages is None:
                languages = passage_catalog(self.store).languages_of(ids)
            return self.passage_vectors(vectors, languages)  # re-normalised there
        return l2_normalise(vectors)

    def _exact_source(self) -> StoredVectors:
        return StoredVectors(self.store, self.generation, self.searchable, self.mirror)

    def _stored_vectors(self):
        """Yields (ids, vectors) of every stored passage, in the form FAISS holds."""
        return self._exact_source().batches()

    def _rebuild_if_possible(self) -> None:
        """Rebuilds FAISS from the stored vectors when every mean it needs is measured."""
        if self.means is not None and not self.means.has(self._stored_languages(), "passage"):
            log.info("the vector index of generation %d waits for its language means", self.generation.id)
            return
        # `generation.version` was read before the vectors: if a writer commits while
        # they are read, the file's stamp is older than the database and is redone.
        log.info("rebuilding the vector index of generation %d from stored vectors", self.generation.id)
        self.index = VectorIndex.build_from(self.generation.dim, self._exact_source(), config=self.config)
        self.version = self.generation.version
        self.complete = True
        self.save()

    def hubness_offsets(self, ids: np.ndarray, language: str | None) -> np.ndarray | None:
        """What to subtract from these passages' cosines for a query in `language`, float32
        [n]; None when scores are plain cosines (no penalties)."""
        penalties = self.hubness
        return None if penalties is None else penalties.offsets(ids, language)

    @staticmethod
    def file_for(folder: Path, generation_id: int) -> Path:
        return folder / f"generation-{generation_id}.faiss"

    def apply(self, removed: Sequence[int], added: Sequence[int], vectors: np.ndarray | None,
              languages: Sequence[str | None] = ()) -> None:
        """Mirrors a committed change: drop `removed` ids, then add `added` with `vectors`
        (as encoded) of passages in `languages` (their means ensured first).

        The caller holds the library's write lock, so the database's version right after
        its commit is the one this index now holds. The index gets the vectors as the store
        gives them back, made `searchable`, as re-scoring will read them.
        """
        added = np.asarray(added, dtype=np.int64)
        stored = as_stored(vectors) if len(added) else None
        if len(added):
            vectors = self.searchable(added, stored, languages)
        self.mirror.apply(np.asarray(removed, dtype=np.int64), added, stored)
        # An incomplete index is rebuilt from the database, this change included, once
        # its means are in; until then it holds nothing to change.
        if len(removed) and self.complete:
            self.index.remove(np.asarray(removed, dtype=np.int64))
        if len(added) and self.complete:
            self.index.add(added, vectors)
        self._apply_context(removed, added, vectors)
        with self._side_lock:
            if self.hubness is not None:  # otherwise measured from the stored vectors when needed
                self.hubness.remove(np.asarray(removed, dtype=np.int64))
                if len(added):
                    self.hubness.add(added, vectors)
        if self.keywords is not None:
            self.keywords.apply(removed, added)
        current = self.store.generation_by_id(self.generation.id)
        if current is not None:
            self.version = current.version
        self._dirty = self._dirty or bool(len(removed) or len(added))

    def _apply_context(self, removed: Sequence[int], added: np.ndarray, vectors: np.ndarray | None) -> None:
        with self._side_lock:
            if self.context is None:  # otherwise measured from the stored vectors when needed
                return
            if len(removed):
                self.context.remove(np.asarray(removed, dtype=np.int64))
            if len(added):
                known, documents = self._documents_of(added)
                self.context.add(added[known], documents, vectors[known])

    def save(self) -> None:
        """Writes the index atomically, stamped with the version it holds.

        A file a later writer saved (its stamp newer than ours, not newer than the
        database) is kept; one from a database restored to an older state is replaced.
        """
        current = self.store.generation_by_id(self.generation.id)
        if current is None or not self.complete:
            return
        path = self.file_for(self.folder, self.generation.id)
        trailer = read_trailer(path) or {}
        stamp = trailer.get("generation")
        if (isinstance(stamp, int) and self.version < stamp <= current.version
                and trailer.get("space", PLAIN_SPACE) == vector_space(self.means)):
            log.info("keeping %s: it holds version %d, newer than this process's %d",
                     path, stamp, self.version)
        else:
            self.index.save(path, generation=self.version, space=vector_space(self.means))
        self._save_mirror()
        if self.keywords is not None:  # stamped, like the FAISS file, with what it holds
            self.keywords.stamp(dataclasses.replace(current, version=self.version))
        with self._side_lock:
            if self.hubness is not None:
                self.hubness.save(self.hubness_file_for(self.folder, self.generation.id), self.version,
                                  vector_space(self.means))
            if self.context is not None:
                self.context.save(self.context_file_for(self.folder, self.generation.id), self.version,
                                  vector_space(self.means))
        self._dirty = False
        self._last_save = time.monotonic()

    def _save_mirror(self) -> None:
        generation_id, dim = self.generation.id, self.generation.dim

        def database_version() -> int | None:
            current = self.store.generation_by_id(generation_id)
            return None if current is None else current.version

        self.mirror.save(self.version, lambda: self.store.iter_vectors(generation_id, dim), database_version)

    def save_if_due(self, every_s: float) -> bool:
        """Saves when there are changes and the last save is `every_s` old; True if it did."""
        if self._dirty and time.monotonic() - self._last_save >= every_s:
            self.save()
            return True
        return False

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
        self.means_file_for(self.folder, self.generation.id).unlink(missing_ok=True)
        self.context_file_for(self.folder, self.generation.id).unlink(missing_ok=True)
        self.mirror.delete_files()


def vector_space(means: LanguageMeans | None) -> str:
    """The name of the space FAISS holds, stamped in its file: a file of another space
    (an earlier version's plain vectors, other reference sentences) is rebuilt."""
    return PLAIN_SPACE if means is None else f"language-neutral-{reference_digest()}"


def reference_queries(encoder: QueryEncoder, means: LanguageMeans | None) -> tuple[np.ndarray, list[str]]:
    """The hubness reference queries and their languages, in the space FAISS holds: each
    language's query mean taken out when `means` (the language-neutral space) is given."""
    vectors, languages = reference_vectors(encoder)
    if means is not None:
        means.ensure(encoder, languages, "query")
        vectors = means.neutral(vectors, languages, "query")
    return vectors, languages
