"""Extraction in a child process that is killed when a document runs past its deadline.

    >>> with ExtractionProcess() as reader:
    ...     extracted = reader.extract(Path("deep.html"), data, ExtractLimits(max_seconds=10))
    ExtractionTimeoutError: deep.html: reading took longer than the 10 s limit per document

Why a process, and not only checks inside each extractor's loops: the slow part of a
hostile file is often inside a C parser that Python cannot interrupt. lexbor builds the
tree of 2,000,000 nested <div>s in time that grows with the square of the depth, and no
Python code runs until it returns. A child process can be killed at the deadline whatever
it is running, its address space can be bounded, and a parser that crashes takes only the
child down. On ordinary documents it costs about a millisecond each (the bytes and the
text cross a pipe; bench/bench_extract_limits.py, docs/benchmarks.md). Extractors still
call `Budget.check_time()` between pages and members: that ends a long document cleanly,
with its reason, before the kill is needed; the kill is for the code that cannot check.

One child reads one document after another; a killed or crashed child is replaced for the
next document (a fresh interpreter: ~80 ms, and each parsing library is imported when a
document first needs it, as in this process). It is a plain `python -m` child talking
pickles over its stdin and stdout, not `multiprocessing`, which would re-import the
caller's main script in the child. The child's log records are replayed in this process.
"""

from __future__ import annotations

import logging
import os
import pickle
import queue
import signal
import struct
import subprocess
import sys
import threading
from pathlib import Path
from typing import BinaryIO

from engine.config import ExtractLimits
from engine.errors import DocumentTooLargeError, ExtractionError, ExtractionTimeoutError
from engine.extract.base import ExtractedText
from engine.extract.tree import SkipBelow, TreeDocument

log = logging.getLogger(__name__)

# The child's own Budget checks get this long after the deadline (at most the deadline
# again) to end a document with their reason; then it is killed.
GRACE_S = 2.0
# The child also arms an alarm of its own, later than the parent's kill, so that it cannot
# outlive a parent that died (kill -9) while it was stuck in a parser.
_ALARM_EXTRA_S = 10
# Set in the child's environment; a frozen app's runtime hook serves instead of starting
# the app when it sees it (installers/bundle_runtime_hook.py).
WORKER_ENV = "BABELFIND_EXTRACT_WORKER"
_FRAME = struct.Struct("<Q")
READY = "ready"
STARTUP_TIMEOUT_S = 60.0  # a cold start on a loaded machine; normally ~0.1 s


def timeout_reason(limits: ExtractLimits) -> str:
    """The skip reason for a document that used up its time (the same as Budget's)."""
    return f"reading took longer than the {limits.max_seconds:g} s limit per document"


