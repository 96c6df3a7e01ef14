"""Reviewing mined pairs: score histogram, threshold, accepted/rejected pairs, indexed documents.

    >>> counts, edges = score_histogram([1.01, 1.2, 1.3], bins=4)
    >>> kept = kept_pairs(result.pairs, threshold=1.1, rejected={0})
    >>> rows = [(p.score, p.src_text, p.tgt_text) for p in kept]   # for bitext_io.write_pairs

Pure functions behind the "Parallel sentences" panel, so the panel only shows what they
compute (and the CLI or a script can review the same way).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from engine.errors import InputError


@dataclass(frozen=True)
class IndexedDocument:
    path: str
    language: str | None  # ISO 639-1 detected at indexing, None when unknown


def score_histogram(scores: Sequence[float], bins: int = 40, lo: float | None = None,
                    hi: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(counts [bins] int64, edges [bins + 1] float64) of the finite scores over [lo, hi].

    lo/hi default to the scores' range; an empty or constant input gets a unit-wide range
    so the edges stay strictly increasing.
    """
    if bins < 1:
        raise InputError(f"a histogram needs at least one bin, got {bins}")
    values = np.asarray(scores, dtype=np.float64)
    values = values[np.isfinite(values)]
    low = float(values.min()) if lo is None and len(values) else (lo if lo is not None else 0.0)
    high = float(values.max()) if hi is None and len(values) else (hi if hi is not None else 1.0)
    if not high > low:
        low, high = low - 0.5, low + 0.5
    counts, edges = np.histogram(values, bins=bins, range=(low, high))
    return counts.astype(np.int64), edges


def count_above(scores: Sequence[float], threshold: float) -> int:
    """How many scores are strictly above `threshold` (LASER's `>`, as the miner keeps them)."""
    return int(np.count_nonzero(np.asarray(scores, dtype=np.float64) > threshold))


def kept_indices(scores: Sequence[float], threshold: float, rejected: Collection[int] = ()) -> list[int]:
    """Positions of the pairs above `threshold` and not rejected, in their original order."""
    rejected = set(rejected)
    return [i for i, s in enumerate(scores) if s > threshold and i not in rejected]


def kept_pairs(pairs: Sequence, threshold: float, rejected: Collection[int] = ()) -> list:
    """The pairs (anything with `.score`) above `threshold` whose position is not in `rejected`."""
    return [pairs[i] for i in kept_indices([p.score for p in pairs], threshold, rejected)]


def slider_steps(lo: float, hi: float, steps: int, value: float) -> int:
    """The slider position (0..steps) nearest to `value` on a linear scale over [lo, hi]."""
    if not hi > lo:
        return 0
    return int(round(min(max((value - lo) / (hi - lo), 0.0), 1.0) * steps))


def slider_value(lo: float, hi: float, steps: int, position: int) -> float:
    """The threshold at slider `position`; the lowest position keeps every pair (just below lo)."""
    if position <= 0 or not hi > lo:
        return np.nextafter(lo, -np.inf)
    return lo + (hi - lo) * min(position, steps) / steps


def indexed_documents(store) -> list[IndexedDocument]:
    """Every successfully indexed document of an `engine.store.Store`, by path."""
    from sqlalchemy import select

    from engine.store.schema import Document

    with store.session() as session:
        rows = session.execute(
            select(Document.path, Document.language).where(Document.status == "indexed").order_by(Document.path)
        )
        return [IndexedDocument(path, language) for path, language in rows]
