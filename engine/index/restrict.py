"""Which passages a query may return, decided before retrieval: filters, phrases, exclusions.

    >>> allowed = allowed_passages(store, keywords, parse_query('"hot springs" -hotel lang:ja'))
    >>> allowed.ids        # sorted int64 passage ids, or None when nothing restricts
    >>> allowed.left_out   # (("hotel", 3),): the documents each exclusion left out

Retrieval then searches among exactly these ids (a FAISS id selector, a membership test
on BM25 hits), so a filter never hides matches behind a top-N cut.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from engine.index.keyword_index import KeywordIndex
from engine.index.keyword_tokens import Token, tokenize
from engine.query import ParsedQuery, is_short_flag
from engine.store import Store
from engine.store.search_queries import (Restriction, documents_of_passages, passage_texts, passages_of_documents,
                                        restricted_passage_ids)


# Passages read to tell whether the library writes a word as an option (options_as_written).
OPTION_SAMPLE = 100


@dataclass(frozen=True)
class Allowed:
    ids: np.ndarray | None  # sorted passage ids the query allows; None: all of them
    left_out: tuple[tuple[str, int], ...] = ()  # each exclusion and how many documents hold it


def allowed_passages(store: Store, keywords: KeywordIndex, query: ParsedQuery) -> Allowed:
    """The passages the query allows, and what its exclusions left out: the documents each
    one removed from what the query's filters and phrases allow, not from the whole library."""
    filters = Restriction(
        languages=query.languages or None, file_types=query.file_types or None,
        path_prefix=query.path_prefix, modified_after=query.modified_after,
        modified_before=query.modified_before)
    allowed = restricted_passage_ids(store, filters) if filters.active else None
    for phrase in query.phrase_tokens:
        holding = phrase_passages(store, keywords, phrase)
        allowed = holding if allowed is None else np.intersect1d(allowed, holding, assume_unique=True)
    excluded = {text: _documents_holding(store, keywords, tokens, allowed)
                for text, tokens in zip(query.excluded, query.excluded_tokens)}
    removed = frozenset().union(*excluded.values())
    if removed:
        allowed = (restricted_passage_ids(store, Restriction(excluded_documents=removed)) if allowed is None
                   else np.setdiff1d(allowed, passages_of_documents(store, removed), assume_unique=True))
    return Allowed(allowed, tuple((text, len(documents)) for text, documents in excluded.items() if documents))


def options_as_written(store: Store, keywords: KeywordIndex, query: ParsedQuery) -> ParsedQuery:
    """The query with each `-word` it may have pasted from a command line or a message
    (ParsedQuery.option_like) read as the library writes that word: searched for where
    more of the passages holding it write it after a dash ("why do I get cannot find
    -lfoo" must find the FAQ entry on "ld: cannot find -lfoo", not leave it out), left
    out where more write it plain ("jaguar -car", "license -gpl"), and as the query's
    syntax reads it (`is_short_flag`) where the library does not tell ("tar -xzf")."""
    if not query.option_like:  # the query as it came, with the tokens it has cached
        return query
    words, excluded = list(query.words), list(query.excluded)
    # the later first, so that earlier positions stay valid; at one position, the flag the
    # syntax put in `words` was typed after the word left out, which goes before it
    for at, word in sorted(query.option_like, key=lambda o: (o[0], is_short_flag(o[1])), reverse=True):
        option = _reads_as_option(store, keywords, word)
        if option == is_short_flag(word):  # the library reads it as the syntax did
            continue
        if option and word in excluded:  # a word typed twice moves once
            words.insert(at, "-" + word)
            excluded.remove(word)
        elif not option:
            del words[at]
            excluded.append(word)
    return replace(query, words=tuple(words), excluded=tuple(dict.fromkeys(excluded)), option_like=())


def _reads_as_option(store: Store, keywords: KeywordIndex, word: str) -> bool:
    dashed, plain = _how_written(store, keywords, word)
    return dashed > plain or (dashed == plain and is_short_flag(word))


def _how_written(store: Store, keywords: KeywordIndex, word: str) -> tuple[int, int]:
    """How often the passages holding `word` (the first OPTION_SAMPLE) write it after a
    dash (`-lfoo`) and plain; a dash inside a compound ("start-stop", "GPL-2+") counts as neither."""
    tokens = tokenize(word)
    if len(tokens) != 1:
        return 0, 0
    ids = keywords.matching([tokens[0].term])[:OPTION_SAMPLE]
    pattern = re.compile(rf"(?<![\w-])(-?){re.escape(word)}(?![\w-])", re.IGNORECASE)
    dashed = plain = 0
    for _passage, _document, text in passage_texts(store, ids.tolist()):
        for found in pattern.finditer(text):
            if found.group(1):
                dashed += 1
            else:
                plain += 1
    return dashed, plain


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


def _documents_holding(store: Store, keywords: KeywordIndex, tokens: Sequence[Token],
                       within: np.ndarray | None = None) -> set[int]:
    """Ids of the documents holding an excluded word or phrase (its `tokens`); with
    `within`, only those with a passage among those sorted passage ids."""
    ids = phrase_passages(store, keywords, tokens)
    documents = documents_of_passages(store, ids.tolist()) if len(ids) else set()
    if within is None or not documents:
        return documents
    return documents_of_passages(store, np.intersect1d(passages_of_documents(store, documents), within).tolist())
