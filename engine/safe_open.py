"""The one way the engine opens a user's file: regular files only, never a hang.

    >>> with open_regular(Path("notes.txt")) as f:
    ...     head = f.read(4096)

A path that was a document at scan time can be a FIFO or a link to /dev/zero by the
time it is read. `open()` on a FIFO blocks until a writer appears, and /dev/zero never
ends, so every reader of documents (extraction, hashing, mining, `embed`, training
corpora) goes through here: the file is opened with O_NONBLOCK, so opening a FIFO
returns at once, and the *open descriptor* is checked with fstat, so nothing can be
swapped in between the check and the read.
"""

from __future__ import annotations

import errno
import io
import os
import stat
from pathlib import Path
from typing import BinaryIO

from engine.errors import DocumentTooLargeError, ExtractionError, NotRegularFileError

# O_NOCTTY: a terminal device must never become our controlling terminal.
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
_READ_BLOCK = 1 << 20


def os_error_reason(error: OSError) -> str:
    """A short reason for the user. Example: os_error_reason(PermissionError()) == "permission denied"."""
    if isinstance(error, FileNotFoundError):
        return "file not found (moved or deleted?)"
    if isinstance(error, PermissionError):
        return "permission denied"
    if isinstance(error, IsADirectoryError):
        return "cannot read: a folder"
    return f"cannot read: {os.strerror(error.errno or errno.EIO)}"


def _kind(mode: int) -> str:
    return "a folder" if stat.S_ISDIR(mode) else "not a regular file"


def special_file_reason(mode: int) -> str:
    """Why a file of this st_mode is not read. Example: "not a regular file: a named pipe (FIFO)"."""
    if stat.S_ISFIFO(mode):
        kind = "a named pipe (FIFO)"
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "a device"
    elif stat.S_ISSOCK(mode):
        kind = "a socket"
    else:
        kind = "a special file"
    return f"not a regular file: {kind}"


def open_regular(path: Path | str) -> BinaryIO:
    """The file at `path` opened for binary reading, after checking it is a regular file.

    Example: open_regular(Path("/dev/zero"))  # raises NotRegularFileError

    Raises:
        NotRegularFileError: a folder, FIFO, socket or device (also behind a link).
        ExtractionError: the file cannot be opened (missing, permission denied, ...).
    """
    path = Path(path)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as e:
        raise ExtractionError(path, os_error_reason(e)) from e
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(path, f"cannot read: {_kind(mode)}")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)  # no effect on regular files; plain semantics for readers
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def open_regular_text(path: Path | str, *, encoding: str = "utf-8", errors: str = "replace",
                      newline: str | None = None) -> io.TextIOWrapper:
    """`open_regular` for text: the same checks, decoded as `encoding`.

    Example: sum(1 for _ in open_regular_text(Path("corpus.txt")))
    """
    return io.TextIOWrapper(open_regular(path), encoding=encoding, errors=errors, newline=newline)


def read_regular(path: Path | str, max_bytes: int) -> bytes:
    """All bytes of the regular file at `path`, at most `max_bytes` of them.

    Example: read_regular(Path("notes.txt"), 64 << 20)[:5] == b"Notes"

    The size is checked on the open descriptor and again while reading, so a file that
    grows (or lies about its size, like a procfs file) is still cut at the limit.

    Raises:
        NotRegularFileError, ExtractionError: as `open_regular`, or a read fails.
        DocumentTooLargeError: the file is larger than `max_bytes`.
    """
    path = Path(path)
    with open_regular(path) as f:
        try:
            size = os.fstat(f.fileno()).st_size
            if size > max_bytes:
                raise DocumentTooLargeError(path, f"file is {human_size(size)}, over the {human_size(max_bytes)} limit")
            data = _read_at_most(f, max_bytes + 1)
        except OSError as e:
            raise ExtractionError(path, os_error_reason(e)) from e
    if len(data) > max_bytes:  # it grew after fstat
        raise DocumentTooLargeError(path, f"file is over the {human_size(max_bytes)} limit")
    return data


def _read_at_most(f: BinaryIO, limit: int) -> bytes:
    parts, left = [], limit
    while left > 0 and (block := f.read(min(left, _READ_BLOCK))):
        parts.append(block)
        left -= len(block)
    return b"".join(parts)


def human_size(size: int) -> str:
    """Example: human_size(5000) == "4.9 KiB"."""
    if size >= 1024**3:
        return f"{size / 1024**3:.1f} GiB"
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MiB"
    return f"{size / 1024:.1f} KiB"
