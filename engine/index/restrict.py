"""Which passages a query may return, decided before retrieval: filters, phrases, exclusions.

    >>> allowed = allowed_passages(store, keywords, parse_query('"hot springs" -hotel lang:ja'))
    >>> allowed      # sorted int64 passage ids, or None when nothing restricts

Retrieval then searches among exactly these ids (a FAISS id selector, a membership test
on BM25 hits), so a filter never hides matches behind a top-N cut.
"""

from __future__ import annotations

import numpy as np

from collections.abc import Sequence

from engine.index.keyword_index import KeywordIndex
from engine.index.keyword_tokens import Token, tokenize
from engine.query import ParsedQuery
from engine.store import Store
from engine.store.search_queries import Restriction, documents_of_passages, passage_texts, restricted_passage_ids


def allowed_passages(store: Store, keywords: KeywordIndex, query: ParsedQuery) -> np.ndarray | None:
    """Sorted ids of the passages the query allows, or None for "all of them"."""
    excluded = _excluded_documents(store, keywords, query.excluded_tokens)
    restriction = Restriction(
        languages=query.languages or None, file_types=query.file_types or None,
        path_prefix=query.path_prefix, modified_after=query.modified_after,
        modified_before=query.modified_before, excluded_documents=frozenset(excluded))
    allowed = restricted_passage_ids(store, restriction) if restriction.active else None
    for phrase in query.phrase_tokens:
        holding = phrase_passages(store, keywords, phrase)
        allowed = holding if allowed is None else np.intersect1d(allowed, holding, assume_unique=True)
    return allowed


def phrase_passages(store: Store, keywords: KeywordIndex, tokens: Sequence[Token]) -> np.ndarray:
    """Sorted ids of passages holding the phrase's terms (its `tokens`) consecutively, in order."""
    terms = [t.term for t in tokens]
    if len(terms) > 1 and not any(t.parts for t in tokens):
        # Plain words stand next to each other in the index's term column too: FTS5's own
        # phrase query answers, without reading any passage text.
        return np.sort(keywords.matching(terms, phrase=True))
    candidates = keywords.matching(terms)
    if len(terms) <= 1 or len(candidates) == 0:
        return np.sort(candidates)
    found = [pid for pid, _doc, text in passage_texts(store, candidates.tolist())
             if contains_sequence([t.term for t in tokenize(text)], terms)]
    return np.sort(np.asarray(found, np.int64))


def contains_sequence(haystack: list[str], needle: list[str]) -> bool:
    """True when `needle` occurs in `haystack` as consecutive items."""
    first, n = needle[0], len(needle)
    return any(haystack[i : i + n] == needle for i, term in enumerate(haystack) if term == first)


def _excluded_documents(store: Store, keywords: KeywordIndex,
                        excluded: Sequence[Sequence[Token]]) -> set[int]:
    documents: set[int] = set()
    for tokens in excluded:
        ids = phrase_passages(store, keywords, tokens)
        if len(ids):
            documents |= documents_of_passages(store, ids.tolist())
    return documents
