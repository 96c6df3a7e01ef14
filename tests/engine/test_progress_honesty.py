"""Progress that does not lie: the rate and the time left of an indexing run count passages
encoded, not files, and move while a large file is encoded. An encoder that costs a fixed
time per passage on a fake clock makes "the truth" exact: after each event, the time the
run really had left is known, and the estimate is held to it."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import WordEncoder

from engine.config import data_paths
from engine.events import IndexFinished, IndexProgress
from engine.indexer import Indexer, IndexerConfig
from engine.library import Library
from engine.throughput import Throughput

SECONDS_PER_PASSAGE = 0.01


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class SlowEncoder(WordEncoder):
    """WordEncoder that spends SECONDS_PER_PASSAGE of the fake clock on each passage."""

    def __init__(self, clock: FakeClock):
        super().__init__()
        self.clock = clock

    def encode(self, texts, kind="passage") -> np.ndarray:
        self.clock.now += SECONDS_PER_PASSAGE * len(texts)
        return super().encode(texts, kind)


def sentence(i: int) -> str:
    return f"Sentence number {i} talks about the weather in a town called Place{i}, and nothing else. "


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[list[tuple[float, IndexProgress]], float]:
    """One run over twenty short notes first (by name), then one manual that holds most of
    the work: [(fake time of the event, event)], and the fake time it ended."""
    root = tmp_path_factory.mktemp("docs")
    for n in range(20):
        (root / f"a_note_{n:02d}.txt").write_text("".join(sentence(100 * n + i) for i in range(12)), encoding="utf-8")
    (root / "z_manual.txt").write_text("".join(sentence(10_000 + i) for i in range(6000)), encoding="utf-8")
    return timed_run(root, tmp_path_factory)


def timed_run(root, tmp_path_factory) -> tuple[list[tuple[float, IndexProgress]], float]:
    """Indexes `root` with the slow encoder: [(fake time of the event, event)], and the end."""
    clock = FakeClock()
    library = Library.open(data_paths(tmp_path_factory.mktemp("home")), encoder=WordEncoder())
    try:
        # What Library.index measures before a run (its language means, the hubness
        # penalties), measured here with the fast encoder: the clock times the run alone.
        library.live.ensure_corrections(WordEncoder(), passage_languages=["en"])
        # small encoder batches, so the first files are stored (and measured) early
        indexer = Indexer(library.store, library.live, SlowEncoder(clock), IndexerConfig(batch_passages=16),
                          clock=clock)
        events = []
        for event in indexer.run([root]):
            if isinstance(event, IndexProgress):
                events.append((clock.now, event))
            else:
                assert isinstance(event, IndexFinished) and not event.summary.skipped
        return events, clock.now
    finally:
        library.close()


def test_the_rate_counts_passages_encoded(run):
    events, _end = run
    rated = [e for _, e in events if e.encoded]
    assert rated and all(e.rate == pytest.approx(1 / SECONDS_PER_PASSAGE, rel=1e-6) for e in rated)


def test_progress_moves_while_a_large_file_is_encoded(run):
    events, _end = run
    during = [e for _, e in events if e.files_done < e.files_total and e.current and e.current.endswith("z_manual.txt")]
    assert len({e.files_done for e in during}) == 1, "no file is done while the manual is encoded"
    encoded = [e.encoded for e in during]
    assert len(during) >= 5, "the manual's thousands of passages should report more than once"
    assert encoded == sorted(encoded) and encoded[-1] > encoded[0]
    left = [e.eta_s for e in during]
    assert left == sorted(left, reverse=True) and left[0] > left[-1]


def test_the_time_left_is_close_to_the_truth_from_the_first_files(run):
    """Counting files, 20 of 21 notes done in a few seconds of a 3-minute run would say a
    second or two is left; counting passages (the manual's size says how many) does not."""
    events, end = run
    checked = 0
    for now, event in events:
        if event.eta_s is None or event.files_done == event.files_total:
            continue
        truth = end - now
        assert event.eta_s == pytest.approx(truth, rel=0.35), (
            f"at {event.files_done} files ({event.encoded} passages): {event.eta_s:.0f} s said, {truth:.0f} s true")
        checked += 1
    assert checked >= 10
    early = next((now, e) for now, e in events if e.eta_s is not None)
    assert early[1].files_done < 20 and early[1].eta_s > 0.5 * (end - early[0])


def test_throughput_before_anything_is_read_knows_no_time():
    clock = FakeClock()
    pace = Throughput(clock)
    pace.plan("txt", 10_000)
    assert pace.seconds_left() is None and pace.rate() == 0
    pace.read("txt", 5_000, passages=20)
    assert pace.passages_left() == pytest.approx(40)  # 20 waiting, 20 more in the other 5,000 bytes
    clock.now = 2.0
    pace.encoded(20)
    assert pace.rate() == pytest.approx(10) and pace.seconds_left() == pytest.approx(2.0)


def test_throughput_uses_each_kind_of_files_own_density_once_known():
    clock = FakeClock()
    pace = Throughput(clock)
    pace.plan("pdf", 2_000_000)
    pace.plan("pdf", 2_000_000)
    pace.plan("txt", 100_000)
    pace.read("pdf", 2_000_000, passages=100)  # a PDF holds little text per byte
    clock.now = 10.0
    pace.encoded(100)
    # the other PDF: 100 more; the text file at the only density known so far
    assert pace.passages_left() == pytest.approx(100 + 100_000 * 100 / 2_000_000)
    pace.read("txt", 100_000, passages=200)
    pace.encoded(200)
    assert pace.passages_left() == pytest.approx(100)
    pace.passed("pdf", 2_000_000)  # unchanged after all
    assert pace.passages_left() == 0


def test_sampled_files_ahead_say_what_the_rest_of_a_kind_holds():
    """Dense files first, sparse ones after (same kind): the sparse one sampled ahead tells,
    where the density of what was read would say three and a half times too much."""
    pace = Throughput(FakeClock())
    for _ in range(10):
        pace.plan("txt", 1_000_000)
    pace.read_ahead("txt", 1_000_000, passages=1_000, position=8)  # sparse, read first
    for position in range(5):  # the five dense files, in order
        pace.read("txt", 1_000_000, passages=4_000)
        pace.reached(position)
    pace.encoded(21_000)
    truth = 4 * 1_000  # the four sparse files not read yet
    cumulative = 4 * 1_000_000 * 21_000 / 6_000_000
    assert pace.passages_left() == pytest.approx(truth, rel=0.05)
    assert cumulative > 3 * truth
    pace.reached(8)  # past the sample: what every file of the kind gave
    assert pace.passages_left() == pytest.approx(cumulative)


def _dense_then_sparse_run(tmp_path_factory):
    """Forty files of plain sentences first (by name), then forty holding the same amount of
    text padded with spaces (four times the bytes): (fake time, event) pairs and the end."""
    root = tmp_path_factory.mktemp("docs")
    for n in range(40):
        lines = [sentence(1000 * n + i) for i in range(40)]
        (root / f"a_{n:02d}.txt").write_text("\n".join(lines), encoding="utf-8")
        (root / f"b_{n:02d}.txt").write_text("\n".join(line + " " * 300 for line in lines), encoding="utf-8")
    return timed_run(root, tmp_path_factory)


def _worst_error_after_a_tenth(events, end) -> float:
    errors = [abs(e.eta_s - (end - now)) / (end - now) for now, e in events
              if e.eta_s is not None and e.files_done >= 0.1 * e.files_total and end - now > 0.05 * end]
    assert len(errors) >= 10
    return max(errors)


def test_the_time_left_holds_when_later_folders_are_unlike_the_first(tmp_path_factory, monkeypatch):
    events, end = _dense_then_sparse_run(tmp_path_factory)
    first = [e.current for _, e in events if e.current][:10]
    assert any("b_" in (c or "") for c in first), "a sample of every part of the run is read first"
    assert _worst_error_after_a_tenth(events, end) <= 0.25
    # Without the sample, the first files' density over-estimates the padded ones.
    monkeypatch.setattr("engine.indexer.SAMPLE_MAX", 0)
    events, end = _dense_then_sparse_run(tmp_path_factory)
    assert _worst_error_after_a_tenth(events, end) > 0.5
