"""Translation pairs for training: read from the parallel-sentence finder's TSV/TMX files.

    >>> pairs = load_pairs(["de-en.tsv", "fr-en.tmx"], PairFilter(), seed=42, holdout=0.1)
    >>> pairs.train[0], len(pairs.held_out), pairs.stats.kept
    >>> order = batch_order(pairs.train, batch_size=64, rng=np.random.default_rng(0))

Each pair is (source, target). Pairs are read in file order, exact duplicates dropped,
length-filtered on both sides, shuffled with the seed and split into the pairs trained on
and the pairs held out to measure what training changed.

A sentence may be in several pairs: one English sentence and its translations into ten
languages (a translation memory, or one document mined against many) are ten pairs, and
every one is kept. Two pairs sharing a side must not meet in one batch, where each would
be the other's negative (the same sentence, or the same meaning, pushed apart):
`batch_order` builds each epoch's batches so that they never do. The held-out split is
made on meanings (pairs linked by a shared side): a meaning held out never trains in any
language, and one of its pairs is scored, so the held-out targets are distinct and
retrieval among them is well defined.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

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

    @classmethod
    def of(cls, config) -> PairFilter:
        """The filter a `trainer.config.TrainConfig` asks for."""
        return cls(min_chars=config.min_chars, max_chars=config.max_chars, min_score=config.pair_min_score)


@dataclass(frozen=True)
class PairStats:
    read: int
    duplicates: int  # the same source and target again
    filtered: int
    kept: int
    held_out: int  # scored, never trained on
    # the other pairs of the held-out meanings: neither trained on (their sentences are
    # scored) nor scored (one pair per meaning is)
    set_aside: int = 0

    @property
    def trained(self) -> int:
        return self.kept - self.held_out - self.set_aside


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
    """Pairs from `files`, shuffled with `seed`; `holdout` of their meanings (20 to 2,000)
    kept apart, one pair of each scored.

    Raises:
        InputError: a file cannot be read, or fewer than `min_pairs` pairs remain to train on.
    """
    if not 0.0 <= holdout < 1.0:
        raise InputError(f"the held-out share must be in [0, 1), got {holdout}")
    rows = [row for path in files for row in read_pair_file(Path(path))]
    pairs, duplicates, filtered = _clean(rows, filt)
    meanings = _meanings(pairs)
    random.Random(seed).shuffle(meanings)
    held = held_out_count(len(meanings), holdout)
    # the k-th held meaning gives its k-th pair (round robin over its languages)
    held_out = [group[k % len(group)] for k, group in enumerate(meanings[:held])]
    train = [pair for group in meanings[held:] for pair in group]
    set_aside = sum(len(group) for group in meanings[:held]) - held
    if len(train) < min_pairs:
        raise InputError(f"{len(train)} usable translation pairs are too few to train on (need "
                         f"{min_pairs}); read {len(rows)}, dropped {duplicates} duplicates and "
                         f"{filtered} outside the length or score limits")
    return PairSet(train, held_out, PairStats(len(rows), duplicates, filtered, len(pairs), held, set_aside))


def held_out_count(total: int, share: float) -> int:
    """How many meanings (or pairs) to hold out: `share` of them, at least 20 (when that
    leaves most to train on) and at most 2,000."""
    if share == 0.0:
        return 0
    wanted = max(MIN_HELD_OUT, round(total * share))
    return min(wanted, MAX_HELD_OUT, total // 2)


def batch_order(pairs: Sequence[Pair], batch_size: int, rng: np.random.Generator) -> np.ndarray:
    """One epoch's order of `pairs` (indices, int64 [steps * batch_size]) in batches of
    `batch_size` where no two pairs share a source or a target.

    A sentence is one sentence on either side: a German-English pair and an English-French
    one with the same English sentence share it. Pairs are taken in a random order and
    each goes into the first open batch holding neither of its sentences; a batch is
    closed when full. Pairs with no shared side (a
    one-to-one file) end up in exactly the random order, batch after batch. The last,
    unfilled batches are left out, as a plain epoch leaves out its remainder: at most a
    few batches' worth, and another epoch's order leaves out others.
    """
    open_batches: list[tuple[list[int], set[str]]] = []  # (pair indices, their sentences)
    order: list[int] = []
    for index in rng.permutation(len(pairs)).tolist():
        sides = set(pairs[index])
        batch = next((b for b in open_batches if sides.isdisjoint(b[1])), None)
        if batch is None:
            batch = ([], set())
            open_batches.append(batch)
        batch[0].append(index)
        batch[1].update(sides)
        if len(batch[0]) == batch_size:
            order += batch[0]
            open_batches.remove(batch)
    return np.asarray(order, np.int64)


def _clean(rows: Sequence[tuple[float, str, str]], filt: PairFilter) -> tuple[list[Pair], int, int]:
    seen: set[Pair] = set()
    pairs: list[Pair] = []
    duplicates = filtered = 0
    for score, source, target in rows:
        pair = (" ".join(source.split()), " ".join(target.split()))
        if not _keep(*pair, score, filt):
            filtered += 1
        elif pair in seen:
            duplicates += 1
        else:
            seen.add(pair)
            pairs.append(pair)
    return pairs, duplicates, filtered


def _meanings(pairs: Sequence[Pair]) -> list[list[Pair]]:
    """The pairs grouped by shared sentences (connected: a-b, a-c and d-c are one meaning),
    each group in file order, groups in the order of their first pair."""
    parent: dict[str, str] = {}

    def root(sentence: str) -> str:
        parent.setdefault(sentence, sentence)
        while parent[sentence] != sentence:
            parent[sentence] = parent[parent[sentence]]
            sentence = parent[sentence]
        return sentence

    for source, target in pairs:
        parent[root(source)] = root(target)
    groups: dict[str, list[Pair]] = {}
    for pair in pairs:
        groups.setdefault(root(pair[0]), []).append(pair)
    return list(groups.values())


def _keep(source: str, target: str, score: float, filt: PairFilter) -> bool:
    if filt.min_score is not None and score < filt.min_score:
        return False
    return all(filt.min_chars <= len(side) <= filt.max_chars for side in (source, target))
