"""How fast an indexing run goes and how long it has left, measured in passages encoded.

    >>> pace = Throughput(clock=time.monotonic)
    >>> pace.plan("pdf", 2_400_000)              # each file to read, by kind and size
    >>> pace.read("pdf", 2_400_000, passages=900)  # extracted: its passages wait for vectors
    >>> pace.encoded(256)                        # after each encoder call
    >>> pace.rate(), pace.seconds_left()         # passages/s, and None until a rate is known

Files say little about the work they hold: one manual has more passages than a folder of
READMEs, so a rate in files per second promised "about 58 s left" at 74 of 200 files of a
run that took 11 minutes. Encoding is most of the work and is done per passage, so the
rate is passages encoded per second of the run, and the work left is the passages still
to encode: those extracted and waiting for their vectors, and those the files not read
yet will hold, estimated from their size at the passages per byte seen so far for their
kind of file (a PDF holds less text per byte than a text file), or over every kind
before one of theirs was read.

Files in one folder are alike and folders are read one after the other, so what was read
first says little about what comes later: in a home folder of READMEs, rendered manual
pages and source code, the READMEs' density over-estimated the whole run's passages by
half. The indexer therefore reads a small sample spread over the files first
(engine.indexer: one file drawn from each stretch of the reading order), and the files
still to come are estimated from the sampled ones among them (`read_ahead`, `reached`):
a sampled file ahead of the place the reading has reached stands for the unread files
of its kind (docs/benchmarks.md, "Indexing's time left").
"""

from __future__ import annotations

import bisect
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

# Bytes of a kind read before its own passages-per-byte is trusted over the overall one.
MIN_BYTES_FOR_KIND = 64 * 1024
# How many bytes of sampled files ahead weigh as much as everything read of their kind: a
# file's worth, so that one odd file does not swing the estimate.
SAMPLE_PRIOR_BYTES = 4 * 1024


@dataclass
class Throughput:
    clock: Callable[[], float] = time.monotonic
    started: float | None = None  # set by the first call that sees the clock
    passages_encoded: int = 0
    passages_waiting: int = 0  # extracted, not encoded yet
    _bytes_left: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # kind -> bytes not read
    _bytes_read: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # of extracted files
    _passages_read: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    _samples: dict[str, _Samples] = field(default_factory=dict)  # kind -> files read ahead of their turn
    _reached: int = -1  # the place in the reading order the in-order reading has got to

    def __post_init__(self) -> None:
        if self.started is None:
            self.started = self.clock()

    def plan(self, kind: str, size: int) -> None:
        """A file of this kind (extension) and size will be read."""
        self._bytes_left[kind] += size

    def read(self, kind: str, size: int, passages: int) -> None:
        """A planned file was extracted into `passages` passages, which now wait for vectors."""
        self.passed(kind, size)
        self._bytes_read[kind] += size
        self._passages_read[kind] += passages
        self.passages_waiting += passages

    def read_ahead(self, kind: str, size: int, passages: int, position: int) -> None:
        """Like `read`, for a file of the sample, read before its turn: it would have come at
        `position` of the reading order."""
        self.read(kind, size, passages)
        self._samples.setdefault(kind, _Samples()).add(position, size, passages)

    def reached(self, position: int) -> None:
        """The in-order reading has got to `position` of the reading order."""
        self._reached = max(self._reached, position)

    def passed(self, kind: str, size: int) -> None:
        """A planned file needs no encoding after all (unchanged, skipped, unreadable)."""
        self._bytes_left[kind] = max(0, self._bytes_left[kind] - size)

    def encoded(self, passages: int) -> None:
        self.passages_encoded += passages
        self.passages_waiting = max(0, self.passages_waiting - passages)

    def rate(self) -> float:
        """Passages encoded per second since the run began; 0 before the first."""
        return self.passages_encoded / max(self.clock() - self.started, 1e-6)

    def passages_left(self) -> float | None:
        """Passages still to encode (the unread files' estimated); None before any file was read."""
        overall = _ratio(sum(self._passages_read.values()), sum(self._bytes_read.values()))
        if overall is None:
            return None if any(self._bytes_left.values()) else float(self.passages_waiting)
        unread = sum(size * self._density(kind, overall) for kind, size in self._bytes_left.items() if size)
        return self.passages_waiting + unread

    def _density(self, kind: str, overall: float) -> float:
        """Passages per byte expected of this kind's unread files: what every file of the kind
        read so far gave (or `overall`, before enough of them), moved toward what its
        sampled files still ahead of the reading gave, as far as their bytes allow."""
        known = (_ratio(self._passages_read[kind], self._bytes_read[kind])
                 if self._bytes_read[kind] >= MIN_BYTES_FOR_KIND else overall)
        samples = self._samples.get(kind)
        if samples is None:
            return known
        size, passages = samples.after(self._reached)
        return (passages + known * SAMPLE_PRIOR_BYTES) / (size + SAMPLE_PRIOR_BYTES)

    def seconds_left(self) -> float | None:
        """The passages left at this run's rate; None until both are known."""
        rate, left = self.rate(), self.passages_left()
        if self.passages_encoded == 0 or left is None:
            return None
        return left / rate


def _ratio(passages: int, size: int) -> float | None:
    return passages / size if size > 0 else None


@dataclass
class _Samples:
    """One kind's files read ahead of their turn, by their place in the reading order, with
    running sums from the end so the ones after any place add up in one lookup."""

    positions: list[int] = field(default_factory=list)  # ascending
    sizes: list[int] = field(default_factory=list)
    passages: list[int] = field(default_factory=list)
    _suffix: tuple[list[int], list[int]] | None = None  # (bytes, passages) from each index on

    def add(self, position: int, size: int, passages: int) -> None:
        at = bisect.bisect(self.positions, position)
        self.positions.insert(at, position)
        self.sizes.insert(at, size)
        self.passages.insert(at, passages)
        self._suffix = None

    def after(self, position: int) -> tuple[int, int]:
        """(bytes, passages) of the sampled files after `position` in the reading order."""
        if self._suffix is None:
            sizes, passages = [0] * (len(self.sizes) + 1), [0] * (len(self.sizes) + 1)
            for i in range(len(self.sizes) - 1, -1, -1):
                sizes[i], passages[i] = sizes[i + 1] + self.sizes[i], passages[i + 1] + self.passages[i]
            self._suffix = sizes, passages
        at = bisect.bisect(self.positions, position)
        return self._suffix[0][at], self._suffix[1][at]
