"""Read-only queries search needs from the store: passage ids under filters, passage text, vectors.

    >>> ids = restricted_passage_ids(store, Restriction(languages=frozenset({"de"})))
    >>> passage_texts(store, [1, 2])          # [(passage id, document id, text), ...]

Filters are applied here, in SQL, before any top-k cut: search then looks only among
these ids, so counts and facets cover every match.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sqlalchemy import select

from engine.store.schema import Document, Passage, Vector
from engine.store.store import Store, _chunks


@dataclass(frozen=True)
class Restriction:
    """Which passages a search may return; None fields do not restrict."""

    languages: frozenset[str] | None = None  # passage languages (ISO 639-1)
    file_types: frozenset[str] | None = None  # extensions without the dot
    path_prefix: str | None = None  # the document is this path or below it
    modified_after: float | None = None  # document mtime >= this (epoch seconds)
    modified_before: float | None = None  # document mtime < this
    excluded_documents: frozenset[int] = frozenset()  # document ids left out (-word)

    @property
    def active(self) -> bool:
        return bool(self.languages or self.file_types or self.path_prefix or self.excluded_documents
                    or self.modified_after is not None or self.modified_before is not None)


def restricted_passage_ids(store: Store, restriction: Restriction) -> np.ndarray:
    """Sorted int64 ids of every passage the restriction allows."""
    query = select(Passage.id).join(Document, Passage.document_id == Document.id)
    if restriction.languages:
        query = query.where(Passage.language.in_(sorted(restriction.languages)))
    if restriction.file_types:
        query = query.where(Document.file_type.in_(sorted(restriction.file_types)))
    if restriction.path_prefix:
        prefix = restriction.path_prefix.rstrip("/") or "/"
        under = prefix if prefix.endswith("/") else prefix + "/"
        query = query.where((Document.path == prefix) | Document.path.startswith(under, autoescape=True))
    if restriction.modified_after is not None:
        query = query.where(Document.mtime >= restriction.modified_after)
    if restriction.modified_before is not None:
        query = query.where(Document.mtime < restriction.modified_before)
    with store.session() as s:
        ids = np.fromiter(s.scalars(query.order_by(Passage.id)), np.int64)
    if restriction.excluded_documents:
        ids = np.setdiff1d(ids, passages_of_documents(store, restriction.excluded_documents))
    return ids


def passage_ids(store: Store) -> np.ndarray:
    """Sorted int64 ids of every stored passage."""
    with store.session() as s:
        return np.fromiter(s.scalars(select(Passage.id).order_by(Passage.id)), np.int64)


def passages_of_documents(store: Store, document_ids: Sequence[int] | frozenset[int]) -> np.ndarray:
    out: list[int] = []
    with store.session() as s:
        for chunk in _chunks(sorted(int(d) for d in document_ids)):
            out.extend(s.scalars(select(Passage.id).where(Passage.document_id.in_(chunk))))
    return np.unique(np.asarray(out, np.int64))


def documents_of_passages(store: Store, ids: Sequence[int]) -> set[int]:
    out: set[int] = set()
    with store.session() as s:
        for chunk in _chunks([int(i) for i in ids]):
            out.update(s.scalars(select(Passage.document_id).where(Passage.id.in_(chunk))))
    return out


def passage_texts(store: Store, ids: Sequence[int]) -> list[tuple[int, int, str]]:
    """(passage id, document id, text) of these passages; ids no longer stored are absent."""
    out: list[tuple[int, int, str]] = []
    with store.session() as s:
        for chunk in _chunks([int(i) for i in ids]):
            out.extend(tuple(r) for r in s.execute(
                select(Passage.id, Passage.document_id, Passage.text).where(Passage.id.in_(chunk))))
    return out


def vectors_of(store: Store, generation_id: int, dim: int, ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """(ids int64 [n], vectors float32 [n, dim]) of those of `ids` that have a vector."""
    found_ids: list[int] = []
    blobs: list[bytes] = []
    with store.session() as s:
        for chunk in _chunks([int(i) for i in ids]):
            for pid, data in s.execute(select(Vector.passage_id, Vector.data).where(
                    Vector.generation_id == generation_id, Vector.passage_id.in_(chunk))):
                found_ids.append(pid)
                blobs.append(data)
    vectors = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(-1, dim).astype(np.float32)
    return np.asarray(found_ids, np.int64), vectors


def passage_documents(store: Store, ids: Sequence[int]) -> dict[int, tuple[str, str | None]]:
    """passage id -> (document path, document language): enough to group and count matches."""
    out: dict[int, tuple[str, str | None]] = {}
    with store.session() as s:
        for chunk in _chunks([int(i) for i in ids]):
            rows = s.execute(select(Passage.id, Document.path, Document.language)
                             .join(Document, Passage.document_id == Document.id).where(Passage.id.in_(chunk)))
            out.update((pid, (path, language)) for pid, path, language in rows)
    return out
