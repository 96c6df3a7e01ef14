"""How fast an indexing run goes and how long it has left, measured in seconds of work.

    >>> pace = Throughput(clock=time.monotonic)
    >>> pace.plan("pdf", 2_400_000)                  # each file to read, by kind and size
    >>> pace.read("pdf", 2_400_000, chars=150_000, seconds=1.2)  # extracted: its text waits
    >>> pace.encoded(256, {"pdf": 43_000}, seconds=1.1)  # after each encoder call
    >>> pace.rate(), pace.seconds_left()             # passages/s, and None until a rate is known

Files say little about the work they hold: one manual has more passages than a folder of
READMEs, so a rate in files per second promised "about 58 s left" at 74 of 200 files of a
run that took 11 minutes. The work of a file is reading it and encoding its text, and
both are measured per kind of file (extension; images are one kind): reading in seconds
per byte (images: seconds per file plus per byte, as OCR starts anew for each), encoding
in seconds per character of text (non-space characters, a stand-in for tokens: source
code has more tokens per character than prose, and encodes slower per character, which
a run-wide rate got wrong by 17%). The work left is the text extracted
and waiting for its vectors, and the files not read yet at their kind's characters per
byte and costs. Everything else a run does (storing, the vector index, saves) is a share
of that work, the run's own `_overhead`, but for what is done once (a new language's
mean: `aside`); the last save, done after the last file, is added as long as the last
periodic save took.

Files in one folder are alike and folders are read one after the other, so what was read
first says little about what comes later: in a home folder of READMEs, rendered manual
pages and source code, the READMEs' density over-estimated the whole run's passages by
half. The indexer therefore reads a small sample spread over the files first
(engine.indexer: one file drawn from each stretch of the reading order, and an image or
two, whose OCR costs some thirty times a text file's reading per byte), and the files still
to come are estimated from the sampled ones among them (`read_ahead`, `reached`): a
sampled file ahead of the place the reading has reached stands for the unread files of
its kind (docs/benchmarks.md, "Indexing's time left").
"""

from __future__ import annotations

import bisect
import time
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

# Bytes, or files, of a kind read before its own figures are trusted over the run's
# overall ones (files: small ones, like images, are seldom 64 KB together).
MIN_BYTES_FOR_KIND = 64 * 1024
MIN_FILES_FOR_KIND = 4
# Characters of a kind encoded before its own encoding cost is trusted over the overall one.
MIN_CHARS_FOR_KIND = 20_000
# How many bytes of sampled files ahead weigh as much as everything read of their kind: a
# file's worth, so that one odd file does not swing the estimate.
SAMPLE_PRIOR_BYTES = 4 * 1024
# Kinds whose every file starts an engine: OCR of an image costs some 0.15 s for a 90-byte
# icon as for a screenshot, and more per byte on top. Their reading is a cost per file plus
# one per byte, fitted on the files of the kind read so far once there are this many.
PER_FILE_KINDS = frozenset({"image"})
MIN_FILES_FOR_FIT = 3


def work_chars(text: str) -> int:
    """A passage's size as encoding sees it: its characters but whitespace (padding,
    indentation, a page's layout cost no tokens)."""
    return len(text) - sum(text.count(space) for space in " \n\t\r")


@dataclass
class _Line:
    """Running sums of (bytes, seconds) of the files read, for the least-squares line
    through them: a fit costs the same after ten images as after ten thousand."""

    n: int = 0
    size: float = 0.0
    seconds: float = 0.0
    size_squared: float = 0.0
    size_seconds: float = 0.0

    def add(self, size: int, seconds: float) -> None:
        self.n += 1
        self.size += size
        self.seconds += seconds
        self.size_squared += size * size
        self.size_seconds += size * seconds

    def fit(self) -> tuple[float, float]:
        """(seconds per file, seconds per byte), neither below zero (a few files can slope
        either way); (0, 0) before the first file."""
        if not self.n:
            return 0.0, 0.0
        mean_size, mean_seconds = self.size / self.n, self.seconds / self.n
        spread = self.size_squared - self.n * mean_size * mean_size
        together = self.size_seconds - self.n * mean_size * mean_seconds
        per_byte = max(0.0, together / spread) if spread > 1e-9 * self.size_squared else 0.0
        per_file = mean_seconds - per_byte * mean_size
        if per_file < 0:  # the line passes below zero for an empty file: all of it per byte
            return 0.0, mean_seconds / mean_size if mean_size else 0.0
        return per_file, per_byte



