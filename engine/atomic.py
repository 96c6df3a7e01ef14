"""Replacing a file so that a crash or another process never sees half of it.

    with atomic_file(path) as f:       # a temp file beside `path`, renamed over it at the end
        f.write(payload)

Several processes may save the same file at once (the window and the command line open
one library; two first starts on a fresh home both build the vector file). Each writer
therefore gets a temp file of its own name (`tempfile.mkstemp`), never a fixed
"path.tmp" two writers would share, and the last `os.replace` wins with a complete file.
A temp file a killed writer left behind is removed by a later save, but only once it has
not been written for STALE_TEMP_S: a live writer's temp is modified as it streams.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

# A temp file untouched this long belongs to a writer that died: a live save of even a
# multi-GB index writes to it continuously.
STALE_TEMP_S = 15 * 60


@contextmanager
def atomic_file(path: Path, mode: str = "wb", encoding: str | None = None) -> Iterator[IO]:
    """A file to write `path`'s new content into; fsynced and renamed over `path` on success.

    Example: with atomic_file(settings, "w", encoding="utf-8") as f: json.dump(data, f)

    On an exception the temp file is removed and `path` keeps its old content.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(path)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, mode, encoding=encoding) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_directory(path.parent)


def remove_stale_temps(path: Path, older_than_s: float = STALE_TEMP_S) -> None:
    """Deletes the temp files of `path` that crashed writers left (not written for a while)."""
    cutoff = time.time() - older_than_s
    for stale in Path(path).parent.glob(f".{Path(path).name}.*.tmp"):
        try:
            if stale.stat().st_mtime < cutoff:
                stale.unlink(missing_ok=True)
        except FileNotFoundError:  # its writer renamed or removed it meanwhile
            continue


def fsync_directory(directory: Path) -> None:
    """Makes a rename itself durable; directories cannot be opened on Windows."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
