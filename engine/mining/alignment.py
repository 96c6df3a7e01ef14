"""Ordered sentence alignment of two documents that translate each other.

    >>> beads = align(["Hallo.", "Wie geht es dir? Gut."], ["Hello.", "How are you?", "Fine."], encoder)
    >>> beads   # [AlignedPair((0,), (0,), 1.31), AlignedPair((1,), (1, 2), 1.22)]

Dynamic programming over the similarity of the two sentence sequences, in the spirit of
vecalign (Thompson & Koehn, 2019) and Bertalign (Liu & Zhu, 2022): a path from the start
to the end of both documents made of beads 1-1, 1-2, 2-1 (the two-sentence side is
represented by the embedding of the two sentences joined) and 1-0 / 0-1 (a sentence with
no counterpart). Raw cosines are not comparable between sentences (some sentences are
close to everything), so each bead is scored with the ratio margin of the mining code,
r = cos(a, b) / ((avg_k(a) + avg_k(b)) / 2), and gains r - min_ratio. A pair of sentences
that both lack a translation can still be each other's nearest neighbour (r >= 1), so the
gain starts at `min_ratio`, not at 1. A skipped sentence costs
`skip_penalty`, so skips are not free: two skips lose to a pair with r > min_ratio - 2 p.
The vector of two joined sentences lies nearer the centre of the space than either
sentence and so is close to everything; two sentences without translation would pair with
such a joined vector at r > 1. Neighbourhood averages are therefore taken over everything
a vector competes with in the DP, the other side's single *and* joined vectors, which
lowers exactly those inflated scores.

Long documents are aligned within a band around a guide path: the diagonal, or a line
through anchor pairs (e.g. pairs mined with a high margin) when given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from engine.mining.margin import apply_margin, increasing_fraction, knn

# Move codes: (source sentences, target sentences) consumed by a bead.
MOVES = ((1, 1), (1, 2), (2, 1), (1, 0), (0, 1))
_FROM_LEFT = 4  # index of (0, 1) in MOVES


@dataclass(frozen=True)
class AlignedPair:
    """One bead: source sentences `src_indices` translate target sentences `tgt_indices`."""

    src_indices: tuple[int, ...]
    tgt_indices: tuple[int, ...]
    score: float  # margin of the bead's (joined) source and target vectors


@dataclass(frozen=True)
class AlignConfig:
    """Alignment settings.

    Attributes:
        k: neighbours averaged for the margin.
        min_ratio: ratio margin at which a bead gains nothing. Above 1 because two
            untranslated sentences can be each other's nearest neighbours (r >= 1); on
            damaged translations 1.03 scores within 0.2 link-F1 of the best value (1.0)
            both with language-neutral vectors and as encoded (bench/bench_alignment.py;
            docs/benchmarks.md, "Ordered alignment").
        skip_penalty: cost of leaving one sentence unaligned, in ratio-margin units.
        band: half-width of the searched band in sentences; the band grows to cover the
            whole matrix when n * m <= full_matrix_cells.
        margin: the margin reported as each bead's score ("ratio", "distance", "absolute").
    """

    k: int = 4
    min_ratio: float = 1.03
    skip_penalty: float = 0.01
    band: int = 200
    full_matrix_cells: int = 4_000_000
    margin: str = "ratio"


def joined_neighbours(sentences: Sequence[str]) -> list[str]:
    """Each sentence joined with the next one: the texts whose vectors 2-sentence beads use."""
    return [f"{a} {b}" for a, b in zip(sentences, sentences[1:])]


def align(
    src_sentences: Sequence[str],
    tgt_sentences: Sequence[str],
    encoder,
    config: AlignConfig = AlignConfig(),
    anchors: Sequence[tuple[int, int]] = (),
) -> list[AlignedPair]:
    """Beads aligning two sentence lists in order, skipped sentences left out.

    The encoder reads every sentence and every pair of neighbouring sentences
    (kind="query": e5 models use "query: " for symmetric tasks such as bitext mining).
    """
    if not src_sentences or not tgt_sentences:
        return []
    encode = lambda texts: encoder.encode(list(texts), kind="query") if texts else None  # noqa: E731
    return align_vectors(
        encode(src_sentences),
        encode(tgt_sentences),
        encode(joined_neighbours(src_sentences)),
        encode(joined_neighbours(tgt_sentences)),
        config,
        anchors,
    )


def align_vectors(
    src: np.ndarray,
    tgt: np.ndarray,
    src_pairs: np.ndarray | None,
    tgt_pairs: np.ndarray | None,
    config: AlignConfig = AlignConfig(),
    anchors: Sequence[tuple[int, int]] = (),
) -> list[AlignedPair]:
    """Beads from unit vectors src [n, d], tgt [m, d] and their joined neighbours
    src_pairs [n-1, d] (sentences i and i+1), tgt_pairs [m-1, d]; None when n or m is 1."""
    n, m, dim = len(src), len(tgt), src.shape[1]
    empty = np.zeros((0, dim), dtype=np.float32)
    src_pairs = empty if src_pairs is None else src_pairs
    tgt_pairs = empty if tgt_pairs is None else tgt_pairs
    # Neighbourhood averages of every single and joined vector against the other side's
    # single and joined vectors: [n], [n-1], [m], [m-1].
    k = config.k
    all_tgt, all_src = np.concatenate([tgt, tgt_pairs]), np.concatenate([src, src_pairs])
    avg_src = knn(src, all_tgt, k)[0].mean(axis=1)
    avg_src2 = knn(src_pairs, all_tgt, k)[0].mean(axis=1) if len(src_pairs) else np.zeros(0)
    avg_tgt = knn(tgt, all_src, k)[0].mean(axis=1)
    avg_tgt2 = knn(tgt_pairs, all_src, k)[0].mean(axis=1) if len(tgt_pairs) else np.zeros(0)
    sides = _Sides(src, src_pairs, avg_src, avg_src2, tgt, tgt_pairs, avg_tgt, avg_tgt2)
    lows, width = _band(n, m, config, anchors)
    moves = _fill(sides, lows, width, config)
    beads = _backtrack(moves, lows, n, m)
    return [_scored(bead, sides, config.margin) for bead in beads if bead[0] and bead[1]]


@dataclass(frozen=True)
class _Sides:
    src: np.ndarray
    src2: np.ndarray
    avg_src: np.ndarray
    avg_src2: np.ndarray
    tgt: np.ndarray
    tgt2: np.ndarray
    avg_tgt: np.ndarray
    avg_tgt2: np.ndarray

    def vector(self, indices: tuple[int, ...], side: str) -> tuple[np.ndarray, float]:
        single, double = (self.src, self.src2) if side == "src" else (self.tgt, self.tgt2)
        avg1, avg2 = (self.avg_src, self.avg_src2) if side == "src" else (self.avg_tgt, self.avg_tgt2)
        if len(indices) == 1:
            return single[indices[0]], float(avg1[indices[0]])
        return double[indices[0]], float(avg2[indices[0]])


def _band(n: int, m: int, config: AlignConfig, anchors) -> tuple[np.ndarray, int]:
    """First column of the band in each DP row [n+1], and the band width (columns 0..m)."""
    if n * m <= config.full_matrix_cells:
        return np.zeros(n + 1, dtype=np.int64), m + 1
    width = min(m + 1, 2 * config.band + 1)
    rows = np.arange(n + 1)
    chain = _increasing_chain(anchors)
    if len(chain) >= 2:
        xs, ys = zip(*([(0, 0)] + chain + [(n, m)]))
        centre = np.interp(rows, xs, ys)
    else:
        centre = rows * (m / max(n, 1))
    lows = np.clip(np.round(centre).astype(np.int64) - config.band, 0, m + 1 - width)
    return lows, width


def _increasing_chain(anchors) -> list[tuple[int, int]]:
    """The longest chain of anchors increasing in both coordinates (drops stray anchors)."""
    anchors = sorted(set((int(a), int(b)) for a, b in anchors))
    if not anchors:
        return []
    best = [1] * len(anchors)
    prev = [-1] * len(anchors)
    # Quadratic but only over anchors, which are few compared with the DP cells.
    for i, (a, b) in enumerate(anchors):
        for j in range(max(0, i - 200), i):
            if anchors[j][0] < a and anchors[j][1] < b and best[j] + 1 > best[i]:
                best[i], prev[i] = best[j] + 1, j
    i = int(np.argmax(best))
    chain = []
    while i >= 0:
        chain.append(anchors[i])
        i = prev[i]
    return chain[::-1]


def _gather(values: np.ndarray, low: int, cols: np.ndarray) -> np.ndarray:
    """values[cols - low] where that is inside the row, else -inf."""
    idx = cols - low
    inside = (idx >= 0) & (idx < len(values))
    return np.where(inside, values[np.clip(idx, 0, len(values) - 1)], -np.inf)


def _gains(vec, avg: float, others, other_avg, idx: np.ndarray, min_ratio: float):
    """Ratio-margin gain (r - min_ratio) of `vec` against others[idx]; -inf where idx is out of range."""
    inside = (idx >= 0) & (idx < len(others))
    safe = np.clip(idx, 0, max(len(others) - 1, 0))
    if not len(others):
        return np.full(len(idx), -np.inf)
    cos = others[safe] @ vec
    ratio = apply_margin(cos, (avg + other_avg[safe]) / 2, "ratio")
    return np.where(inside, ratio - min_ratio, -np.inf)


def _fill(sides: _Sides, lows: np.ndarray, width: int, config: AlignConfig) -> np.ndarray:
    """Best-move codes [n+1, width] of the DP; row i column c is cell (i, lows[i] + c)."""
    n, skip, floor = len(lows) - 1, config.skip_penalty, config.min_ratio
    moves = np.full((n + 1, width), -1, dtype=np.int8)
    cols_of = lambda i: lows[i] + np.arange(width)  # noqa: E731
    ramp = skip * np.arange(width)
    prev2 = prev = None
    for i in range(n + 1):
        cols = cols_of(i)
        cand = np.full((4, width), -np.inf)
        if i >= 1:
            vec, avg = sides.src[i - 1], sides.avg_src[i - 1]
            single = _gains(vec, avg, sides.tgt, sides.avg_tgt, cols - 1, floor)
            joined = _gains(vec, avg, sides.tgt2, sides.avg_tgt2, cols - 2, floor)
            cand[0] = _gather(prev, lows[i - 1], cols - 1) + single
            cand[1] = _gather(prev, lows[i - 1], cols - 2) + joined
            cand[3] = _gather(prev, lows[i - 1], cols) - skip
        if i >= 2:
            vec, avg = sides.src2[i - 2], sides.avg_src2[i - 2]
            joined = _gains(vec, avg, sides.tgt, sides.avg_tgt, cols - 1, floor)
            cand[2] = _gather(prev2, lows[i - 2], cols - 1) + joined
        best = cand.argmax(axis=0)
        a = cand[best, np.arange(width)]
        if i == 0:
            a = np.where(cols == 0, 0.0, -np.inf)
        # Skipping target sentences along the row: D(j) = max_{j' <= j} A(j') - skip (j - j').
        row = np.maximum.accumulate(a + ramp) - ramp
        from_left = row > a + 1e-12
        moves[i] = np.where(from_left, _FROM_LEFT, np.where(np.isfinite(a), best, -1))
        moves[i][~np.isfinite(row)] = -1
        prev2, prev = prev, row
    return moves


def _backtrack(moves: np.ndarray, lows: np.ndarray, n: int, m: int) -> list[tuple[tuple, tuple]]:
    """Beads (source indices, target indices) from the start to the end of both documents."""
    i, j = n, m
    beads = []
    while i > 0 or j > 0:
        c = j - lows[i]
        code = int(moves[i, c]) if 0 <= c < moves.shape[1] else -1
        if code < 0:
            raise RuntimeError(f"alignment path broken at ({i}, {j}); the band is too narrow")
        di, dj = MOVES[code]
        beads.append((tuple(range(i - di, i)), tuple(range(j - dj, j))))
        i, j = i - di, j - dj
    return beads[::-1]


def _scored(bead: tuple[tuple, tuple], sides: _Sides, margin: str) -> AlignedPair:
    src_vec, src_avg = sides.vector(bead[0], "src")
    tgt_vec, tgt_avg = sides.vector(bead[1], "tgt")
    cos = float(src_vec @ tgt_vec)
    score = float(apply_margin(np.float64(cos), np.float64((src_avg + tgt_avg) / 2), margin))
    return AlignedPair(bead[0], bead[1], score)


def should_align(pairs: Sequence[tuple[int, int]], n_src: int, n_tgt: int) -> bool:
    """The `--align auto` rule: the mined pairs cover at least 30% of the shorter document
    and at least 90% of them lie on one chain increasing on both sides (documents that
    translate each other in order), see `engine.mining.margin.increasing_fraction`."""
    if len(pairs) < 3 or len(pairs) < 0.3 * min(n_src, n_tgt):
        return False
    return increasing_fraction(list(pairs)) >= 0.9