@dataclass
class _Kind:
    """What one kind of file has cost so far."""

    bytes_left: int = 0  # planned, not read yet
    files_left: int = 0
    files_read: int = 0
    bytes_read: int = 0
    chars_read: int = 0
    read_s: float = 0.0
    chars_waiting: int = 0  # extracted, not encoded yet
    chars_encoded: int = 0
    encode_s: float = 0.0
    readings: _Line = field(default_factory=_Line)  # seconds against bytes, PER_FILE_KINDS only


@dataclass
class Throughput:
    clock: Callable[[], float] = time.monotonic
    started: float | None = None  # set by the first call that sees the clock
    passages_encoded: int = 0
    _kinds: dict[str, _Kind] = field(default_factory=lambda: defaultdict(_Kind))
    _samples: dict[str, _Samples] = field(default_factory=dict)  # kind -> files read ahead of their turn
    _reached: int = -1  # the place in the reading order the in-order reading has got to
    _working_since: float | None = None  # the first file's reading (after the planning)
    _aside_s: float = 0.0  # one-off work since then, not a share of what is left
    _last_save_s: float = 0.0

    def __post_init__(self) -> None:
        if self.started is None:
            self.started = self.clock()

    def plan(self, kind: str, size: int) -> None:
        """A file of this kind and size will be read."""
        k = self._kinds[kind]
        k.bytes_left += size
        k.files_left += 1 if size else 0

    def read(self, kind: str, size: int, *, chars: int = 0, seconds: float = 0.0) -> None:
        """A planned file was read in `seconds`: its passages' `chars` (work_chars) now wait
        for vectors. A file that gave nothing (unchanged, refused, no text) is read too:
        its bytes cost what they cost."""
        if self._working_since is None:
            self._working_since = self.clock() - seconds
        k = self._kinds[kind]
        k.bytes_left = max(0, k.bytes_left - size)
        k.files_left = max(0, k.files_left - 1)
        k.files_read += 1
        k.bytes_read += size
        k.chars_read += chars
        k.read_s += seconds
        k.chars_waiting += chars
        if kind in PER_FILE_KINDS:
            k.readings.add(size, seconds)

    def read_ahead(self, kind: str, size: int, position: int, *, chars: int = 0, seconds: float = 0.0) -> None:
        """Like `read`, for a file of the sample, read before its turn: it would have come at
        `position` of the reading order."""
        self.read(kind, size, chars=chars, seconds=seconds)
        self._samples.setdefault(kind, _Samples()).add(position, size, chars, seconds)

    def reached(self, position: int) -> None:
        """The in-order reading has got to `position` of the reading order."""
        self._reached = max(self._reached, position)

    def encoded(self, passages: int, chars: Mapping[str, int], seconds: float) -> None:
        """One encoder call: `passages` of `chars` characters per kind, in `seconds`."""
        self.passages_encoded += passages
        total = sum(chars.values())
        for kind, n in chars.items():
            k = self._kinds[kind]
            k.chars_waiting = max(0, k.chars_waiting - n)
            k.chars_encoded += n
            k.encode_s += seconds * n / total if total else 0.0

    def aside(self, seconds: float) -> None:
        """`seconds` went to work done once (a new language's mean), which what is left will
        not need again: left out of the overhead."""
        self._aside_s += seconds

    def saved(self, seconds: float) -> None:
        """The index was saved in `seconds`; the run ends with one more save."""
        self._last_save_s = seconds

    def rate(self) -> float:
        """Passages encoded per second since the run began; 0 before the first."""
        return self.passages_encoded / max(self.clock() - self.started, 1e-6)

    def seconds_left(self) -> float | None:
        """The work left, at what each kind has cost so far, plus the run's share of other
        work and the last save; None until something was encoded."""
        work = self._work_left()
        if work is None:
            return None
        return work * self._overhead() + self._last_save_s

    def _work_left(self) -> float | None:
        """Seconds of reading and encoding left (without the overhead); None before the
        first encoder call."""
        kinds = self._kinds.values()
        encode_per_char = _ratio(sum(k.encode_s for k in kinds), sum(k.chars_encoded for k in kinds))
        if not encode_per_char:
            return None
        chars_per_byte = _ratio(sum(k.chars_read for k in kinds), sum(k.bytes_read for k in kinds)) or 0.0
        read_per_byte = _ratio(sum(k.read_s for k in kinds), sum(k.bytes_read for k in kinds)) or 0.0
        left = 0.0
        for kind, k in self._kinds.items():
            cost = _ratio(k.encode_s, k.chars_encoded) if k.chars_encoded >= MIN_CHARS_FOR_KIND else encode_per_char
            left += k.chars_waiting * cost
            if k.bytes_left:
                density, reading = self._unread_costs(kind, k, chars_per_byte, read_per_byte)
                left += k.bytes_left * density * cost + self._reading_left(kind, k, reading)
        return left

    @staticmethod
    def _reading_left(kind: str, k: _Kind, per_byte: float) -> float:
        """Seconds of reading the kind's unread files will take: at `per_byte`, or for
        PER_FILE_KINDS, once enough of them were read, at a cost per file plus one per byte."""
        if kind not in PER_FILE_KINDS or k.readings.n < MIN_FILES_FOR_FIT:
            return k.bytes_left * per_byte
        per_file, per_byte = k.readings.fit()
        return k.files_left * per_file + k.bytes_left * per_byte

    def _unread_costs(self, kind: str, k: _Kind, chars_per_byte: float, read_per_byte: float) -> tuple[float, float]:
        """(characters, reading seconds) per byte expected of this kind's unread files: what
        every file of the kind read so far gave, moved toward what its sampled files still
        ahead of the reading gave, as far as their bytes allow. Before enough files of the
        kind were read, the sampled ones alone, or the overall figures when none is ahead:
        another kind's figures say little of this one's (an image's OCR against text)."""
        own = k.bytes_read >= MIN_BYTES_FOR_KIND or k.files_read >= MIN_FILES_FOR_KIND
        if own:
            chars_per_byte, read_per_byte = k.chars_read / k.bytes_read, k.read_s / k.bytes_read
        samples = self._samples.get(kind)
        size, chars, seconds = samples.after(self._reached) if samples else (0, 0, 0.0)
        if not size:
            return chars_per_byte, read_per_byte
        prior = SAMPLE_PRIOR_BYTES if own else 0
        weight = size + prior
        return (chars + chars_per_byte * prior) / weight, (seconds + read_per_byte * prior) / weight

    def _overhead(self) -> float:
        """The run's time since reading began (but one-off work) over the reading and encoding
        it measured: what storing and the vector index add to each second of that work."""
        measured = sum(k.read_s + k.encode_s for k in self._kinds.values())
        if self._working_since is None or measured <= 0:
            return 1.0
        return max(1.0, (self.clock() - self._working_since - self._aside_s) / measured)


