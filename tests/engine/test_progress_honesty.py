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
    pace.read("txt", 5_000, chars=2_000)  # 2,000 characters wait; 2,000 more in the other 5,000 bytes
    assert pace.seconds_left() is None  # no encoding measured yet
    clock.now = 2.0
    pace.encoded(20, {"txt": 2_000}, seconds=2.0)
    assert pace.rate() == pytest.approx(10) and pace.seconds_left() == pytest.approx(2.0)


def test_throughput_uses_each_kind_of_files_own_density_once_known():
    clock = FakeClock()
    pace = Throughput(clock)
    pace.plan("pdf", 2_000_000)
    pace.plan("pdf", 2_000_000)
    pace.plan("txt", 100_000)
    pace.read("pdf", 2_000_000, chars=10_000)  # a PDF holds little text per byte
    clock.now = 10.0
    pace.encoded(100, {"pdf": 10_000}, seconds=10.0)  # a millisecond a character
    # the other PDF: 10,000 characters more; the text file at the only density known so far
    assert pace.seconds_left() == pytest.approx(10.0 + 100_000 * 10_000 / 2_000_000 / 1_000)
    pace.read("txt", 100_000, chars=40_000)
    clock.now = 50.0
    pace.encoded(400, {"txt": 40_000}, seconds=40.0)
    assert pace.seconds_left() == pytest.approx(10.0)
    pace.read("pdf", 2_000_000, seconds=0.0)  # unchanged after all (the same content): nothing to encode
    assert pace.seconds_left() == 0


def test_each_kind_encodes_at_its_own_cost_per_character():
    """Source code has more tokens per character than prose: its unread files are counted at
    what its own characters cost, not at the run's mean."""
    clock = FakeClock()
    pace = Throughput(clock)
    pace.plan("txt", 300_000)
    pace.plan("py", 200_000)
    pace.read("txt", 100_000, chars=50_000)
    pace.read("py", 100_000, chars=50_000)
    clock.now = 150.0
    pace.encoded(250, {"txt": 50_000}, seconds=50.0)  # a millisecond a character
    pace.encoded(250, {"py": 50_000}, seconds=100.0)  # two
    # left: 100,000 characters of prose and 50,000 of code; the mean cost would say 225 s
    assert pace.seconds_left() == pytest.approx(100_000 * 0.001 + 50_000 * 0.002)
    # one call of both kinds is shared out by characters
    pace.read("txt", 100_000, chars=50_000)
    pace.read("py", 50_000, chars=25_000)
    clock.now = 250.0
    pace.encoded(750, {"txt": 50_000, "py": 25_000}, seconds=100.0)
    assert pace._kinds["txt"].encode_s == pytest.approx(50.0 + 100.0 * 2 / 3)


def test_reading_costs_count_for_files_that_give_no_text():
    """Images are read last, and OCR that finds nothing still takes its time: a sampled image
    says what the others will cost to read."""
    clock = FakeClock()
    pace = Throughput(clock)
    pace.plan("txt", 100_000)
    for _ in range(10):
        pace.plan("image", 3_000)
    clock.now = 0.5
    pace.read_ahead("image", 3_000, position=95, seconds=0.5)  # no text found
    clock.now = 0.6
    pace.read("txt", 100_000, chars=50_000, seconds=0.1)
    pace.reached(0)
    clock.now = 50.6
    pace.encoded(500, {"txt": 50_000}, seconds=50.0)
    # nine images to read at the sampled one's cost, not at the text file's
    assert pace.seconds_left() == pytest.approx(9 * 0.5)
    for position in range(96, 99):  # three more images read in order, each dearer
        clock.now += 1.0
        pace.read("image", 3_000, seconds=1.0)
        pace.reached(position)
    # from the fourth image on, every image read so far, moved toward the sample still ahead (none)
    assert pace.seconds_left() == pytest.approx(6 * 3_000 * (0.5 + 3 * 1.0) / 12_000)


def test_what_the_run_does_besides_reading_and_encoding_is_counted_and_so_is_the_last_save():
    """Storing and the vector index take their share of each second of work; what is done
    once (a language's mean) takes none, and the run ends with one more save."""
    clock = FakeClock()
    pace = Throughput(clock)
    pace.plan("txt", 20_000)
    clock.now = 1.0
    pace.read("txt", 10_000, chars=5_000, seconds=1.0)
    clock.now = 4.0  # a second read, a second encoded, two more storing them
    pace.encoded(50, {"txt": 5_000}, seconds=1.0)
    assert pace.seconds_left() == pytest.approx(2 * (1.0 + 1.0))  # the other file, twice its work
    pace.saved(0.7)
    assert pace.seconds_left() == pytest.approx(2 * (1.0 + 1.0) + 0.7)
    clock.now = 5.0
    pace.aside(1.0)  # a new language's mean: done once, not a share of what is left
    assert pace.seconds_left() == pytest.approx(2 * (1.0 + 1.0) + 0.7)


