"""Making dense and keyword scores comparable, and combining them.

    >>> baseline = score_baseline(live, query_vector)   # this query's cosine over the corpus
    >>> scores, matched = fuse(cosines, keyword_shares, baseline, "fused", config)

Raw cosines mean different things per model and per query (e5 puts unrelated text at 0.75,
MiniLM at 0.05), so the floor and the fusion use z = (cosine - mean) / std, the mean and
std being this query's cosine against a fixed random sample of the collection's passages:
a passage that really matches stands several standard deviations out, while the best of a
nonsense query barely leaves the crowd. Keyword scores arrive as a share of the query's
best possible BM25 (engine.index.keyword_index), already 0..1.

"Cosine" here is the corrected cosine search ranks by (LiveIndex.dense_scores: document
context, hubness penalty): the sample's scores are corrected like every candidate's, so z
measures how far a passage stands out after the correction.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from engine.search_config import SearchConfig, meaning_floor

if TYPE_CHECKING:
    from engine.index.live_index import FixedScorer, LiveIndex

SAMPLE_SIZE = 1024  # passages the mean and std are measured on: +-3% std error, ~0.1 ms per query
_RESAMPLE_GROWTH = 0.1  # draw a new sample when the collection changed size by 10%

_samples: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_scorers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # live -> (sample ids, FixedScorer)
_samples_lock = threading.Lock()


@dataclass(frozen=True)
class ScoreBaseline:
    mean: float  # this query's mean cosine over the sample
    std: float  # and its standard deviation (never below 1e-3)

    def z(self, cosine: np.ndarray) -> np.ndarray:
        return (np.asarray(cosine, np.float32) - self.mean) / self.std


def score_baseline(live: LiveIndex, query_vector: np.ndarray,
                   language: str | None = None) -> ScoreBaseline:
    """This query's (corrected) cosine statistics over a random sample of the collection.

    `language`: the query's ISO 639-1 code, which picks the hubness penalties' column.
    """
    scorer = _sample_scorer(live)
    if len(scorer.ids) == 0:
        return ScoreBaseline(0.0, 1.0)
    scores = scorer.scores(query_vector, language)  # [n]
    return ScoreBaseline(float(scores.mean()), max(float(scores.std()), 1e-3))


def fuse(cosine: np.ndarray, keyword: np.ndarray, baseline: ScoreBaseline | None, mode: str,
         config: SearchConfig, sentence: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(ranking scores float32 [n], how each matched: "both"/"meaning"/"keywords"/"" [n]).

    "" marks a passage below both floors: the caller drops it. `sentence`: the query is
    text in a recognised language naming no identifier (engine.search.is_sentence).
    """
    n = len(keyword)
    by_words = keyword >= config.min_keyword_share
    if baseline is None:
        z = np.full(n, -np.inf, np.float32)
        by_meaning = np.zeros(n, bool)
    else:
        z = np.nan_to_num(baseline.z(cosine), nan=-np.inf)
        floor = meaning_floor(float(z.max(initial=-np.inf)), config)
        by_meaning = z >= floor
    if mode == "keyword":
        by_meaning = np.zeros(n, bool)
        scores = keyword.astype(np.float32)
    elif mode == "dense":
        by_words = np.zeros(n, bool)
        scores = np.nan_to_num(cosine, nan=-1.0).astype(np.float32)
    else:
        # Cosine as a share of the best candidate's lead over the mean: 1 for the best,
        # ~0 for an average passage. z itself would not do: among near-identical
        # documents a few hundredths of cosine are several deviations and would outvote
        # an exact identifier (bench/bench_keyword.py measures both).
        best = float(z.max(initial=-np.inf))
        dense = np.where(np.isfinite(z), z, 0.0) / best if np.isfinite(best) and best > 0 else np.zeros(n)
        # Below this query's average by meaning, a passage gets nothing for its meaning
        # rather than a deduction: the one reminder holding a customer number "KD-927135"
        # stood at z -0.3 for that bare code (whose vector means little) and lost to
        # reminders matching nothing but the code's shape.
        dense = np.maximum(dense, 0.0)
        weight = config.sentence_keyword_weight if sentence else config.keyword_weight
        scores = dense.astype(np.float32) + weight * keyword_bonus(keyword, config, sentence)
    matched = np.full(n, "", dtype=object)
    matched[by_meaning] = "meaning"
    matched[by_words] = "keywords"
    matched[by_meaning & by_words] = "both"
    return scores, matched


def keyword_bonus(keyword: np.ndarray, config: SearchConfig, sentence: bool = False) -> np.ndarray:
    """The keyword part of the fused score before its weight: the BM25 share, discounted
    while it is below a full match's (`keyword_full_share`, every query word once) by
    (share / full) ** power; the power is `sentence_keyword_power` for a sentence
    (engine.search.is_sentence), else `keyword_power`.

    Why: a passage holding some of a sentence's words (a share of 0.1-0.3) must not
    outvote one that matches its meaning in another language, which no keyword can
    match, while an identifier or a name ("FA-2024-5521", "Oliver Whitfield", also
    inside a question) is exactly what keywords are for (docs/benchmarks.md, "Search quality")."""
    keyword = np.asarray(keyword, np.float32)
    power = config.sentence_keyword_power if sentence else config.keyword_power
    if power == 0:
        return keyword
    return keyword * np.minimum(1.0, keyword / config.keyword_full_share) ** power


def load_baseline_sample(live: LiveIndex) -> None:
    """Reads the passages every query's z baseline is measured over (score_baseline) now,
    rather than in the first search (about 0.1 s at 3k passages: the vectors of up to
    SAMPLE_SIZE passages)."""
    _sample(live)


def _sample_scorer(live: LiveIndex) -> FixedScorer:
    """The sample's corrected scores for any query, made again when the sample, the index's
    version or its corrections changed: mixing every sampled passage's document context in
    on each query cost ~2 ms at 100k passages, the product alone ~0.1 ms."""
    ids, vectors = _sample(live)
    with _samples_lock:
        sampled, scorer = _scorers.get(live, (None, None))
    if sampled is not ids or not live.scores_like(scorer):
        scorer = live.fixed_scorer(ids, vectors)
        with _samples_lock:
            _scorers[live] = ids, scorer
    return scorer


def _sample(live: LiveIndex) -> tuple[np.ndarray, np.ndarray]:
    """(ids int64 [n], float32 [n, dim] vectors) of n <= SAMPLE_SIZE random passages, cached per live index."""
    size = len(live)
    with _samples_lock:
        cached = _samples.get(live)
        if cached is not None:
            generation, cached_size, ids, vectors = cached
            if generation == live.generation.id and abs(size - cached_size) <= _RESAMPLE_GROWTH * max(cached_size, 1):
                return ids, vectors
    ids = live.index.ids()
    if len(ids) > SAMPLE_SIZE:  # a fixed seed: the same collection always gives the same floor
        ids = np.sort(np.random.default_rng(0).choice(ids, SAMPLE_SIZE, replace=False))
    ids, vectors = live.vectors(ids)  # as search compares them (LiveIndex.searchable)
    with _samples_lock:
        _samples[live] = (live.generation.id, size, ids, vectors)
    return ids, vectors
