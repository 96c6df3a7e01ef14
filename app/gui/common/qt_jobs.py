"""One engine job at a time, in a QtWorker; later requests wait in a queue.

    >>> jobs = QtJobQueue()
    >>> jobs.progress.connect(progress_row.show_event)
    >>> jobs.submit("Indexing Documents", lambda: lib.index_paths([folder]), roots={str(folder)})

Jobs are queued rather than run side by side because they all write to the same index;
the engine would serialise them anyway, and one progress bar is easier to read.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, Signal

from app.gui.common.qt_worker import QtWorker

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Job:
    """A queued engine call; `start()` makes the generator when the job's turn comes."""

    label: str  # shown above the progress bar
    start: Callable[[], Iterator] = field(repr=False)
    roots: frozenset[str] = frozenset()  # folders it works on, marked busy in the sidebar
    callback_style: bool = False  # start(progress) reports through a callback instead
    # in the GUI thread with the last event, instead of the window's indexing summary
    on_success: Callable[[object], None] | None = field(default=None, repr=False)
    cancel_note: str = "files already done stay searchable"  # what Cancel left behind


class QtJobQueue(QObject):
    """Runs queued Jobs one by one.

    Signals:
        started(Job), progress(object): each yielded event,
        succeeded(Job, object): the job's last event, cancelled(Job),
        failed(Job, object): the exception, idle(): nothing left to run.
    """

    started = Signal(object)
    progress = Signal(object)
    succeeded = Signal(object, object)
    cancelled = Signal(object)
    failed = Signal(object, object)
    idle = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self._queue: deque[Job] = deque()
        self._job: Job | None = None
        self._worker: QtWorker | None = None

    def submit(self, job: Job) -> None:
        self._queue.append(job)
        if self._worker is None:
            self._start_next()

    def busy(self) -> bool:
        return self._worker is not None

    def current(self) -> Job | None:
        return self._job

    def worker(self) -> QtWorker | None:
        """The worker running now (tests wait on its `finished`)."""
        return self._worker

    def pending(self) -> list[Job]:
        return list(self._queue)

    def busy_roots(self) -> set[str]:
        roots = set(self._job.roots) if self._job else set()
        for job in self._queue:
            roots |= job.roots
        return roots

    def cancel(self) -> None:
        """Cancels the running job and drops the queued ones."""
        self._queue.clear()
        if self._worker is not None:
            self._worker.cancel()

    def shutdown(self, timeout_ms: int = 30_000) -> bool:
        """Cancels everything and waits for the worker thread; True when it stopped."""
        self.cancel()
        worker = self._worker
        return worker is None or worker.wait(timeout_ms)

    def _start_next(self) -> None:
        if not self._queue:
            self._job, self._worker = None, None
            self.idle.emit()
            return
        job = self._queue.popleft()
        try:
            worker = QtWorker.for_callback(job.start, self) if job.callback_style else QtWorker(job.start(), self)
        except Exception as e:  # noqa: BLE001 - a job that cannot even start is reported like one that failed
            log.debug("job %s could not start", job.label, exc_info=True)
            self.failed.emit(job, e)
            self._start_next()
            return
        self._job, self._worker = job, worker
        worker.yielded.connect(self.progress)
        worker.returned.connect(lambda last: self.succeeded.emit(job, last))
        worker.cancelled.connect(lambda: self.cancelled.emit(job))
        worker.errored.connect(lambda error: self.failed.emit(job, error))
        worker.finished.connect(self._on_finished)
        self.started.emit(job)
        worker.start()

    def _on_finished(self) -> None:
        worker = self._worker
        self._job, self._worker = None, None
        if worker is not None:
            worker.wait()
            worker.deleteLater()
        self._start_next()
