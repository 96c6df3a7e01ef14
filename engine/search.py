"""Query -> dense and keyword candidates -> fused passage scores -> documents above a floor.

    >>> results = run_search(SearchIndexes(store, live, keywords), parse_query("FA-2024-5521 lang:de"),
    ...                      query_vector, k=10, mode="fused")
    >>> results.hits[0].path, results.total, results.languages

Dense retrieval looks at every passage the filters allow, never only those sharing a word
with the query, so a German query still finds a Japanese document. Keyword retrieval
(BM25, engine.index.keyword_index) finds exact words and identifiers. Both score the union
of their candidates, and the scores are combined (docs/search.md explains and measures it):

  fused = z / z_best + keyword_weight * k
      z: the passage's cosine in standard deviations above this query's mean cosine over
         the corpus (z_best: the best candidate's); k: BM25 / the query's best possible
         BM25, in 0..1

Filters, phrases and exclusions restrict the passage ids before either retrieval; the
relevance floor then keeps passages whose z or k says they really match, so `total`
and the language counts cover every match, not a top-N.

Dense scores are corrected cosines (LiveIndex.dense_scores): each passage's document
context mixed in, (1 - w) cos(q, p) + w cos(q, c_D) (engine.index.document_context), so a
stray paragraph of an off-topic document does not beat the document about the question;
then the hubness offset taken off, beta * (r_p(L) - r_0(L)) for the query's language L
(engine.index.hubness), so a passage close to every query (a table of contents, a
licence) does not win by that. FAISS ranks by cosine; the correction re-ranks what it
returns (at least `dense_fetch` candidates), and the z baseline is measured on corrected
scores too.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from engine.document_groups import DocumentGroups
from engine.errors import InputError
from engine.events import DocumentHit, PassageHit, SearchResults
from engine.highlight import HighlightTerms, first_match
from engine.index.keyword_index import KeywordIndex, KeywordQuery
from engine.index.keyword_tokens import names_identifier, names_in
from engine.index.live_index import LiveIndex
from engine.index.language_means import reference_digest
from engine.index.name_spelling import passages_that_may_name
from engine.index.reference_levels import keep_level, levels_file_for, read_levels
from engine.query import ParsedQuery
from engine.search_config import SearchConfig, meaning_floor
from engine.index.fusion import ScoreBaseline, fuse, score_baseline
from engine.index.restrict import allowed_passages
from engine.store import PassageRow, Store
from engine.store.catalog import passage_catalog
from engine.store.search_queries import passage_texts

SNIPPET_CHARS = 280
PASSAGES_PER_DOCUMENT = 3
Mode = Literal["fused", "dense", "keyword"]
MODES: tuple[str, ...] = ("fused", "dense", "keyword")
MATCH_KINDS = ("keywords", "meaning", "both")
EXACT_FROM_STORE = 2048  # up to this many given ids are scored from their stored vectors


@dataclass(frozen=True)
class SearchIndexes:
    store: Store
    live: LiveIndex
    keywords: KeywordIndex


@dataclass
class _Candidates:
    """Scores of the union of dense and keyword candidates, aligned by position."""

    ids: np.ndarray  # int64 [n]
    cosine: np.ndarray  # float32 [n]; nan where the query was not encoded
    keyword: np.ndarray  # float32 [n]; 0 where no keyword matched


def run_search(indexes: SearchIndexes, query: ParsedQuery, query_vector: np.ndarray | None, k: int,
               mode: Mode = "fused", config: SearchConfig = SearchConfig(), *,
               language: str | None = None, facet: str | None = None) -> SearchResults:
    """The k best documents for a parsed query, and every match counted; the results
    carry the query, so front ends mark its words without parsing it again.

    `language`: the query's ISO 639-1 code (None: unknown), for the hubness correction and
    the keyword stems.
    `facet`: a language code of `SearchResults.languages` ('' for unknown): only the
    documents with a matching passage in it, and only those passages. Unlike `lang:`,
    which restricts retrieval, the matches and their strength are the unfiltered
    search's, so the facet returns exactly the documents its count said.
    """
    if mode not in MODES:
        raise InputError(f"search mode must be one of {', '.join(MODES)}, got {mode!r}")
    return replace(_search(indexes, query, query_vector, k, mode, config, language, facet), query=query,
                   language=language)


def _search(indexes: SearchIndexes, query: ParsedQuery, query_vector: np.ndarray | None, k: int,
            mode: Mode, config: SearchConfig, language: str | None, facet: str | None) -> SearchResults:
    if k <= 0 or query.is_empty or len(indexes.live) == 0:
        return SearchResults((), 0, {})
    restriction = allowed_passages(indexes.store, indexes.keywords, query)
    allowed, nothing = restriction.ids, SearchResults((), 0, {}, left_out=restriction.left_out)
    if allowed is not None and len(allowed) == 0:
        return nothing
    use_dense = mode != "keyword" and query_vector is not None
    baseline = score_baseline(indexes.live, query_vector, language) if use_dense else None
    dense = ((np.empty(0, np.int64), np.empty(0, np.float32)) if not use_dense
             else _dense_above_floor(indexes.live, query_vector, allowed, baseline, config, language))
    dense_ids = dense[0]
    keyword_query = KeywordQuery.of_tokens(query.keyword_tokens, language)  # stems in its language
    if mode != "dense":
        keyword_ids, keyword_scores = _keyword_candidates(indexes.keywords, keyword_query, allowed, config)
    else:
        keyword_ids, keyword_scores = np.empty(0, np.int64), np.empty(0, np.float32)
    words_found = indexes.keywords.holds_any(keyword_query)
    ids = np.union1d(dense_ids, keyword_ids)
    if len(ids) == 0:
        return nothing
    cosine = (_cosines(indexes.live, query_vector, ids, dense, keyword_ids, keyword_scores, config, language)
              if use_dense else np.full(len(ids), np.nan, np.float32))
    keyword = np.zeros(len(ids), np.float32)
    keyword[np.searchsorted(ids, keyword_ids)] = keyword_scores
    terms = query.highlight.stemmed(language)
    level = (reference_level(indexes.live, language)
             if use_dense and config.answer_margin is not None else None)
    unanswered = ((config.weak_when_unanswered and unanswered_query(query, words_found, language))
                  or (use_dense and below_answer_floor(cosine, keyword, config, level)))
    unknown = unknown_names(query, indexes.keywords, language) if config.weak_when_name_unknown else []
    results = _documents(indexes.store, _Candidates(ids, cosine, keyword), baseline, mode, k, config, terms,
                         unanswered, sentence=is_sentence(query, language), facet=facet,
                         unknown=_UnknownNames(tuple(unknown), language) if unknown else None)
    return replace(results, unknown_names=tuple(unknown), left_out=restriction.left_out)


def is_sentence(query: ParsedQuery, language: str | None) -> bool:
    """Whether partial keyword matches count less for this query (fusion.keyword_bonus): it is
    text in a recognised language and names no identifier. "why does ffi_prep_closure_loc
    fail" is a lookup, however English: the passage holding the identifier must win."""
    return language is not None and not any(names_identifier(w) for w in query.keyword_words)


