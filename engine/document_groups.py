"""A search's matching passages grouped by their documents, in arrays.

    >>> groups = DocumentGroups.of(passage_catalog(store), ids)   # ids best first
    >>> groups.firsts()                 # each document's best passage, best document first
    >>> groups.positions(first, 3)      # that document's three best passages

A query of common words matches thousands of passages, and every one counts towards the
documents and languages a search reports. Grouping them with a dict of paths cost about
3-5 ms a query at 100k passages; these arrays do it in a fraction of a millisecond
(docs/benchmarks.md). A document is one path (Document.path is unique), so its catalog row
stands for it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from engine.store.catalog import PassageCatalog


@dataclass(frozen=True)
class DocumentGroups:
    """Per matching passage (its position in score order): its document's catalog row
    (-1 for a passage removed since the search began, which belongs to no group) and its
    language ('' where unknown)."""

    catalog: PassageCatalog
    document: np.ndarray  # int64 [n]
    language_code: np.ndarray  # int64 [n]: index into `language_names`
    language_names: np.ndarray  # object [languages + 1]; '' for an unknown language

    @classmethod
    def of(cls, catalog: PassageCatalog, ids: np.ndarray) -> DocumentGroups:
        documents, codes = catalog.places(ids)
        names = np.array([lang or "" for lang in catalog.languages] + [""], dtype=object)
        return cls(catalog, documents, np.where(codes < 0, len(names) - 1, codes), names)

    @property
    def language(self) -> np.ndarray:
        """Each passage's language code, '' where unknown (object [n])."""
        return self.language_names[self.language_code]

    def firsts(self, among: np.ndarray | None = None) -> np.ndarray:
        """The position of each document's best passage, best document first; with `among`
        (bool [n]), of its best passage among those, documents ordered by it."""
        present = self.document >= 0 if among is None else (self.document >= 0) & among
        positions = np.flatnonzero(present)
        _, first = np.unique(self.document[positions], return_index=True)
        return np.sort(positions[first])

    def positions(self, first: int, limit: int, among: np.ndarray | None = None) -> np.ndarray:
        """The best `limit` positions of the document whose passage is at `first` (among
        those `among` keeps), best first."""
        same = self.document == self.document[first]
        return np.flatnonzero(same if among is None else same & among)[:limit]

    def path(self, position: int) -> str:
        return self.catalog.document_paths[int(self.document[position])]

    def language_counts(self, firsts: np.ndarray) -> dict[str, int]:
        """How many of the documents whose best passages are at `firsts` have a matching
        passage in each language: a document with passages in two counts under both."""
        counted = np.isin(self.document, self.document[firsts])
        width = len(self.language_names)
        pairs = np.unique(self.document[counted] * width + self.language_code[counted])
        return dict(Counter(self.language_names[pairs % width].tolist()))
