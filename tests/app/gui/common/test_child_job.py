"""A job run in a child process: its events, return value and errors come back; an
interrupt stops it at its next event, or terminates it when it does not answer; the
window's process never imports what the job does."""

from __future__ import annotations

import os
import sys
import time

import pytest

from app.gui.common.child_job import ChildJob, ChildJobError
from engine.errors import InputError


def test_events_and_the_return_value_come_back_from_another_process():
    job = ChildJob("child_targets:counting", 3, then="finished")
    events = list(job)
    assert [i for i, _ in events] == [0, 1, 2] and job.value == "finished"
    assert {pid for _, pid in events} != {os.getpid()}
    assert "child_targets" not in sys.modules  # imported in the child only


def test_a_function_that_returns_a_value_gives_it_without_events():
    job = ChildJob("child_targets:plain", 21)
    assert list(job) == [] and job.value == 42


def test_a_typed_error_arrives_as_itself_after_the_events_before_it():
    job = ChildJob("child_targets:failing_typed")
    assert next(job) == 1
    with pytest.raises(InputError, match="the corpus is empty"):
        next(job)


def test_an_error_that_cannot_cross_arrives_as_a_child_job_error():
    with pytest.raises(ChildJobError, match="Unpicklable: one and two"):
        list(ChildJob("child_targets:failing_untyped"))


def test_an_interrupt_closes_the_childs_generator(tmp_path):
    marker = tmp_path / "closed"
    job = ChildJob("child_targets:slow_forever", str(marker))
    assert next(job) == "tick"
    job.interrupt()
    rest = list(job)
    assert len(rest) <= 3 and job.interrupted
    assert marker.read_text() == "closed"  # its cleanup ran: a stop, not a kill


def test_a_child_that_does_not_answer_is_terminated(tmp_path):
    marker = tmp_path / "blocking"
    job = ChildJob("child_targets:deaf", str(marker), grace_s=0.5)
    assert next(job) == "started"
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    started = time.monotonic()
    job.close()
    assert time.monotonic() - started < 10


def test_a_worker_cancel_interrupts_a_silent_child_at_once(qtbot, tmp_path):
    from app.gui.common.qt_worker import QtWorker

    worker = QtWorker(ChildJob("child_targets:deaf", str(tmp_path / "m"), grace_s=0.5))
    with qtbot.waitSignal(worker.yielded, timeout=60_000):
        worker.start()
    worker.cancel()
    with qtbot.waitSignal(worker.cancelled, timeout=15_000):
        pass
    worker.wait(10_000)


def test_a_callback_style_job_reports_through_the_progress_it_is_given():
    job = ChildJob("child_targets:reporting", 2, progress="progress")
    assert list(job) == [(0.5, "step 1"), (1.0, "step 2")] and job.value == "registered"