def unanswered_query(query: ParsedQuery, words_found: bool, language: str | None) -> bool:
    """True for a query nothing can answer well ("qwzx vlorp bnarf"): it has words, none of
    them occurs anywhere in the collection, and no language is recognised in it. Dense
    retrieval still returns the passages nearest to it; they are shown as weaker matches.
    A real question in a language the folder does not hold keeps its language; an
    identifier that is not in the folder is rightly unanswered."""
    return bool(query.keyword_words) and not words_found and language is None


def unknown_names(query: ParsedQuery, keywords: KeywordIndex, language: str | None) -> list[str]:
    """The names the query uses (keyword_tokens.names_in: "WordPress", "Kubernetes") that
    no passage of the library holds. A passage in the query's own language that answered
    it would use them, so such passages are weaker matches; one in another language may
    write the name its own way ("Brasilien", "Самсунг") and keeps its strength."""
    return [name for name in names_in(query.words, language) if not keywords.holds_word(name)]


def below_answer_floor(cosine: np.ndarray, keyword: np.ndarray, config: SearchConfig,
                       level: float | None = None) -> bool:
    """True when no candidate comes near the query ("chocolate cake recipe" in a folder of
    manuals) and no passage holds enough of the query's words: the best corrected cosine is
    under the model's answer floor, or not `answer_margin` above `level`, what ordinary
    sentences reach in this library (reference_level; SearchConfig.answer_floor)."""
    if not len(cosine) or np.all(np.isnan(cosine)) or keyword.max(initial=0.0) >= config.keyword_answer_share:
        return False
    best = np.nanmax(cosine)
    under_floor = config.answer_floor is not None and best < config.answer_floor
    under_level = config.answer_margin is not None and level is not None and best < level + config.answer_margin
    return bool(under_floor or under_level)


