"""Query -> vector -> nearest passages -> results grouped by document.

    >>> hits = search_index(store, live, query_vector, k=10, filters=SearchFilters(languages={"de"}))
    >>> hits[0].path, hits[0].best.snippet
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

from engine.events import DocumentHit, PassageHit
from engine.index.live_index import LiveIndex
from engine.store import PassageRow, Store

SNIPPET_CHARS = 280
PASSAGES_PER_DOCUMENT = 3


@dataclass(frozen=True)
class SearchFilters:
    languages: frozenset[str] | None = None  # ISO 639-1 codes of passages to keep
    path_prefix: str | None = None  # keep documents at or under this path
    file_types: frozenset[str] | None = None  # extensions without the dot

    @classmethod
    def of(cls, languages: Collection[str] | None = None, path_prefix: str | None = None,
           file_types: Collection[str] | None = None) -> SearchFilters:
        return cls(
            frozenset(languages) if languages else None,
            path_prefix or None,
            frozenset(t.lower().lstrip(".") for t in file_types) if file_types else None,
        )

    def accepts(self, row: PassageRow) -> bool:
        if self.languages and row.language not in self.languages:
            return False
        if self.file_types and row.file_type not in self.file_types:
            return False
        if self.path_prefix:
            prefix = self.path_prefix.rstrip("/")
            return row.path == prefix or row.path.startswith(prefix + "/")
        return True

    @property
    def active(self) -> bool:
        return bool(self.languages or self.path_prefix or self.file_types)


def search_index(store: Store, live: LiveIndex, query_vector: np.ndarray, k: int,
                 filters: SearchFilters = SearchFilters()) -> list[DocumentHit]:
    """The k best documents for a query vector [dim], each with its best passages."""
    total = len(live)
    if total == 0 or k <= 0:
        return []
    # Passages are grouped by document, so ask FAISS for more than k; with filters,
    # widen the net until k documents pass or the whole index was seen.
    fetch = min(total, max(8 * k, 64))
    while True:
        scores, ids = live.search(query_vector.reshape(1, -1).astype(np.float32), fetch)
        hits = _group(store, scores[0], ids[0], filters)
        if len(hits) >= k or fetch >= total:
            return hits[:k]
        fetch = min(total, fetch * 4)


def _group(store: Store, scores: np.ndarray, ids: np.ndarray,
           filters: SearchFilters) -> list[DocumentHit]:
    keep = ids >= 0
    scores, ids = scores[keep], ids[keep]
    rows = store.passages(ids.tolist())
    by_document: dict[str, list[PassageHit]] = {}
    meta: dict[str, PassageRow] = {}
    for score, pid in zip(scores.tolist(), ids.tolist()):
        row = rows.get(pid)
        if row is None or not filters.accepts(row):
            continue  # removed since the search began, or filtered out
        passages = by_document.setdefault(row.path, [])
        meta.setdefault(row.path, row)
        if len(passages) < PASSAGES_PER_DOCUMENT:
            passages.append(_passage_hit(row, score))
    hits = [
        DocumentHit(
            path=path,
            score=passages[0].score,
            language=meta[path].document_language,
            file_type=meta[path].file_type,
            passages=tuple(passages),
        )
        for path, passages in by_document.items()
    ]
    return sorted(hits, key=lambda h: -h.score)


def _passage_hit(row: PassageRow, score: float) -> PassageHit:
    snippet = make_snippet(row.text)
    return PassageHit(
        passage_id=row.passage_id,
        score=float(score),
        text=row.text,
        start=row.start,
        end=row.end,
        page=row.page,
        language=row.language,
        snippet=snippet,
    )


def make_snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """The passage on one line, cut at a word boundary with an ellipsis when too long."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat.rfind(" ", 0, limit)
    return flat[: cut if cut > limit // 2 else limit].rstrip() + "…"
