"""A job run in a child process, so that the window's memory is its own again afterwards.

    >>> job = ChildJob("trainer.mixcse.train:train", config, corpus=corpus)
    >>> for event in job: ...          # the child's events, in order
    >>> job.value                      # what the job returned (a generator's return value)
    >>> job.interrupt()                # from any thread: stop soon, keeping what is saved

Training loads torch, a model, its optimiser state and activations: 2.5 GB that a process
keeps after they are freed (Python's and the C allocators' arenas, torch's threads and
caches), so a window that trained once stayed at 2.5 GB. A child process gives all of it
back when it exits, and the window never imports torch at all.

`target` is "module:function", imported in the child only. The function may return a
generator (its events are passed on one by one) or a value; a function that reports
through a callback instead gets one as the keyword `progress` names, and each call's
arguments arrive as an event. Events, the value and
exceptions cross a pipe pickled; an exception that does not survive pickling arrives as
a ChildJobError with its type and message. Stopping (interrupt(), or closing the
iterator) asks the child to close its generator at the next event, which is the jobs'
own cancel; a child that does not end within `grace_s` is terminated: training writes
checkpoints atomically, so a kill mid-step loses that step only.
"""

from __future__ import annotations

import importlib
import logging
import multiprocessing
import pickle
import threading
import traceback
from collections.abc import Iterator
from typing import Any

from engine.errors import BabelfindError

log = logging.getLogger(__name__)

POLL_S = 0.1  # how often the parent looks for an interrupt while the child is silent
GRACE_S = 3.0  # a stopped child gets this long to close its generator before it is terminated
EXIT_S = 60.0  # a child that finished gets this long to exit (unloading torch takes seconds)
_CANCEL = "cancel"


class ChildJobError(BabelfindError):
    """The child failed with an exception that could not be sent back as itself."""


class ChildJob(Iterator):
    """Iterates the events of `target(*args, **kwargs)` run in a spawned process."""

    def __init__(self, target: str, *args: Any, grace_s: float = GRACE_S, progress: str | None = None,
                 **kwargs: Any):
        self.target, self.args, self.kwargs, self.progress = target, args, kwargs, progress
        self.grace_s = grace_s
        self.value: Any = None
        self.interrupted = False
        self._stop = threading.Event()
        self._events = self._run()

    def __next__(self):
        return next(self._events)

    def close(self) -> None:
        """Stops the child (if it still runs) and waits for it to end."""
        self._stop.set()
        self._events.close()

    def interrupt(self) -> None:
        """Asks the job to stop at its next event; safe from any thread."""
        self._stop.set()

    def _run(self) -> Iterator:
        context = multiprocessing.get_context("spawn")  # no forked copy of Qt and its threads
        ours, theirs = context.Pipe()
        process = context.Process(target=_child_main,
                                  args=(theirs, self.target, self.args, self.kwargs, self.progress),
                                  name=f"babelfind-{self.target.rsplit(':', 1)[-1]}", daemon=True)
        process.start()
        theirs.close()
        ended = False  # the child sent its value or error: it is exiting on its own
        try:
            while True:
                if self._stop.is_set():
                    self.interrupted = True
                    return
                if not ours.poll(POLL_S):
                    if not process.is_alive() and not ours.poll(0):
                        raise ChildJobError(f"the {self.target} process ended unexpectedly "
                                            f"(exit code {process.exitcode})")
                    continue
                try:
                    kind, payload = ours.recv()
                except EOFError:
                    continue  # the child ended: the next turn reports how
                if kind == "event":
                    yield payload
                    continue
                ended = True
                if kind == "return":
                    self.value = payload
                    return
                raise payload  # "error"
        finally:
            _stop(process, ours, EXIT_S if ended else self.grace_s, ask=not ended)


def _stop(process, connection, grace_s: float, *, ask: bool = True) -> None:
    """Asks a running child to stop (`ask`), waits `grace_s` for it to end, then ends it:
    terminate, and kill if it must."""
    if process.is_alive():
        if ask:
            try:
                connection.send(_CANCEL)
            except (BrokenPipeError, OSError):
                pass
        process.join(grace_s)
    if process.is_alive():
        log.info("terminating %s after %.0f s", process.name, grace_s)
        process.terminate()
        process.join(5)
    if process.is_alive():
        process.kill()
        process.join()
    connection.close()


def _child_main(connection, target: str, args: tuple, kwargs: dict, progress: str | None) -> None:
    """In the child: runs the job, sends each event, stops when asked. Its log records and
    warnings go to the library's log file, as the window's do (transformers' too: every
    job run this way trains or exports)."""
    from app.logging_setup import logging_to_file, route_transformers_logs, verbose_requested
    from engine.config import data_paths

    with logging_to_file(data_paths().home, verbose_requested()):
        route_transformers_logs()  # its load reports and bars go to the log, not the terminal
        _run_job(connection, target, args, kwargs, progress)


class _Stopped(Exception):
    """Raised in a callback-style job's `progress` call once the parent asked it to stop."""


def _run_job(connection, target: str, args: tuple, kwargs: dict, progress: str | None) -> None:
    def report(*values) -> None:
        connection.send(("event", values[0] if len(values) == 1 else values))
        if connection.poll() and connection.recv() == _CANCEL:
            raise _Stopped()

    if progress is not None:
        kwargs = kwargs | {progress: report}
    try:
        module, name = target.split(":")
        try:
            result = getattr(importlib.import_module(module), name)(*args, **kwargs)
        except _Stopped:
            return
        if not hasattr(result, "__next__"):
            connection.send(("return", result))
            return
        try:
            while True:
                try:
                    event = next(result)
                except StopIteration as done:
                    connection.send(("return", done.value))
                    return
                connection.send(("event", event))
                if connection.poll() and connection.recv() == _CANCEL:
                    return  # `finally` closes the generator: the job's own cancel
        finally:
            result.close()
    except BaseException as e:  # noqa: BLE001 - every failure goes back to the parent, typed
        _send_error(connection, e)
    finally:
        connection.close()


def _send_error(connection, error: BaseException) -> None:
    if not isinstance(error, BabelfindError):
        log.error("%s failed", error.__class__.__name__, exc_info=error)  # the traceback, for a bug report
    try:
        error = pickle.loads(pickle.dumps(error))  # it must arrive as itself, or not at all
    except Exception:  # noqa: BLE001 - an exception whose __init__ takes other arguments
        detail = str(error) if isinstance(error, BabelfindError) else \
            "".join(traceback.format_exception_only(type(error), error)).strip()
        error = ChildJobError(detail)
    try:
        connection.send(("error", error))
    except (BrokenPipeError, OSError):
        pass  # the parent stopped listening