# The share of ordinary sentences whose best match in the library a real answer must beat.
REFERENCE_QUANTILE = 90
# The level is measured again once the library has grown or shrunk by this share.
REFERENCE_LEVEL_DRIFT = 0.1
POOLED_EVERY = 8
# the library's penalties (one object a generation, kept while it lives) -> {language: (passages, level)}
_levels: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def reference_level(live: LiveIndex, language: str | None) -> float | None:
    """How near ordinary sentences of `language` come to this library: the 90th percentile
    of the best corrected cosine each hubness reference query of that language reaches
    (a sample of every language's, for a language the set lacks or an unknown one). None before
    the reference queries are known (LiveIndex.ensure_corrections) or in an empty library.

    It moves with what the library holds, not with each document: measured once (one
    batched search) per set of penalties (a generation's) and language, and again when the
    library's size has moved by REFERENCE_LEVEL_DRIFT, so a search while indexing does not
    pay for it on every batch; and kept beside the FAISS file for the next process
    (engine.index.reference_levels), so each command-line search does not pay for it either.
    """
    reference = live.hubness_reference
    if reference is None or len(live) == 0:
        return None
    languages = reference[1]
    own_language = language in languages
    key = language if own_language else None
    # penalties dropped for a rebuild (another process's change) are back by the next search
    levels = {} if live.hubness is None else _levels.setdefault(live.hubness, {})
    held = levels.get(key)
    if _still_current(held, len(live)):
        return held[1]
    kept, stamp = levels_file_for(live.folder, live.generation.id), _levels_stamp(live)  # only on a miss
    held = held or read_levels(kept, stamp).get(key or "")  # another process's
    if _still_current(held, len(live)):
        levels[key] = held
        return held[1]
    # Pooled over every language, one query in POOLED_EVERY (five a language) gives a 90th
    # percentile within 0.01 of all 640's on five libraries, at an eighth of the cost
    # (0.14 s instead of 1.0 s at 365k passages).
    rows = ([i for i, lang in enumerate(languages) if lang == language] if own_language
            else list(range(0, len(languages), POOLED_EVERY)))
    best = reference_bests(live, rows)
    level = float(np.nanpercentile(best, REFERENCE_QUANTILE)) if np.isfinite(best).any() else None
    levels[key] = (len(live), level)
    keep_level(kept, stamp, key or "", levels[key])
    return level


def _still_current(held: tuple[int, float | None] | None, passages: int) -> bool:
    """Whether a level measured at held[0] passages still holds for a library of `passages`."""
    return held is not None and abs(passages - held[0]) <= REFERENCE_LEVEL_DRIFT * held[0]


def _levels_stamp(live: LiveIndex) -> str:
    """What a kept level depends on besides the library's passages: the corrections'
    settings and reference sentences, and how a level is read from its queries."""
    return (f"{live.generation.id} {live.generation.model_name} {live.hubness_config} {live.context_config} "
            f"{live.means is not None} {reference_digest()} {REFERENCE_QUANTILE} {POOLED_EVERY}")