class ExtractionProcess:
    """A child process that extracts documents one at a time, each under its deadline.

    Not thread safe: one caller at a time (the indexer's loop). Close it when done (or use
    it as a context manager); a child left behind exits when this process's end of the
    pipe closes.
    """

    def __init__(self) -> None:
        self._child: subprocess.Popen | None = None
        self._replies: queue.Queue | None = None

    def __enter__(self) -> ExtractionProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def extract(self, path: Path, data: bytes, limits: ExtractLimits | None = None) -> ExtractedText:
        """`engine.extract.extract_data(path, data, limits=limits)`, run in the child.

        Raises:
            ExtractionTimeoutError: no answer within `limits.max_seconds` (the child is killed).
            DocumentTooLargeError: the child ran out of its `limits.max_memory_bytes`.
            ExtractionError: any error extract_data raises, or the child crashed.
        """
        return self._ask("text", Path(path), data, limits or ExtractLimits(), None)

    def extract_tree(self, path: Path, data: bytes, limits: ExtractLimits | None = None,
                     skip: SkipBelow | None = None) -> list[TreeDocument]:
        """`engine.extract.extract_tree(path, data, limits=limits, skip=skip)`, run in the
        child: every document of the file, members first. The limits hold for the whole
        tree, as in extract_tree; the errors are `extract`'s."""
        return self._ask("tree", Path(path), data, limits or ExtractLimits(), skip)

    def _ask(self, what: str, path: Path, data: bytes, limits: ExtractLimits, skip: SkipBelow | None):
        self._send((what, str(path), data, limits, _log_level(), skip))
        try:
            reply = self._replies.get(timeout=limits.max_seconds + min(GRACE_S, limits.max_seconds))
        except queue.Empty:
            log.warning("%s: no answer from the document reader after %g s; stopping it", path, limits.max_seconds)
            self._stop()
            raise ExtractionTimeoutError(path, timeout_reason(limits)) from None
        if reply is None:
            raise self._crashed(path, limits)
        outcome, value, records = reply
        _replay(records)
        if outcome == "error":
            raise value
        return value

    def start(self, ocr: ExtractLimits | None = None) -> None:
        """Starts the child now, if none is running, so that the first document does not
        wait for it, and with `ocr` (images are coming) its OCR worker as these limits set
        it up; a child that cannot start is left for that document to report."""
        try:
            self._ensure_child()
            if ocr is not None:
                self._ask("ocr", Path("."), b"", ocr, None)
        except (OSError, ExtractionError):
            self._stop()

    def close(self) -> None:
        """Ends the child: it exits when its input closes; killed if it does not at once."""
        if self._child is None:
            return
        try:
            self._child.stdin.close()
            self._child.wait(1.0)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self._stop()

    # -- the child's life ---------------------------------------------------------------

    def _send(self, message: tuple) -> None:
        """Hands a document to a running child, starting one when there is none (or it died)."""
        frame = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        for attempt in range(2):
            try:
                self._ensure_child()
                _write_frame(self._child.stdin, frame)
                return
            except OSError as e:  # it died between documents, or did not start: one more try
                self._stop()
                if attempt:
                    raise ExtractionError(Path(message[1]), f"the document reader could not be started ({e})") from e

    def _ensure_child(self) -> None:
        """A running child: this one, or a new one when there is none (or it died)."""
        if self._child is None or self._child.poll() is not None:
            self._stop()
            self._start()

    def _start(self) -> None:
        environment = dict(os.environ, **{WORKER_ENV: "1"})
        # The folder holding `engine`, for a source checkout run without installing.
        package_parent = str(Path(__file__).resolve().parents[2])
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, [package_parent, os.environ.get("PYTHONPATH")]))
        command = [sys.executable] if getattr(sys, "frozen", False) else [sys.executable, "-m", __name__]
        self._child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       env=environment, close_fds=True)
        self._replies = queue.Queue()
        threading.Thread(target=_read_replies, args=(self._child.stdout, self._replies),
                         name="babelfind-extract-replies", daemon=True).start()
        # Deadlines count from here: the child says it is ready once it has started.
        try:
            ready = self._replies.get(timeout=STARTUP_TIMEOUT_S)
        except queue.Empty:
            ready = None
        if ready != READY:
            self._stop()
            raise OSError("the document reader did not start")

    def _stop(self) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        if child.poll() is None:
            child.kill()
        child.wait()
        for stream in (child.stdin, child.stdout):
            try:
                stream.close()
            except OSError:
                pass

    def _crashed(self, path: Path, limits: ExtractLimits) -> ExtractionError:
        """The error for a child that died while reading `path`."""
        try:
            code = self._child.wait(GRACE_S)
        except subprocess.TimeoutExpired:  # alive: its answer was what failed (logged)
            self._stop()
            return ExtractionError(path, "could not be read (the reader's answer was unreadable)")
        self._stop()
        if code == -getattr(signal, "SIGKILL", 9):  # the kernel's OOM killer, most likely
            return DocumentTooLargeError(path, "too large to read: the reader ran out of memory")
        if code == -getattr(signal, "SIGALRM", 14):
            return ExtractionTimeoutError(path, timeout_reason(limits))
        what = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
        log.warning("%s: the document reader died (%s)", path, what)
        return ExtractionError(path, f"the reader crashed on this file ({what})")


class SameProcess:
    """ExtractionProcess's interface, reading in this process: deadlines hold only where
    an extractor checks them, and nothing bounds memory (for measuring the difference)."""

    _started_ocr = False

    def start(self, ocr: ExtractLimits | None = None) -> None:
        if ocr is not None:
            from engine.extract import ocr as ocr_engines

            ocr_engines.start(ocr)
            self._started_ocr = True

    def extract(self, path: Path, data: bytes, limits: ExtractLimits | None = None) -> ExtractedText:
        from engine.extract import extract_data

        return extract_data(Path(path), data, limits=limits)

    def extract_tree(self, path: Path, data: bytes, limits: ExtractLimits | None = None,
                     skip: SkipBelow | None = None) -> list[TreeDocument]:
        from engine.extract import extract_tree

        return list(extract_tree(Path(path), data, limits=limits, skip=skip))

    def close(self) -> None:
        """Stops the OCR worker `start` began: it is this process's, and the run is over."""
        if self._started_ocr:
            from engine.extract import ocr as ocr_engines

            ocr_engines.shutdown()


def _write_frame(stream: BinaryIO, frame: bytes) -> None:
    stream.write(_FRAME.pack(len(frame)))
    stream.write(frame)
    stream.flush()


