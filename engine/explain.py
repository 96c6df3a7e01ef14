"""Why a result stands where it does: the parts of each shown passage's score.

    >>> results = library.search_results("how to feed a sourdough starter", explain=True)
    >>> results.hits[0].best.explanation
    ScoreParts(plain_cosine=0.81, cosine=0.44, document=0.52, hubness=0.01, z=3.2, meaning=1.0, ...)

For each shown passage: its cosine with the vectors as stored (plain: the encoder's, the
passage's with its section context added, engine/passage_context.py), the cosine in the
language-neutral space the search ranks by (each language's mean taken out,
engine/index/language_means.py), the cosine to the centroid of its document that is mixed in
(engine/index/document_context.py), the hubness penalty subtracted, how far the result stands
above this query's mean over the library (z), the meaning part of the fused score (z over the
best z), the keyword share (BM25 over the query's best possible BM25) with what it adds, and
the fused score. `babelfind search --explain` prints them; the window shows them in a
result's tooltip. Only the shown passages are explained, after the search, so ranking pays
nothing for it.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.events import DocumentHit, ScoreParts, SearchResults
from engine.index.fusion import ScoreBaseline, keyword_bonus, score_baseline
from engine.index.live_index import LiveIndex
from engine.search_config import SearchConfig
from engine.store import Store
from engine.store.search_queries import vectors_of


def explain(results: SearchResults, store: Store, live: LiveIndex, query_vector: np.ndarray | None,
            language: str | None, config: SearchConfig, sentence: bool) -> SearchResults:
    """`results` with a ScoreParts on every shown passage (`PassageHit.explanation`).

    `query_vector` is the encoded query as the encoder gave it (None: keyword mode); the
    rest are what the search used (its language, config, and whether the query read as a
    sentence, engine.search.is_sentence).
    """
    passages = [p for hit in results.hits for p in hit.passages]
    ids = np.array(sorted({p.passage_id for p in passages}), np.int64)
    plain: dict[int, float] = {}
    neutral: dict[int, float] = {}
    offsets: dict[int, float] = {}
    documents: dict[int, float] = {}
    dense: dict[int, float] = {}
    baseline: ScoreBaseline | None = None
    if query_vector is not None and len(ids):
        raw_query = np.asarray(query_vector, np.float32).reshape(-1)
        query = live.query_vector(raw_query, language)
        found, stored = vectors_of(store, live.generation.id, live.generation.dim, ids.tolist())
        languages = {p.passage_id: p.language for p in passages}
        held = live.searchable(found, stored, [languages[int(i)] for i in found])  # as search compares them
        cosines = held @ query
        plain = dict(zip(found.tolist(), (stored @ raw_query).tolist()))
        neutral = dict(zip(found.tolist(), cosines.tolist()))
        penalty = live.hubness_offsets(found, language)
        offsets = dict(zip(found.tolist(), (penalty if penalty is not None else np.zeros(len(found))).tolist()))
        if live.context is not None:
            documents = dict(zip(found.tolist(), live.context.similarity(found, query, cosines).tolist()))
        dense = dict(zip(found.tolist(), live.dense_scores(found, cosines, query, language).tolist()))
        baseline = score_baseline(live, query, language)
    best_z = results.best_z
    weight = config.sentence_keyword_weight if sentence else config.keyword_weight

    def parts(p) -> object:
        cosine = neutral.get(p.passage_id)
        hubness = offsets.get(p.passage_id, 0.0)
        ranked = dense.get(p.passage_id)
        z = None if ranked is None or baseline is None else float(baseline.z([ranked])[0])
        meaning = max(0.0, z / best_z) if z is not None and best_z and best_z > 0 else 0.0  # as fusion.fuse
        added = weight * float(keyword_bonus(np.array([p.keyword_score]), config, sentence)[0])
        return ScoreParts(plain.get(p.passage_id), cosine, documents.get(p.passage_id), hubness, z, meaning,
                          p.keyword_score, added, p.score)

    hits = tuple(_with_parts(hit, parts) for hit in results.hits)
    return replace(results, hits=hits)


def _with_parts(hit: DocumentHit, parts) -> DocumentHit:
    return replace(hit, passages=tuple(replace(p, explanation=parts(p)) for p in hit.passages))