def reference_bests(live: LiveIndex, rows: list[int] | None = None) -> np.ndarray:
    """The best corrected cosine that each of the hubness reference queries at `rows` (all
    of them by default) reaches in the library, float32 [len(rows)], in one batched search;
    nan for a query that finds nothing. The reference queries must be known
    (LiveIndex.ensure_corrections)."""
    vectors, languages = live.hubness_reference
    rows = list(range(len(languages))) if rows is None else rows
    scores, ids = live.search(np.ascontiguousarray(vectors[rows], np.float32), 8)
    best = np.full(len(rows), np.nan, np.float32)
    for row, i in enumerate(rows):
        keep = ids[row] >= 0
        if keep.any():
            best[row] = live.dense_scores(ids[row][keep], scores[row][keep], vectors[i], languages[i]).max()
    return best


def dense_candidates(live: LiveIndex, query_vector: np.ndarray, k: int,
                     allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The dense scoring step: (passage ids int64 [n], cosine scores float32 [n]), best first.

    The one place cosine scores are made, so a correction of them (a hubness penalty per
    passage) applies to every mode and to the keyword candidates' scores alike. With
    `allowed`, only those ids are searched (FAISS id selector), and the result is
    returned sorted by id instead, aligned with `allowed` where all of them are found.
    """
    queries = np.asarray(query_vector, np.float32).reshape(1, -1)
    k = max(1, min(int(k), len(live)))
    if allowed is not None and k >= len(allowed) and len(allowed) <= EXACT_FROM_STORE:
        # A few given ids: their stored vectors, one product. An id selector on IVF would
        # scan every list for them (tens of ms at 100k passages).
        found, vectors = live.vectors(allowed)
        scores = np.full(len(allowed), -1.0, np.float32)  # no vector (removed meanwhile): lowest
        scores[np.searchsorted(allowed, found)] = vectors @ queries[0]
        return allowed, scores
    if allowed is None:
        scores, ids = live.search(queries, k)
    else:
        scores, ids = live.search(queries, min(k, len(allowed)), candidate_filter=allowed)
    keep = ids[0] >= 0
    ids, scores = ids[0][keep], scores[0][keep]
    if allowed is not None and k >= len(allowed):
        order = np.argsort(ids, kind="stable")
        ids, scores = ids[order], scores[order]
        if len(ids) < len(allowed):  # an id without a vector (removed meanwhile): score it lowest
            full = np.full(len(allowed), -1.0, np.float32)
            full[np.searchsorted(allowed, ids)] = scores
            return allowed, full
    return ids, scores


def _cosines(live: LiveIndex, query_vector: np.ndarray, ids: np.ndarray, dense: tuple[np.ndarray, np.ndarray],
             keyword_ids: np.ndarray, keyword_scores: np.ndarray, config: SearchConfig,
             language: str | None = None) -> np.ndarray:
    """Cosines aligned with `ids` (sorted): the dense candidates' own, and exact ones for the
    best `cosine_rescored` keyword-only candidates; nan for the rest, which rank by keywords
    alone (a query of common words matches thousands, and scoring each costs a scan)."""
    dense_ids, dense_scores = dense
    cosine = np.full(len(ids), np.nan, np.float32)
    cosine[np.searchsorted(ids, dense_ids)] = dense_scores
    best_keyword = keyword_ids[np.argsort(-keyword_scores, kind="stable")[: config.cosine_rescored]]
    missing = np.setdiff1d(best_keyword, dense_ids)
    if len(missing):
        scored, scores = dense_candidates(live, query_vector, len(missing), missing)
        cosine[np.searchsorted(ids, missing)] = live.dense_scores(scored, scores, query_vector, language)
    return cosine


def _dense_above_floor(live: LiveIndex, query_vector: np.ndarray, allowed: np.ndarray | None,
                       baseline: ScoreBaseline, config: SearchConfig,
                       language: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(ids sorted, corrected cosines) of passages clearing the meaning floor (all of them, not a top-N)."""
    total = len(live) if allowed is None else len(allowed)
    fetch = min(total, config.dense_fetch)
    while True:
        ids, scores = dense_candidates(live, query_vector, fetch, allowed)
        scores = live.dense_scores(ids, scores, query_vector, language)
        order = np.argsort(-scores, kind="stable")
        ids, scores = ids[order], scores[order]
        if len(scores) == 0:
            return np.empty(0, np.int64), np.empty(0, np.float32)
        z = baseline.z(scores)
        floor = meaning_floor(float(z[0]), config)
        if z[-1] < floor or fetch >= total or fetch >= config.max_counted:
            keep = z >= floor
            order = np.argsort(ids[keep])
            return ids[keep][order], scores[keep][order]
        fetch = min(total, fetch * 4)


def _keyword_candidates(keywords: KeywordIndex, query: KeywordQuery, allowed: np.ndarray | None,
                        config: SearchConfig) -> tuple[np.ndarray, np.ndarray]:
    """(ids sorted, BM25 shares) of allowed passages whose share clears the keyword floor.

    The floor is applied inside the index, in one query: at most max_counted passages
    clear it before the filter, as the matches of a common word are counted no further.
    """
    ids, scores = keywords.search(query, config.max_counted, min_share=config.min_keyword_share)
    if allowed is not None:
        keep = np.isin(ids, allowed, assume_unique=True)
        ids, scores = ids[keep], scores[keep]
    order = np.argsort(ids)
    return ids[order], scores[order]


@dataclass(frozen=True)
class _UnknownNames:
    """The names a query uses that no passage holds (unknown_names), and the query's language."""

    names: tuple[str, ...]
    language: str | None


def _documents(store: Store, c: _Candidates, baseline: ScoreBaseline | None, mode: Mode, k: int,
               config: SearchConfig, terms: HighlightTerms | None = None, unanswered: bool = False,
               sentence: bool = False, facet: str | None = None, unknown: _UnknownNames | None = None) -> SearchResults:
    """Groups matching passages by document: counts over all, full hits for the top k only.
    Passages that do not speak of the `unknown` names are weaker matches (_not_naming)."""
    scores, matched = fuse(c.cosine, c.keyword, baseline, mode, config, sentence)
    keep = matched != ""
    order = np.argsort(-scores[keep], kind="stable")
    ids, scores, matched = c.ids[keep][order], scores[keep][order], matched[keep][order]
    cosine, keyword = c.cosine[keep][order], c.keyword[keep][order]
    groups = DocumentGroups.of(passage_catalog(store), ids)  # removed since the search began: in none
    strength = _strength(scores, cosine, keyword, baseline, mode)
    firsts = groups.firsts()  # a document is as strong as its best passage
    if unanswered:
        strength = np.minimum(strength, config.weak_below - 1.0)
    elif unknown is not None:  # only the documents still strong need reading
        silent = _not_naming(store, ids, cosine, groups.language, firsts[strength[firsts] >= config.weak_below],
                             unknown, config)
        strength = np.where(silent, np.minimum(strength, config.weak_below - 1.0), strength)
    strong_firsts = firsts[strength[firsts] >= config.weak_below]
    # a strong document counts under each language it has a matching passage in: what
    # choosing that facet returns; the counts are the unfiltered search's either way
    languages = groups.language_counts(strong_firsts)
    among = None if facet is None else groups.language == facet
    listed = firsts if among is None else groups.firsts(among)
    is_strong = np.isin(groups.document[listed], groups.document[strong_firsts])
    strong_listed, weak_listed = listed[is_strong], listed[~is_strong]
    weak = set(weak_listed[:k].tolist())
    # strong documents first, each group best first
    top = np.concatenate([strong_listed, weak_listed])[:k].tolist()
    shown = {first: groups.positions(first, PASSAGES_PER_DOCUMENT, among).tolist() for first in top}
    rows = store.passages([int(ids[i]) for positions in shown.values() for i in positions])
    hits = []
    for first, positions in shown.items():
        passages = []
        for i in positions:
            row = rows.get(int(ids[i]))
            if row is not None:
                cos = None if np.isnan(cosine[i]) else float(cosine[i])
                passages.append(_passage_hit(row, float(scores[i]), str(matched[i]), cos, float(keyword[i]),
                                             terms))
        if passages:
            hits.append(_document_hit(groups.path(first), passages, rows[passages[0].passage_id], first in weak))
    complete = len(c.ids) < config.max_counted
    best_z = float(baseline.z(np.nan_to_num(c.cosine, nan=-np.inf)).max(initial=-np.inf)) if baseline else None
    return SearchResults(tuple(hits), len(strong_listed), languages, complete=complete,
                         weak_total=len(weak_listed), best_z=best_z)


def _not_naming(store: Store, ids: np.ndarray, cosine: np.ndarray, passage_language: np.ndarray,
                positions: np.ndarray, unknown: _UnknownNames, config: SearchConfig) -> np.ndarray:
    """Which passages (of those at `positions`) do not speak of the names the query uses
    and no passage holds: every one in the query's own language, where an answer would
    write them; and, under `config.name_absent_floor`, one in another language that writes
    names in Latin letters but none of these, even respelt ("Brasil" for "Brazil": see
    engine.index.name_spelling). A passage that comes that near may name the thing otherwise
    ("Keltische See" for "Celtic Sea"); one in another script with no Latin words may
    transliterate it ("Самсунг")."""
    silent = np.zeros(len(ids), bool)
    own = passage_language[positions] == unknown.language
    silent[positions[own]] = True
    if config.name_absent_floor is None:
        return silent
    others = positions[~own]
    doubtful = others[np.nan_to_num(cosine[others], nan=-np.inf) < config.name_absent_floor]
    if len(doubtful) == 0:
        return silent
    texts = {pid: text for pid, _document, text in passage_texts(store, ids[doubtful].tolist())}
    may_name = passages_that_may_name(texts, unknown.names)
    silent[[i for i in doubtful.tolist() if int(ids[i]) in texts and int(ids[i]) not in may_name]] = True
    return silent


def _strength(scores: np.ndarray, cosine: np.ndarray, keyword: np.ndarray, baseline: ScoreBaseline | None,
              mode: Mode) -> np.ndarray:
    """How close each passage (best first) comes to the best one, 1 for the best: its
    score's share of the best score (z / z_best in dense mode), or in fused mode its BM25
    share's part of the best BM25 share when that is more: the same word found in a
    document of another language is as strong a match, though its meaning scores lower."""
    if len(scores) == 0:
        return np.ones(0, np.float32)
    relative = (baseline.z(np.nan_to_num(cosine, nan=-np.inf)) if mode == "dense" and baseline is not None
                else scores.astype(np.float32))
    best = float(relative[0])
    strength = relative / best if best > 0 else np.ones(len(relative), np.float32)
    best_keyword = float(keyword.max())
    if mode == "fused" and best_keyword > 0:
        strength = np.maximum(strength, keyword / best_keyword)
    return strength


def _document_hit(path: str, passages: list[PassageHit], row: PassageRow, weak: bool = False) -> DocumentHit:
    kinds = {p.matched_by for p in passages}
    matched_by = "both" if "both" in kinds or len(kinds) > 1 else kinds.pop()
    return DocumentHit(path=path, score=passages[0].score, language=row.document_language,
                       file_type=row.file_type, passages=tuple(passages), matched_by=matched_by, weak=weak,
                       title=row.title, format=row.format)


def _passage_hit(row: PassageRow, score: float, matched_by: str, cosine: float | None,
                 keyword: float, terms: HighlightTerms | None = None) -> PassageHit:
    return PassageHit(passage_id=row.passage_id, score=score, text=row.text, start=row.start,
                      end=row.end, page=row.page, language=row.language, snippet=make_snippet(row.text, terms=terms),
                      matched_by=matched_by, cosine=cosine, keyword_score=keyword)


def make_snippet(text: str, limit: int = SNIPPET_CHARS, terms: HighlightTerms | None = None) -> str:
    """The passage on one line, cut at a word boundary with an ellipsis when too long.

    With `terms`, a long passage whose first `limit - 20` characters match none of them
    has its snippet start shortly before the first matched word, so an identifier deep in
    a passage is in its snippet (and can be marked there).
    """
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    first = first_match(flat, terms) if terms else None
    if first and first[1] > limit - 20:
        cut = flat.rfind(" ", 0, max(0, first[0] - 40)) + 1
        flat = "…" + flat[cut:]
        if len(flat) <= limit:
            return flat
    cut = flat.rfind(" ", 0, limit)
    return flat[: cut if cut > limit // 2 else limit].rstrip() + "…"


__all__ = ["MODES", "SearchConfig", "SearchIndexes", "dense_candidates", "make_snippet", "run_search"]
