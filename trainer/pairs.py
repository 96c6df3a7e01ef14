"""Translation pairs for training: read from the parallel-sentence finder's TSV/TMX files.

    >>> pairs = load_pairs(["de-en.tsv", "fr-en.tmx"], PairFilter(), seed=42, holdout=0.1)
    >>> pairs.train[0], len(pairs.held_out), pairs.stats.kept

Each pair is (source, target). Pairs are read in file order, de-duplicated (on the
pair, and on each side: a sentence that occurs in two pairs would be its own in-batch
negative), length-filtered on both sides, shuffled with the seed and split into the
pairs trained on and the pairs held out to measure what training changed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from engine.errors import InputError
from engine.mining.bitext_io import read_tmx, read_tsv

Pair = tuple[str, str]
# Held-out pairs are enough to measure retrieval when there are at least this many.
MIN_HELD_OUT = 20
MAX_HELD_OUT = 2000


@dataclass(frozen=True)
class PairFilter:
    """Which pairs are kept: both sides within these lengths, score at least min_score."""

    min_chars: int = 3
    max_chars: int = 1000
    min_score: float | None = None  # the finder's margin score; None keeps every pair


@dataclass(frozen=True)
class PairStats:
    read: int
    duplicates: int
    filtered: int
    kept: int
    held_out: int


@dataclass(frozen=True)
class PairSet:
    train: list[Pair]
    held_out: list[Pair]
    stats: PairStats


def read_pair_file(path: Path) -> list[tuple[float, str, str]]:
    """(score, source, target) rows of one .tsv or .tmx file; InputError for other files."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such pairs file")
    suffix = path.suffix.lower()
    if suffix == ".tsv":
        return read_tsv(path)
    if suffix == ".tmx":
        return read_tmx(path)[0]
    raise InputError(f"{path}: pairs must be a .tsv (score, source, target) or .tmx file")


def load_pairs(files: Iterable[str | Path], filt: PairFilter, seed: int, *, holdout: float = 0.1,
               min_pairs: int = 2) -> PairSet:
    """Pairs from `files`, shuffled with `seed`; `holdout` of them (20 to 2,000) kept apart.

    Raises:
        InputError: a file cannot be read, or fewer than `min_pairs` pairs remain to train on.
    """
    if not 0.0 <= holdout < 1.0:
        raise InputError(f"the held-out share must be in [0, 1), got {holdout}")
    rows = [row for path in files for row in read_pair_file(Path(path))]
    pairs, duplicates, filtered = _clean(rows, filt)
    random.Random(seed).shuffle(pairs)
    held = held_out_count(len(pairs), holdout)
    train, held_out = pairs[held:], pairs[:held]
    if len(train) < min_pairs:
        raise InputError(f"{len(train)} usable translation pairs are too few to train on (need "
                         f"{min_pairs}); read {len(rows)}, dropped {duplicates} duplicates and "
                         f"{filtered} outside the length or score limits")
    return PairSet(train, held_out, PairStats(len(rows), duplicates, filtered, len(pairs), held))


def held_out_count(total: int, share: float) -> int:
    """How many pairs to hold out: `share` of them, at least 20 (when that leaves most to
    train on) and at most 2,000."""
    if share == 0.0:
        return 0
    wanted = max(MIN_HELD_OUT, round(total * share))
    return min(wanted, MAX_HELD_OUT, total // 2)


def _clean(rows: Sequence[tuple[float, str, str]], filt: PairFilter) -> tuple[list[Pair], int, int]:
    seen_sources, seen_targets, pairs = set(), set(), []
    duplicates = filtered = 0
    for score, source, target in rows:
        source, target = " ".join(source.split()), " ".join(target.split())
        if not _keep(source, target, score, filt):
            filtered += 1
        elif source in seen_sources or target in seen_targets:
            duplicates += 1
        else:
            seen_sources.add(source)
            seen_targets.add(target)
            pairs.append((source, target))
    return pairs, duplicates, filtered


def _keep(source: str, target: str, score: float, filt: PairFilter) -> bool:
    if filt.min_score is not None and score < filt.min_score:
        return False
    return all(filt.min_chars <= len(side) <= filt.max_chars for side in (source, target))