def _read_frame(stream: BinaryIO) -> bytes | None:
    """One frame's bytes; None at the end of the stream."""
    header = stream.read(_FRAME.size)
    if len(header) < _FRAME.size:
        return None
    (size,) = _FRAME.unpack(header)
    frame = stream.read(size)
    return frame if len(frame) == size else None


def _read_replies(stream: BinaryIO, replies: queue.Queue) -> None:
    """The parent's reader thread: each reply unpickled onto the queue, None when the child ends.

    The child is our own code started by us, so its pickles are trusted like a function call.
    """
    try:
        while (frame := _read_frame(stream)) is not None:
            replies.put(pickle.loads(frame))
    except (OSError, ValueError, EOFError, pickle.UnpicklingError):  # closed by _stop, or cut off
        pass
    except Exception:  # noqa: BLE001 -- a reply that does not unpickle: a bug of ours, never a hang
        log.exception("a reply of the document reader could not be read")
    replies.put(None)


def _log_level() -> int:
    """The level the child logs at: the lowest any record of it could be kept at here."""
    return min(logging.getLogger(name).getEffectiveLevel() for name in ("", "engine", "engine.extract"))


def _replay(records: list[logging.LogRecord]) -> None:
    for record in records:
        logger = logging.getLogger(record.name)
        if logger.isEnabledFor(record.levelno):
            logger.handle(record)


# -- in the child ------------------------------------------------------------------------


class _Records(logging.Handler):
    """Keeps the child's log records, made picklable, to be sent with the answer."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        record.msg = record.getMessage()
        record.args = None
        if record.exc_info:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
            record.exc_info = None
        self.records.append(record)

    def take(self) -> list[logging.LogRecord]:
        records, self.records = self.records, []
        return records


def serve() -> None:
    """The child's loop: frames of (what, path, data, limits, log level, skip) on stdin,
    answers of ("ok" | "error", value, log records) on stdout, until stdin closes; `what`
    is "text" (extract_data), "tree" (extract_tree's documents as a list) or "ocr" (the
    OCR worker started ahead of the first image)."""
    from engine.extract import OUT_OF_MEMORY, extract_data, extract_tree, ocr, short_error

    os.environ.pop(WORKER_ENV, None)
    if hasattr(signal, "SIGINT"):  # Ctrl-C is the parent's to handle: it stops this child
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    requests = sys.stdin.buffer
    # The answers get the real stdout; anything a library prints goes to stderr instead.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    handler = _Records()
    root = logging.getLogger()
    root.handlers[:] = [handler]
    baseline = _address_space()
    _write_frame(answers, pickle.dumps(READY))
    while (frame := _read_frame(requests)) is not None:
        what, path, data, limits, level, skip = pickle.loads(frame)
        del frame
        path = Path(path)
        root.setLevel(level)
        _limit_memory(baseline, limits.max_memory_bytes)
        _alarm(int(limits.max_seconds + GRACE_S) + _ALARM_EXTRA_S)
        try:
            if what == "tree":
                reply = ("ok", list(extract_tree(path, data, limits=limits, skip=skip)))
            elif what == "ocr":
                reply = ("ok", ocr.start(limits))
            else:
                reply = ("ok", extract_data(path, data, limits=limits))
        except ExtractionError as e:
            reply = ("error", e)
        except MemoryError:
            reply = ("error", DocumentTooLargeError(path, OUT_OF_MEMORY))
        except Exception as e:  # noqa: BLE001 -- a bug of ours: the trace goes to the log
            log.exception("unexpected error while reading %s", path)
            reply = ("error", ExtractionError(path, f"could not be read ({short_error(e)})"))
        finally:
            _alarm(0)
            del data
        try:
            answer = pickle.dumps((*reply, handler.take()), protocol=pickle.HIGHEST_PROTOCOL)
        except MemoryError:
            answer = pickle.dumps(("error", DocumentTooLargeError(path, OUT_OF_MEMORY), []))
        del reply
        try:
            _write_frame(answers, answer)
        except OSError:  # the parent is gone
            return


def _address_space() -> int | None:
    """Bytes of address space this process uses now (Linux), else None."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _limit_memory(baseline: int | None, allowance: int | None) -> None:
    """Caps the address space at what the child had before reading plus `allowance`."""
    try:
        import resource
    except ImportError:  # Windows
        return
    if baseline is None or not allowance:
        return
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    soft = baseline + allowance
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _alarm(seconds: int) -> None:
    if hasattr(signal, "alarm"):
        signal.alarm(seconds)


if __name__ == "__main__":
    serve()
