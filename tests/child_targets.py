"""Jobs for tests/app/gui/common/test_child_job.py, imported by the child process only."""

from __future__ import annotations

import os
import time
from pathlib import Path

from engine.errors import InputError


def counting(n: int, *, then: str = "done"):
    for i in range(n):
        yield (i, os.getpid())
    return then


def plain(value):
    return value * 2


def failing_typed():
    yield 1
    raise InputError("the corpus is empty")


class Unpicklable(Exception):
    def __init__(self, a, b):
        super().__init__(f"{a} and {b}")


def failing_untyped():
    raise Unpicklable("one", "two")
    yield  # a generator all the same


def slow_forever(marker: str):
    """Yields every 50 ms until closed; closing writes `marker` (its cleanup ran)."""
    try:
        while True:
            time.sleep(0.05)
            yield "tick"
    finally:
        Path(marker).write_text("closed", encoding="utf-8")


def deaf(marker: str):
    """Yields once, then blocks without yielding: only terminating stops it."""
    yield "started"
    Path(marker).write_text("blocking", encoding="utf-8")
    time.sleep(600)
    yield "never"


def reporting(steps: int, *, progress):
    """A callback-style job: progress(fraction, message) per step, then its result."""
    for i in range(steps):
        progress((i + 1) / steps, f"step {i + 1}")
    return "registered"
