"""Finding the files to index: recursive, skips hidden and system folders, never loops.

    >>> for path in scan_files(Path("~/Documents").expanduser(), {".txt", ".pdf"}): ...
"""

from __future__ import annotations

import logging
import os
from collections.abc import Collection, Iterator
from pathlib import Path

log = logging.getLogger(__name__)

# Folders no person means to search: version control, caches, OS bookkeeping.
SYSTEM_DIRS = frozenset(
    {
        "__pycache__",
        "node_modules",
        "$RECYCLE.BIN",
        "System Volume Information",
        "lost+found",
        "site-packages",
        ".venv",
        "venv",
    }
)


def is_hidden(name: str) -> bool:
    return name.startswith(".") or name.startswith("~$")  # ~$ are Office lock files


def scan_files(root: Path, extensions: Collection[str] | None = None,
               exclude: Collection[str] = ()) -> Iterator[Path]:
    """Yields files under `root` (or `root` itself) whose suffix is in `extensions`.

    Example: list(scan_files(Path("corpus"), exclude={"/home/me/corpus/mining"}))

    `extensions=None` yields every regular file (the indexer then judges each by its
    content). Files and folders whose `path_key` is in `exclude` are passed by.
    Symbolic links to folders are followed once: a folder already visited (same device
    and inode) is skipped, so link cycles end. Unreadable folders are skipped with a
    log line; the scan goes on.
    """
    exclude = frozenset(exclude)
    if path_key(root) in exclude:
        return
    if root.is_file():
        if extensions is None or root.suffix.lower() in extensions:
            yield root
        return
    visited: set[tuple[int, int]] = set()
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            info = folder.stat()
        except OSError as e:
            log.warning("cannot read folder %s: %s", folder, e)
            continue
        key = (info.st_dev, info.st_ino)
        if key in visited:
            continue
        visited.add(key)
        yield from _scan_folder(folder, extensions, exclude, stack)


def _scan_folder(folder: Path, extensions: Collection[str] | None, exclude: frozenset[str],
                 stack: list[Path]) -> Iterator[Path]:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as e:
        log.warning("cannot list folder %s: %s", folder, e)
        return
    subfolders = []
    for entry in entries:
        if is_hidden(entry.name) or (exclude and path_key(Path(entry.path)) in exclude):
            continue
        try:
            if entry.is_dir():  # follows links; cycles are caught by `visited`
                if entry.name not in SYSTEM_DIRS:
                    subfolders.append(Path(entry.path))
            elif entry.is_file() and (extensions is None or Path(entry.name).suffix.lower() in extensions):
                yield Path(entry.path)
        except OSError as e:  # a dangling link or a vanished entry
            log.debug("skipping %s: %s", entry.path, e)
    stack.extend(reversed(subfolders))


def path_key(path: Path) -> str:
    """The text stored for a path; file names that are not valid UTF-8 get escapes.

    Linux allows any bytes in names; the database needs text. Such names are stored
    with backslash escapes, which is stable from scan to scan.
    """
    text = str(path)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return os.fsencode(path).decode("utf-8", "backslashreplace")