def test_sampled_files_ahead_say_what_the_rest_of_a_kind_holds():
    """Dense files first, sparse ones after (same kind): the sparse one sampled ahead tells,
    where the density of what was read would say three and a half times too much."""
    pace = Throughput(FakeClock())
    for _ in range(10):
        pace.plan("txt", 1_000_000)
    pace.read_ahead("txt", 1_000_000, position=8, chars=1_000)  # sparse, read first
    for position in range(5):  # the five dense files, in order
        pace.read("txt", 1_000_000, chars=4_000)
        pace.reached(position)
    pace.encoded(210, {"txt": 21_000}, seconds=21.0)  # a millisecond a character
    truth = 4 * 1_000 / 1_000  # the four sparse files not read yet, in seconds
    cumulative = 4 * 1_000_000 * 21_000 / 6_000_000 / 1_000
    assert pace.seconds_left() == pytest.approx(truth, rel=0.05)
    assert cumulative > 3 * truth
    pace.reached(8)  # past the sample: what every file of the kind gave
    assert pace.seconds_left() == pytest.approx(cumulative)


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


def test_the_sample_holds_images_read_after_the_text_files_of_the_sample(tmp_path):
    from engine.indexer import _Run

    run = _Run(Throughput(FakeClock()))
    texts = [tmp_path / f"note_{n:03d}.txt" for n in range(600)]
    images = [tmp_path / f"scan_{n:02d}.png" for n in range(20)]
    for file in texts + images:
        run.plan(file, 1_000)
    order = run.reading_order(images[:10] + texts + images[10:])
    ahead = [file for _, file, first in order if first]
    assert len(ahead) == 12 + 3  # 2% of the text files, 2% of the images but at least three
    assert all(f.suffix == ".txt" for f in ahead[:12]) and all(f.suffix == ".png" for f in ahead[12:])
    rest = [file for _, file, first in order if not first]
    assert rest[-17:] == [f for f in images if f not in ahead[12:]]  # the other images come last
    assert run.planned[images[0]][0] == "image"  # one kind for the pace, whatever the extension


def test_images_cost_a_reading_each_and_more_per_byte_once_three_were_read():
    """OCR starts its engines for every image: forty icons left cost forty times what one
    costs, not their few bytes' share of a screenshot's time."""
    clock = FakeClock()
    pace = Throughput(clock)
    pace.plan("txt", 100_000)
    sampled = [(100, 0.15), (10_100, 0.35), (5_100, 0.25)]  # icon, screenshot, diagram
    for size, _ in sampled:
        pace.plan("image", size)
    for _ in range(40):
        pace.plan("image", 100)
    for position, (size, seconds) in enumerate(sampled, start=90):
        clock.now += seconds
        pace.read_ahead("image", size, position, seconds=seconds)
    clock.now += 0.1
    pace.read("txt", 100_000, chars=50_000, seconds=0.1)
    pace.reached(0)
    clock.now += 50.0
    pace.encoded(500, {"txt": 50_000}, seconds=50.0)
    per_byte = 0.2 / 10_000  # the line through the three: 0.15 s at 100 bytes, 0.35 s at 10,100
    assert pace.seconds_left() == pytest.approx(40 * (0.15 - 100 * per_byte) + 4_000 * per_byte)
    # per byte alone, the forty icons would take 4,000 * 0.75 / 15,300 = 0.2 s: thirty times short
    assert pace.seconds_left() > 30 * 4_000 * 0.75 / 15_300


def test_a_few_images_that_slope_down_cost_their_mean_each():
    from engine.throughput import _Line

    def fit(readings):
        line = _Line()
        for size, seconds in readings:
            line.add(size, seconds)
        return line.fit()

    assert fit([(100, 0.4), (3_000, 0.2), (9_000, 0.3)]) == pytest.approx((0.3, 0.0))
    assert fit([(100, 0.0), (200, 1.0), (300, 2.0)]) == pytest.approx((0.0, 1.0 / 200))
    assert fit([(500, 0.2), (500, 0.4)]) == pytest.approx((0.3, 0.0))  # one size: the mean each