def _ratio(amount: float, size: float) -> float | None:
    return amount / size if size > 0 else None


@dataclass
class _Samples:
    """One kind's files read ahead of their turn, by their place in the reading order, with
    running sums from the end so the ones after any place add up in one lookup."""

    positions: list[int] = field(default_factory=list)  # ascending
    rows: list[tuple[int, int, float]] = field(default_factory=list)  # (bytes, chars, reading seconds)
    _suffix: list[tuple[int, int, float]] | None = None  # the sums from each index on

    def add(self, position: int, size: int, chars: int, seconds: float) -> None:
        at = bisect.bisect(self.positions, position)
        self.positions.insert(at, position)
        self.rows.insert(at, (size, chars, seconds))
        self._suffix = None

    def after(self, position: int) -> tuple[int, int, float]:
        """(bytes, chars, reading seconds) of the sampled files after `position` in the order."""
        if self._suffix is None:
            sums = [(0, 0, 0.0)] * (len(self.rows) + 1)
            for i in range(len(self.rows) - 1, -1, -1):
                size, chars, seconds = self.rows[i]
                later = sums[i + 1]
                sums[i] = (later[0] + size, later[1] + chars, later[2] + seconds)
            self._suffix = sums
        return self._suffix[bisect.bisect(self.positions, position)]
