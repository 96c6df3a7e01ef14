"""Document context in dense scores: a passage counts more in a document about the question.

    >>> context = DocumentContext(dim=384)
    >>> context.add(passage_ids, document_ids, vectors)   # at index time, as FAISS gets them
    >>> context.similarity(passage_ids, query_vector)     # cos(q, centroid of each one's document)

A passage is read alone, so a short paragraph of an off-topic document (a changelog line
about "group members", an untranslated English note inside a French chapter) can stand
as near to a question as the answer's best paragraph. The answer's document is about the
question as a whole, though, and the other is not. So search ranks a passage by

    (1 - w) cos(q, p) + w cos(q, c_D) - hubness offset,   c_D = normalised sum of D's passages

with w = `DocumentContextConfig.weight`, both cosines in the space FAISS holds
(language-neutral). A one-passage document is its own centroid, so its score is its
cosine; a passage whose document is not known yet (a search racing an add) counts as one.

The sums depend only on each document's passages, which never change in place (a
re-indexed file gets a new document with new passages, and passages are removed with
their document), so they are kept per document, updated as passages come and go, and
saved in a side file beside the FAISS file (`generation-<id>.documents.npz`), stamped
like it: a missing, damaged or stale file is rebuilt from the stored vectors.
"""

from __future__ import annotations

import json
import logging
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.atomic import atomic_file
from engine.errors import InputError
from engine.index.sorted_changes import merge_changes, worth_merging
from engine.repairs import move_aside, repaired

log = logging.getLogger(__name__)

FORMAT_VERSION = 1


@dataclass(frozen=True)
class DocumentContextConfig:
    """How much a passage's document counts beside the passage itself."""

    # Share of the score given to the document's centroid: 0 ranks passages alone. Chosen
    # on the dev sets (docs/benchmarks.md, "Document context").
    weight: float = 0.2

    def __post_init__(self) -> None:
        if not isinstance(self.weight, (int, float)) or isinstance(self.weight, bool) or not 0.0 <= self.weight < 1.0:
            raise InputError(f"document context weight must be a number in [0, 1), got {self.weight!r}")


