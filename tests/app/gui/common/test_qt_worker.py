"""QtWorker: generator and callback jobs, cancellation at the next event, typed errors."""

from __future__ import annotations

import threading

import pytest

from app.gui.common.qt_worker import QtWorker, running_workers
from engine.errors import CorruptDocumentError


def _counting(n: int, closed: list[bool], gate: threading.Event | None = None):
    try:
        for i in range(n):
            if gate is not None and i == 2:
                gate.wait(5)
            yield i
    finally:
        closed.append(True)


def test_each_event_becomes_a_signal_and_returned_carries_the_last(qtbot):
    closed: list[bool] = []
    worker = QtWorker(_counting(5, closed))
    seen: list[int] = []
    worker.yielded.connect(seen.append)
    with qtbot.waitSignal(worker.returned, timeout=5000) as returned:
        worker.start()
    qtbot.waitUntil(lambda: not worker.isRunning())
    assert seen == [0, 1, 2, 3, 4]
    assert returned.args == [4]
    assert closed == [True]


def test_cancel_stops_at_the_next_event_and_closes_the_generator(qtbot):
    closed: list[bool] = []
    gate = threading.Event()
    worker = QtWorker(_counting(1000, closed, gate))
    seen: list[int] = []
    worker.yielded.connect(seen.append)
    worker.returned.connect(lambda _: pytest.fail("a cancelled job must not return"))
    with qtbot.waitSignal(worker.cancelled, timeout=5000):
        worker.start()
        qtbot.waitUntil(lambda: len(seen) >= 2)
        worker.cancel()
        gate.set()
    qtbot.waitUntil(lambda: not worker.isRunning())
    assert len(seen) <= 3  # the event in flight when Cancel came, and no more
    assert closed == [True]
    assert running_workers() == []


def test_typed_engine_errors_reach_the_gui_unchanged(qtbot):
    def failing():
        yield 1
        raise CorruptDocumentError("/tmp/x.pdf", "not a PDF")

    worker = QtWorker(failing())
    with qtbot.waitSignal(worker.errored, timeout=5000) as errored:
        worker.start()
    qtbot.waitUntil(lambda: not worker.isRunning())
    error = errored.args[0]
    assert isinstance(error, CorruptDocumentError)
    assert error.reason == "not a PDF"


def test_callback_jobs_report_progress_return_a_value_and_cancel(qtbot):
    def job(progress):
        for i in range(3):
            progress(i)
        return "installed"

    worker = QtWorker.for_callback(job)
    seen: list[int] = []
    worker.yielded.connect(seen.append)
    with qtbot.waitSignal(worker.returned, timeout=5000) as returned:
        worker.start()
    qtbot.waitUntil(lambda: not worker.isRunning())
    assert seen == [0, 1, 2] and returned.args == ["installed"]

    reached: list[int] = []
    gate = threading.Event()

    def endless(progress):
        i = 0
        while True:
            reached.append(i)
            progress(i)
            if i == 3:
                gate.wait(5)  # hold until the GUI has pressed Cancel
            i += 1

    worker = QtWorker.for_callback(endless)

    def on_event(i: int) -> None:
        if i == 3:
            worker.cancel()
            gate.set()

    worker.yielded.connect(on_event)
    with qtbot.waitSignal(worker.cancelled, timeout=5000):
        worker.start()
    qtbot.waitUntil(lambda: not worker.isRunning())
    # Cancel lands while report 3 or report 4 is being made; that report raises
    assert reached in ([0, 1, 2, 3], [0, 1, 2, 3, 4])
