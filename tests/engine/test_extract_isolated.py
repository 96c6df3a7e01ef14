"""Extraction in a child process: the deadline holds even inside C code, memory is bounded,
a crash costs one document, and ordinary documents come back exactly as read in-process."""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from pathlib import Path

import pytest
from format_docs import make_png
from hostile_docs import SLOW_NESTING, nested_html, seed_documents, slow_nesting_deadline

from engine.config import ExtractLimits
from engine.errors import (
    CorruptDocumentError,
    DocumentTooLargeError,
    ExtractionError,
    ExtractionTimeoutError,
)
from engine.extract import extract_data
from engine.extract.html_file import MAX_DEPTH, nests_deeper_than
from engine.extract import isolated
from engine.extract.isolated import ExtractionProcess
from engine.extract.ocr import ocr_setup

posix_only = pytest.mark.skipif(os.name != "posix", reason="signals and address-space limits are POSIX")


@pytest.fixture
def reader():
    with ExtractionProcess() as process:
        yield process


def test_documents_come_back_as_read_in_process(reader):
    for name, data in seed_documents().items():
        assert reader.extract(Path(name), data) == extract_data(Path(name), data), name


def test_errors_keep_their_type_and_reason(reader):
    with pytest.raises(CorruptDocumentError, match="no end-of-file marker") as caught:
        reader.extract(Path("broken.pdf"), b"%PDF-1.4 not really")
    assert caught.value.path == Path("broken.pdf")
    with pytest.raises(ExtractionError, match="file is empty"):
        reader.extract(Path("empty.txt"), b"")


@pytest.mark.timeout(60)
def test_a_parse_stuck_in_c_is_killed_at_the_deadline_and_the_next_document_read(reader):
    # These levels pass the nesting check (too few tags to need it) but take lexbor
    # four times the deadline, and no Budget check runs inside it.
    deep, deadline = nested_html(SLOW_NESTING), slow_nesting_deadline()
    started = time.monotonic()
    with pytest.raises(ExtractionTimeoutError, match=f"longer than the {deadline:g} s limit"):
        reader.extract(Path("deep.html"), deep, ExtractLimits(max_seconds=deadline))
    assert time.monotonic() - started < 5
    assert reader.extract(Path("next.txt"), b"Honey bees dance.").text == "Honey bees dance."


def test_deep_nesting_is_refused_before_parsing(reader):
    started = time.monotonic()
    with pytest.raises(DocumentTooLargeError, match="nested over 1,000 levels deep"):
        reader.extract(Path("deep.html"), nested_html(200_000))
    assert time.monotonic() - started < 10  # parsing it takes lexbor about 100 s


def test_the_nesting_estimate_follows_the_parser_on_ordinary_pages():
    # Unclosed paragraphs, list items and cells close their siblings; end tags close
    # what was left open inside them: none of that is depth.
    ordinary = ("<div><p>one<p>two<ul><li>a<li>b</ul><table><tr><td>x<td><b>y</table></div>"
                "<p><b>bold, never closed</p>") * 5_000
    assert not nests_deeper_than(ordinary)
    assert nests_deeper_than("<section><span>x" * (MAX_DEPTH + 1))
    assert nests_deeper_than("<li><ul>" * MAX_DEPTH)


@posix_only
def test_a_crashed_reader_costs_one_document(reader, caplog, monkeypatch):
    reader.extract(Path("first.txt"), b"The reader is running now.")
    long_text = b"Honey bees dance to show the way to the flowers. " * 1_000_000  # seconds to read
    # Killed once the child holds the whole document: before that (a loaded machine can
    # take longer than any fixed delay to hand 50 MB over) the reader restarts the child
    # and sends the document again, as it should.
    handed_over = threading.Event()
    write_frame = isolated._write_frame

    def write_and_tell(stream, frame) -> None:
        write_frame(stream, frame)
        handed_over.set()

    def kill_when_handed_over() -> None:
        handed_over.wait(60)
        os.kill(reader._child.pid, signal.SIGSEGV)

    monkeypatch.setattr(isolated, "_write_frame", write_and_tell)
    threading.Thread(target=kill_when_handed_over).start()
    with caplog.at_level(logging.WARNING), pytest.raises(ExtractionError, match="crashed on this file"):
        reader.extract(Path("long.txt"), long_text, ExtractLimits(max_seconds=60))
    assert "SIGSEGV" in caplog.text
    assert reader.extract(Path("next.txt"), b"Glaciers move slowly.").text == "Glaciers move slowly."


