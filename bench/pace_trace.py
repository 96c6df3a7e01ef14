"""A run's pace, recorded once and replayed: every call the indexer makes to its Throughput
(files planned and read, encoder calls, saves), each with the clock it saw, so that the
time-left estimate of a 35-minute run can be measured again in a second after a change to
engine/throughput.py, on exactly the same work.

    record(Path("pace.jsonl"))            # before the run, in the process that indexes
    estimates, end = replay(Path("pace.jsonl"))   # [(time, estimate)] as the code now says

Only what the estimate depends on is recorded; the k-th estimate is the k-th progress event
of the run (the indexer asks for one per event).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

CALLS = ("plan", "read", "read_ahead", "reached", "encoded", "aside", "saved")


def record(path: Path):
    """Wraps Throughput's methods so each top-level call is written to `path` with its clock,
    as is each estimate asked for; returns a function that writes the run's end and closes."""
    import engine.throughput as throughput

    out = path.open("w")
    depth = [0]  # read_ahead calls read: only the outer call is replayed

    def recorded(name, original):
        def call(self, *args, **kwargs):
            if depth[0] == 0:
                out.write(json.dumps([name, self.clock(), list(args), kwargs]) + "\n")
            depth[0] += 1
            try:
                return original(self, *args, **kwargs)
            finally:
                depth[0] -= 1
        return call

    cls = throughput.Throughput
    for name in CALLS:
        setattr(cls, name, recorded(name, getattr(cls, name)))
    post_init = cls.__post_init__

    def started(self):
        post_init(self)
        out.write(json.dumps(["start", self.started, [], {}]) + "\n")
    cls.__post_init__ = started
    seconds_left = cls.seconds_left

    def estimate(self):
        value = seconds_left(self)
        out.write(json.dumps(["estimate", self.clock(), [value], {}]) + "\n")
        return value
    cls.seconds_left = estimate

    def end() -> None:
        out.write(json.dumps(["end", time.monotonic(), [], {}]) + "\n")
        out.close()
    return end


def replay(path: Path) -> tuple[list[tuple[float, float | None]], float]:
    """([(clock, estimate)] the current Throughput gives on the recorded calls, the end)."""
    from engine.throughput import Throughput

    now = [0.0]
    pace, estimates, end = None, [], None
    for line in path.open():
        name, clock, args, kwargs = json.loads(line)
        now[0] = clock
        if name == "start":
            pace = Throughput(lambda: now[0], started=clock)
        elif name == "estimate":
            estimates.append((clock, pace.seconds_left()))
        elif name == "end":
            end = clock
        else:
            getattr(pace, name)(*args, **kwargs)
    return estimates, end