class DocumentContext:
    """Each document's sum of passage vectors, and each passage's document, for one generation.

    Passages map to documents through sorted arrays plus a dictionary of recent changes
    (folded in when it grows), as the hubness penalties do; documents hold a float32 sum
    [dim] and a count. Normalised centroids are cached until the next change.
    """

    def __init__(self, dim: int, config: DocumentContextConfig = DocumentContextConfig()):
        self.dim, self.config = int(dim), config
        self._passages = np.empty(0, np.int64)  # sorted passage ids
        self._owners = np.empty(0, np.int64)  # their document ids
        self._recent: dict[int, int | None] = {}  # passage id -> document id (None: removed)
        self._sums: dict[int, np.ndarray] = {}  # document id -> float32 [dim]
        self._counts: dict[int, int] = {}
        self._centroids: tuple[np.ndarray, np.ndarray] | None = None  # (document ids sorted, unit rows)
        # The indexing thread adds and removes while a search thread scores.
        self._lock = threading.RLock()

    def __len__(self) -> int:
        """The number of passages held."""
        with self._lock:
            self._fold()
            return len(self._passages)

    # ---- incremental changes ----------------------------------------------------------

    def add(self, ids: np.ndarray, documents: np.ndarray, vectors: np.ndarray) -> None:
        """Adds passages `ids` of `documents` (document id per passage) with their
        searchable vectors (float32 [n, dim], as FAISS holds them)."""
        ids, documents = np.asarray(ids, np.int64), np.asarray(documents, np.int64)
        vectors = np.asarray(vectors, np.float32)
        if not (len(ids) == len(documents) == len(vectors)):
            raise InputError(f"{len(ids)} ids, {len(documents)} documents and {len(vectors)} vectors")
        if len(ids) == 0:
            return
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise InputError(f"vectors must be [n, {self.dim}], got {vectors.shape}")
        with self._lock:
            known = self.documents_of(ids)
            fresh = known < 0  # a passage added twice (a replayed batch) is not counted twice
            batch, owner = np.unique(documents[fresh], return_inverse=True)
            sums = np.zeros((len(batch), self.dim), np.float32)
            np.add.at(sums, owner, vectors[fresh])  # one pass over the batch, whatever its documents
            for document, total, count in zip(batch.tolist(), sums, np.bincount(owner, minlength=len(batch)).tolist()):
                self._sums[document] = self._sums.get(document, np.zeros(self.dim, np.float32)) + total
                self._counts[document] = self._counts.get(document, 0) + count
            self._recent.update(zip(ids[fresh].tolist(), documents[fresh].tolist()))
            self._changed()

    def remove(self, ids: np.ndarray) -> None:
        """Forgets removed passages, and a document once its last passage is gone; unknown
        ids are ignored. A document keeps its sum while some of its passages remain (they
        leave together: the store deletes a document with its passages)."""
        ids = np.asarray(ids, np.int64)
        with self._lock:
            documents = self.documents_of(ids)
            for document in documents[documents >= 0].tolist():
                left = self._counts.get(document, 0) - 1
                if left <= 0:
                    self._counts.pop(document, None)
                    self._sums.pop(document, None)
                else:
                    self._counts[document] = left
            self._recent.update((int(i), None) for i in ids[documents >= 0].tolist())
            self._changed()

    def _changed(self) -> None:
        self._centroids = None
        if worth_merging(self._recent, len(self._passages)):
            self._fold()

    def _fold(self) -> None:
        """Merges recent changes into the sorted arrays; the caller holds the lock."""
        if not self._recent:
            return
        self._passages, self._owners = merge_changes(self._passages, self._owners, self._recent)
        self._recent = {}

    # ---- search ---------------------------------------------------------------------

    def documents_of(self, ids: np.ndarray) -> np.ndarray:
        """Each passage's document id, int64 [n]; -1 where the passage is not held."""
        flat = np.asarray(ids, np.int64).ravel()
        out = np.full(len(flat), -1, np.int64)
        with self._lock:
            if len(self._passages):
                at = np.clip(np.searchsorted(self._passages, flat), 0, len(self._passages) - 1)
                found = self._passages[at] == flat
                out[found] = self._owners[at[found]]
            for position, pid in enumerate(flat.tolist() if self._recent else ()):
                if pid in self._recent:
                    document = self._recent[pid]
                    out[position] = -1 if document is None else document
        return out

    def similarity(self, ids: np.ndarray, query: np.ndarray, cosines: np.ndarray) -> np.ndarray:
        """cos(query, centroid of each passage's document), float32 [n]; a passage whose
        document is not held gets its own cosine (`cosines`, aligned with `ids`)."""
        out = np.asarray(cosines, np.float32).ravel().copy()
        found, centroids = self._centroids_of(ids)
        out[found] = centroids @ np.asarray(query, np.float32).reshape(-1)
        return out

    def mixed(self, ids: np.ndarray, vectors: np.ndarray) -> np.ndarray:
        """(1 - w) v_p + w c_D for the passages `ids` with `vectors` (float32 [n, dim], as
        FAISS holds them): the rows whose product with a query is scores(), for a fixed set
        of passages scored against many queries; a passage whose document is not held keeps
        its own vector."""
        vectors = np.asarray(vectors, np.float32)
        weight = self.config.weight
        if weight == 0.0 or len(vectors) == 0:
            return vectors
        out = vectors.copy()
        found, centroids = self._centroids_of(ids)
        out[found] = (1.0 - weight) * vectors[found] + weight * centroids
        return out

    def _centroids_of(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(bool [n]: the passage's document is held, the unit centroids of those documents)."""
        flat = np.asarray(ids, np.int64).ravel()
        with self._lock:
            documents = self.documents_of(flat)
            held, centroids = self._unit_centroids()
        if not len(held):
            return np.zeros(len(flat), bool), np.empty((0, self.dim), np.float32)
        at = np.clip(np.searchsorted(held, documents), 0, len(held) - 1)
        found = (documents >= 0) & (held[at] == documents)
        return found, centroids[at[found]]

    def scores(self, ids: np.ndarray, query: np.ndarray, cosines: np.ndarray) -> np.ndarray:
        """(1 - w) cos(q, p) + w cos(q, c_D) for the passages `ids` with `cosines`, float32 [n]."""
        cosines = np.asarray(cosines, np.float32).ravel()
        weight = self.config.weight
        if weight == 0.0 or len(cosines) == 0:
            return cosines
        context = self.similarity(ids, query, cosines)
        return ((1.0 - weight) * cosines + weight * context).astype(np.float32)

    def _unit_centroids(self) -> tuple[np.ndarray, np.ndarray]:
        """(document ids sorted int64 [m], unit centroids float32 [m, dim]); the caller holds the lock."""
        if self._centroids is None:
            documents, sums = self._stacked()
            norms = np.linalg.norm(sums, axis=1, keepdims=True)
            self._centroids = documents, (sums / np.maximum(norms, 1e-12)).astype(np.float32)
        return self._centroids

    def _stacked(self) -> tuple[np.ndarray, np.ndarray]:
        """(document ids sorted int64 [m], their sums float32 [m, dim]); the caller holds the lock."""
        documents = np.array(sorted(self._sums), np.int64)
        sums = (np.stack([self._sums[d] for d in documents.tolist()]) if len(documents)
                else np.empty((0, self.dim), np.float32))
        return documents, sums

    # ---- the side file ----------------------------------------------------------------

    def save(self, path: Path, generation: int, space: str) -> None:
        """Writes the passages' documents and the documents' sums atomically, stamped with
        the generation's database version and the vectors' `space`."""
        with self._lock:
            self._fold()
            passages, owners = self._passages, self._owners
            documents, sums = self._stacked()
            counts = np.array([self._counts[d] for d in documents.tolist()], np.int64)
        meta = {"format": FORMAT_VERSION, "generation": int(generation), "dim": self.dim,
                "passages": len(passages), "documents": len(documents), "space": space}
        move_aside(Path(path))  # a folder there would fail the rename at the end
        with atomic_file(Path(path)) as f:  # the window and the CLI may save it at once
            np.savez(f, passages=passages, owners=owners, documents=documents, sums=sums, counts=counts,
                     meta=np.frombuffer(json.dumps(meta).encode(), np.uint8))

    @classmethod
    def load(cls, path: Path, *, expected_generation: int, dim: int, space: str,
             config: DocumentContextConfig = DocumentContextConfig()) -> DocumentContext | None:
        """The saved context, or None when the file is missing, damaged, inconsistent, or
        of another generation version, dim or vector space (then it is rebuilt)."""
        try:
            with np.load(Path(path), allow_pickle=False) as data:
                meta = json.loads(data["meta"].tobytes().decode())
                passages, owners = data["passages"], data["owners"]
                documents, sums, counts = data["documents"], data["sums"], data["counts"]
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, UnicodeDecodeError) as e:
            repaired("the document context file %s is damaged (%s); it is measured again", path, e)
            return None
        consistent = (meta.get("format") == FORMAT_VERSION and len(passages) == len(owners) == meta.get("passages")
                      and len(documents) == len(counts) == meta.get("documents") and sums.shape == (len(documents), dim)
                      and int(counts.sum()) == len(passages) and bool(np.all(np.diff(passages) > 0)))
        if not consistent:
            repaired("the document context file %s is inconsistent; it is measured again", path)
            return None
        if meta.get("generation") != expected_generation or meta.get("dim") != dim or meta.get("space") != space:
            return None
        context = cls(dim, config)
        context._passages, context._owners = passages.astype(np.int64), owners.astype(np.int64)
        context._sums = {int(d): s.astype(np.float32) for d, s in zip(documents.tolist(), sums)}
        context._counts = {int(d): int(c) for d, c in zip(documents.tolist(), counts.tolist())}
        return context
