"""Did training help? Scores on held-out translation pairs, no benchmark data needed.

    >>> report = evaluate_pairs(encode, pairs.held_out)
    >>> report.retrieval, report.same_language_bias    # (96.5, 4.0): both in percent

* Retrieval: top-1 accuracy of finding each held-out sentence's translation among all
  held-out translations, source -> target and target -> source, averaged.
* Same-language bias: how often a sentence in the query's own language (another held-out
  sentence, or a held-out corpus sentence) scores above the query's translation. A model
  that prefers its own language ranks a same-language document on another topic first;
  this is the number training on translations should bring down.
* Alignment and uniformity (Wang & Isola, 2020) of the held-out pairs, as for STS.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable, Sequence

import numpy as np

from trainer.evaluate import alignment, uniformity

Encode = Callable[[Sequence[str]], np.ndarray]


@dataclass(frozen=True)
class PairReport:
    pairs: int
    source_to_target: float  # top-1 accuracy, percent
    target_to_source: float
    same_language_bias: float  # percent of queries that a same-language sentence beats
    bias_queries: int  # queries that had a same-language sentence to be beaten by
    alignment: float
    uniformity: float

    @property
    def retrieval(self) -> float:
        return (self.source_to_target + self.target_to_source) / 2

    def to_dict(self) -> dict:
        return asdict(self) | {"retrieval": self.retrieval}


def evaluate_pairs(encode: Encode, pairs: Sequence[tuple[str, str]],
                   distractors: Sequence[str] = (), languages=None) -> PairReport:
    """Scores `encode` on held-out `pairs` (at least 2), with extra same-language
    `distractors` (held-out corpus sentences) for the bias.

    `languages(texts) -> codes` names each sentence's language (default: the engine's
    language identification); a pair whose two sides share a language has no bias to show
    and is left out of it.
    """
    if len(pairs) < 2:
        raise ValueError("evaluating needs at least two held-out pairs")
    sources, targets = [p[0] for p in pairs], [p[1] for p in pairs]
    vectors = _unit(encode(sources + targets + list(distractors)))
    n = len(pairs)
    src, tgt, extra = vectors[:n], vectors[n:2 * n], vectors[2 * n:]
    similarity = src @ tgt.T  # [n, n]: row i is source i against every target
    if languages is None:
        from engine.langid import detect_languages as languages
    langs = languages(sources + targets + list(distractors))
    bias, queries = same_language_bias(vectors, langs, n)
    return PairReport(
        pairs=n,
        source_to_target=100 * _top1(similarity),
        target_to_source=100 * _top1(similarity.T),
        same_language_bias=bias,
        bias_queries=queries,
        alignment=alignment(src, tgt),
        uniformity=uniformity(np.concatenate([src, tgt, extra])),
    )


def same_language_bias(vectors: np.ndarray, langs: Sequence[str | None], n: int) -> tuple[float, int]:
    """(percent beaten, queries): every side of every pair is a query; it is beaten when any
    other sentence in its own language (not its translation) scores above its translation.

    `vectors` are unit rows: n sources, n targets, then distractors; `langs` likewise.
    """
    langs = np.array([lang or "" for lang in langs], dtype=object)
    similarity = vectors @ vectors.T  # [m, m]
    beaten = queries = 0
    for query in range(2 * n):
        partner = query + n if query < n else query - n
        if not langs[query] or langs[query] == langs[partner]:
            continue
        rivals = np.flatnonzero(langs == langs[query])
        rivals = rivals[(rivals != query) & (rivals != partner)]
        if rivals.size == 0:
            continue
        queries += 1
        beaten += bool(similarity[query, rivals].max() > similarity[query, partner])
    return (100 * beaten / queries if queries else 0.0), queries


def _top1(similarity: np.ndarray) -> float:
    return float(np.mean(similarity.argmax(1) == np.arange(len(similarity))))


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float64)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