@posix_only
@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="the address-space bound needs /proc")
def test_memory_is_bounded(reader):
    # ~40 MB of text needs several times that while decoded and normalised.
    text = ("Honey bees dance to show the way to the flowers. " * 800_000).encode()
    limits = ExtractLimits(max_memory_bytes=32 * 1024 * 1024)
    with pytest.raises(DocumentTooLargeError, match="ran out of memory"):
        reader.extract(Path("big.txt"), text, limits)
    assert reader.extract(Path("big.txt"), text).text.startswith("Honey bees dance")


def test_the_readers_log_records_reach_this_process(reader, caplog):
    with caplog.at_level(logging.DEBUG, logger="engine.extract"):
        reader.extract(Path("a.txt"), b"Honey bees dance.")
    assert [r.getMessage() for r in caplog.records if r.name == "engine.extract"] == ["a.txt: 17 characters of txt"]
    caplog.clear()
    reader.extract(Path("a.txt"), b"Honey bees dance.")  # not asked for: not sent
    assert not [r for r in caplog.records if r.name == "engine.extract"]


def test_a_closed_reader_leaves_no_process():
    reader = ExtractionProcess()
    reader.extract(Path("a.txt"), b"Honey bees dance.")
    child = reader._child
    reader.close()
    assert child.poll() is not None


def test_started_ahead_the_child_serves_the_first_document_and_a_failed_start_waits_for_it(monkeypatch):
    with ExtractionProcess() as process:
        process.start()
        child = process._child
        assert child is not None and child.poll() is None
        process.start()  # running already: the same child
        assert process._child is child
        assert process.extract(Path("a.txt"), b"hello") == extract_data(Path("a.txt"), b"hello")
    broken = ExtractionProcess()

    def cannot_start():
        raise OSError("the document reader did not start")
    monkeypatch.setattr(broken, "_start", cannot_start)
    broken.start()  # no error here: the first document reports it, with its path
    with pytest.raises(ExtractionError, match="could not be started"):
        broken.extract(Path("a.txt"), b"hello")


@posix_only
@pytest.mark.skipif(not ocr_setup(ExtractLimits()).usable, reason="no OCR engine installed")
def test_started_ahead_for_images_the_child_has_its_ocr_worker_running(tmp_path):
    with ExtractionProcess() as process:
        process.start(ocr=ExtractLimits())
        workers = _spawned_children(process._child.pid)
        assert len(workers) == 1  # the OCR worker, before any image
        got = process.extract(tmp_path / "harbour.png", make_png(tmp_path / "harbour.png").read_bytes())
        assert "schooners" in got.text
        assert _spawned_children(process._child.pid) == workers  # read by the same worker


def _spawned_children(pid: int) -> list[str]:
    """The processes `pid` started through multiprocessing's spawn (not its resource tracker)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [child for child in children if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes()]


def test_every_reading_error_crosses_the_process_boundary_whole():
    import inspect
    import pickle

    import engine.errors as errors

    kinds = [c for _, c in inspect.getmembers(errors, inspect.isclass) if issubclass(c, errors.ExtractionError)]
    assert errors.MissingToolError in kinds
    for kind in kinds:
        extra = ("antiword",) if kind is errors.MissingToolError else ()
        error = kind(Path("a.doc"), *extra, "the reason")
        copy = pickle.loads(pickle.dumps(error))
        assert (type(copy), copy.path, copy.reason, str(copy)) == (kind, error.path, error.reason, str(error))
        assert getattr(copy, "tool", None) == getattr(error, "tool", None)
