"""Read-only queries search needs from the store: passage ids under filters, passage text, vectors.

    >>> ids = restricted_passage_ids(store, Restriction(languages=frozenset({"de"})))
    >>> passage_texts(store, [1, 2])          # [(passage id, document id, text), ...]

Filters are applied here, before any top-k cut: search then looks only among these ids,
so counts and facets cover every match. What never changes in place (a passage's
document, language, file type and path) comes from the cached catalog
(engine.store.catalog); the rest from SQL.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sqlalchemy import select

from engine.store.catalog import passage_catalog
from engine.store.dates import documents_modified
from engine.store.schema import Document, Passage, Vector
from engine.store.store import Store, _chunks
from engine.store.vector_blobs import decode_vectors


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
    """Sorted int64 ids of every passage the restriction allows.

    Languages, file types, folders and exclusions come from the cached passage catalog;
    dates from engine.store.dates, as a document's mtime changes without a new version.
    """
    catalog = passage_catalog(store)
    dated = None
    if restriction.modified_after is not None or restriction.modified_before is not None:
        dated = documents_modified(store, restriction.modified_after, restriction.modified_before)
    ids = catalog.allowed(languages=restriction.languages, file_types=restriction.file_types,
                          path_prefix=restriction.path_prefix, document_ids=dated)
    if restriction.excluded_documents:
        ids = np.setdiff1d(ids, catalog.passages_of(restriction.excluded_documents), assume_unique=True)
    return ids


def passage_ids(store: Store) -> np.ndarray:
    """Sorted int64 ids of every stored passage."""
    with store.session() as s:
        return np.fromiter(s.scalars(select(Passage.id).order_by(Passage.id)), np.int64)


def passages_of_documents(store: Store, document_ids: Sequence[int] | frozenset[int]) -> np.ndarray:
    """Sorted ids of these documents' passages."""
    return passage_catalog(store).passages_of(document_ids)


def documents_of_passages(store: Store, ids: Sequence[int]) -> set[int]:
    """Ids of the documents holding these passages (passages no longer stored are left out)."""
    return passage_catalog(store).documents_of(ids)


def passage_texts(store: Store, ids: Sequence[int]) -> list[tuple[int, int, str]]:
    """(passage id, document id, text) of these passages; ids no longer stored are absent."""
    out: list[tuple[int, int, str]] = []
    with store.session() as s:
        for chunk in _chunks([int(i) for i in ids]):
            out.extend(tuple(r) for r in s.execute(
                select(Passage.id, Passage.document_id, Passage.text).where(Passage.id.in_(chunk))))
    return out


def passages_to_index(store: Store, ids: Sequence[int]) -> list[tuple[int, int, str, str | None]]:
    """(passage id, document id, text, language or None) of these passages, for the keyword
    index; ids no longer stored are absent."""
    out: list[tuple[int, int, str, str | None]] = []
    with store.session() as s:
        for chunk in _chunks([int(i) for i in ids]):
            out.extend(tuple(r) for r in s.execute(select(Passage.id, Passage.document_id, Passage.text,
                                                          Passage.language).where(Passage.id.in_(chunk))))
    return out


def vectors_of(store: Store, generation_id: int, dim: int, ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """(ids int64 [n], vectors float32 [n, dim]) of those of `ids` that have a vector, in
    no particular order.

    Search re-scores its candidates with these (a few hundred per query), so the SQL is
    written out: the ids are integers formatted into the statement, which saves binding
    and SQLAlchemy's per-row work (3-4x faster than a Core select here).
    """
    found_ids: list[int] = []
    blobs: list[bytes] = []
    with store.session() as s:
        connection = s.connection()
        for chunk in _chunks([int(i) for i in ids]):
            listed = ",".join(map(str, chunk))
            rows = connection.exec_driver_sql(
                f"SELECT passage_id, data FROM {Vector.__tablename__} WHERE generation_id = "
                f"{int(generation_id)} AND passage_id IN ({listed})").fetchall()
            found_ids.extend(r[0] for r in rows)
            blobs.extend(r[1] for r in rows)
    return np.asarray(found_ids, np.int64), decode_vectors(blobs, dim)


def passage_documents(store: Store, ids: Sequence[int]) -> dict[int, tuple[str, str | None]]:
    """passage id -> (document path, document language): enough to group and count matches.

    Passages no longer stored are absent.
    """
    catalog = passage_catalog(store)
    ids = np.asarray(ids, np.int64)
    rows = catalog.document_positions(ids)
    paths, languages = catalog.document_paths, catalog.document_languages
    return {pid: (paths[row], languages[row]) for pid, row in zip(ids.tolist(), rows.tolist()) if row >= 0}

