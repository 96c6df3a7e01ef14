"""The one QThread worker: runs an engine generator and turns each yield into a signal.

    >>> worker = QtWorker(lib.index_paths([folder]))
    >>> worker.yielded.connect(progress_bar.show_event)
    >>> worker.returned.connect(show_summary)
    >>> worker.start()
    ...
    >>> worker.cancel()      # takes effect at the next yielded event

The engine's cancellation contract is "stop iterating and close the generator": the
worker does exactly that, in its own thread, so the engine's cleanup (committing what
is done, leaving a consistent index) runs where the work ran.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable, Iterator

import shiboken6
from PySide6.QtCore import QThread, Signal

log = logging.getLogger(__name__)

# Every worker ever started, so tests (and quitting) can find the ones still running.
_LIVE_WORKERS: weakref.WeakSet[QtWorker] = weakref.WeakSet()


class JobCancelled(Exception):
    """Raised inside a callback-style job when the user pressed Cancel."""


class QtWorker(QThread):
    """Runs one job (a generator of events) in a thread.

    Signals, all delivered in the GUI thread:
        yielded(object): each event the job yields, in order.
        returned(object): when the job ran to its end, its return value if it has one (a
            ChildJob's `value`), else its last event (None if it yielded nothing).
        cancelled(): the job was stopped by cancel() before its end.
        errored(object): the exception that ended the job (a typed BabelfindError for
            anything the engine raises on purpose).
    QThread's own `finished` follows exactly one of the last three.
    """

    yielded = Signal(object)
    returned = Signal(object)
    cancelled = Signal()
    errored = Signal(object)

    def __init__(self, job: Iterator, parent=None):
        super().__init__(parent)
        self._job: Iterator | None = job
        self._function: Callable | None = None
        self._cancel = threading.Event()
        _LIVE_WORKERS.add(self)

    @classmethod
    def for_callback(cls, function: Callable[[Callable[[object], None]], object], parent=None):
        """A worker for a job that reports progress through a callback instead of yielding.

        `function(progress)` runs in the thread; each `progress(event)` call is emitted as
        `yielded`, and raises JobCancelled once cancel() was called, so the job stops at
        its next report like a generator would. Its return value is emitted as `returned`.
        """
        worker = cls(iter(()), parent)
        worker._job = None
        worker._function = function
        return worker

    def cancel(self) -> None:
        """Ask the job to stop; it stops when it next yields (thread-safe). A job that can be
        interrupted while it waits for its next event (a ChildJob) is told at once."""
        self._cancel.set()
        interrupt = getattr(self._job, "interrupt", None)
        if interrupt is not None:
            interrupt()

    def is_cancelling(self) -> bool:
        return self._cancel.is_set()

    def run(self) -> None:  # runs in the worker thread
        last, error = None, None
        try:
            last = self._call() if self._function is not None else self._iterate()
        except JobCancelled:
            pass
        except Exception as e:  # noqa: BLE001 - every failure must reach the GUI, typed
            log.debug("job failed", exc_info=True)
            error = e
        # close before reporting, so whoever reacts to the signal sees a settled engine
        self._close()
        if error is not None:
            self.errored.emit(error)
        elif self._cancel.is_set():
            self.cancelled.emit()
        else:
            self.returned.emit(last)

    def _iterate(self) -> object:
        last = None
        for event in self._job:
            last = event
            self.yielded.emit(event)
            if self._cancel.is_set():
                break
        value = getattr(self._job, "value", None)
        return last if value is None else value

    def _call(self) -> object:
        def progress(event: object) -> None:
            self.yielded.emit(event)
            if self._cancel.is_set():
                raise JobCancelled()

        return self._function(progress)

    def _close(self) -> None:
        # closing the generator is the engine's cancellation signal; it runs its cleanup
        close = getattr(self._job, "close", None)
        self._job = None  # drop the generator (and what it holds) with the thread
        self._function = None
        if close is not None:
            try:
                close()
            except Exception:  # noqa: BLE001 - cleanup errors are logged, never raised twice
                log.exception("closing a job failed")


def running_workers() -> list[QtWorker]:
    """Workers whose thread is still running (for tests and for quitting cleanly)."""
    return [w for w in list(_LIVE_WORKERS) if shiboken6.isValid(w) and w.isRunning()]
