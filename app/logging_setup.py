"""Where log records, Python warnings and third-party chatter go: BABELFIND_HOME/logs/.

    >>> with logging_to_file(data_paths().home, verbose=False) as log_path:
    ...     run_the_command()      # warnings and library logs land in log_path, not the terminal

The terminal keeps what a person needs: progress bars and our own one-line errors, which
the front ends print themselves. `--verbose` (or BABELFIND_VERBOSE=1) mirrors the log on
stderr. No Qt here; app/gui/common/qt_logging.py routes Qt's messages into the same log.
"""

from __future__ import annotations

import logging
import os
import sys
from contextlib import contextmanager
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Callable, Iterator

from engine.private import open_private, private_folder

LOG_FILE = "babelfind.log"
MAX_LOG_BYTES = 1_000_000  # per file; with the backups the logs stay under 4 MB
LOG_BACKUPS = 3
VERBOSE_ENV = "BABELFIND_VERBOSE"
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# ONNX Runtime's C++ severities: 2 warning, 3 error. Its warnings (e.g. about unused
# initialisers) mean nothing to a user, and C++ output cannot be sent to the log file.
ORT_QUIET, ORT_VERBOSE = 3, 2

# Undo steps for changes made to other libraries while a logging_to_file block runs.
_restore: list[Callable[[], None]] = []
# verbose: the running block also shows the log on stderr; active: a block is running;
# transformers: its logs are routed (once, however often route_transformers_logs is called)
_state = {"verbose": False, "active": False, "transformers": False}


def log_path(home: Path) -> Path:
    """The current log file: log_path(Path("~/.babelfind")) -> ~/.babelfind/logs/babelfind.log."""
    return Path(home) / "logs" / LOG_FILE


def verbose_requested(flag: bool = False) -> bool:
    """True when --verbose was given or BABELFIND_VERBOSE is set to a true value."""
    return flag or os.environ.get(VERBOSE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


@contextmanager
def logging_to_file(home: Path, verbose: bool = False) -> Iterator[Path | None]:
    """Sends every log record and Python warning to a rotating file under `home` while it runs.

    Yields the log file's path, or None when it cannot be written (a read-only home): then
    records go to stderr as Python's default would, rather than nowhere.
    """
    handlers = _make_handlers(home, verbose)
    _state["verbose"] = any(type(h) is logging.StreamHandler for h in handlers)
    _state["active"] = True
    root = logging.getLogger()
    saved_level = root.level
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(logging.INFO)
    logging.captureWarnings(True)  # warnings.warn(...) becomes a record of "py.warnings"
    if "transformers" in sys.modules:  # imported already: its own stderr handler is in place
        route_transformers_logs()
    try:
        yield log_path(home) if any(isinstance(h, RotatingFileHandler) for h in handlers) else None
    finally:
        logging.captureWarnings(False)
        while _restore:
            _restore.pop()()
        for handler in handlers:
            root.removeHandler(handler)
            handler.close()
        root.setLevel(saved_level)
        _state["verbose"] = _state["active"] = False


def _make_handlers(home: Path, verbose: bool) -> list[logging.Handler]:
    formatter = logging.Formatter(LOG_FORMAT)
    handlers: list[logging.Handler] = []
    path = log_path(home)
    try:
        private_folder(path.parent)
        # backslashreplace: file names that are not UTF-8 must be logged, not crash the handler
        handlers.append(_PrivateRotatingFileHandler(path, maxBytes=MAX_LOG_BYTES, backupCount=LOG_BACKUPS,
                                                    encoding="utf-8", errors="backslashreplace"))
    except OSError:
        verbose = True  # nowhere else to put them
    if verbose:
        handlers.append(logging.StreamHandler(sys.stderr))
    for handler in handlers:
        handler.setFormatter(formatter)
    if not verbose:  # (verbose shows them with the rest of the log)
        handlers.append(_repair_notes())
    return handlers


class _RepairNotes(logging.StreamHandler):
    """One line on stderr for each cache that healed itself (engine.repairs); not the log."""


def _repair_notes() -> logging.Handler:
    from engine.repairs import REPAIR_LOGGER

    handler = _RepairNotes(sys.stderr)
    handler.addFilter(lambda record: record.name == REPAIR_LOGGER)
    handler.setFormatter(_OneLine("babelfind: note: %(message)s"))
    return handler


class _OneLine(logging.Formatter):
    """A record as one line a terminal shows as it is (app.printable)."""

    def format(self, record: logging.LogRecord) -> str:
        from app.printable import printable

        return printable(super().format(record))


class _PrivateRotatingFileHandler(RotatingFileHandler):
    """Log files created 0600 whatever the umask: the log names the user's documents."""

    def _open(self):
        return open_private(Path(self.baseFilename), self.mode, encoding=self.encoding, errors=self.errors)


def is_verbose() -> bool:
    """Whether the running logging_to_file block also shows the log on stderr."""
    return _state["verbose"]


def quiet_onnxruntime() -> None:
    """Raises ONNX Runtime's C++ log threshold to errors (warnings with --verbose).

    Call before the first session is made; it imports onnxruntime, which loading a
    model does anyway.
    """
    try:
        import onnxruntime
    except ImportError:
        return
    onnxruntime.set_default_logger_severity(ORT_VERBOSE if is_verbose() else ORT_QUIET)


def route_transformers_logs() -> None:
    """Sends transformers' messages (its load report, advice) to the log, and hides its bars.

    transformers writes to stderr through a handler of its own and draws progress bars
    while loading weights; during a model install the user sees our one bar instead.
    Costs about a second (it imports transformers), so only installs and training call it.
    Inside a logging_to_file block the change is undone when the block ends; outside one
    it stays (a worker thread may call it while the block runs in the main thread).
    """
    if _state["transformers"]:
        return
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        return
    _state["transformers"] = True
    bars_were_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_default_handler()
    hf_logging.enable_propagation()
    hf_logging.disable_progress_bar()

    def restore() -> None:
        hf_logging.disable_propagation()
        hf_logging.enable_default_handler()
        if bars_were_on:
            hf_logging.enable_progress_bar()
        _state["transformers"] = False

    if _state["active"]:
        _restore.append(restore)
