"""Babelfind's files are the user's alone, whatever the umask: folders 0700, files 0600.

    >>> private_folder(paths.indexes)          # made (or tightened) owner-only
    >>> private_file(home / "babelfind.db")    # created 0600 before SQLite opens it

The database and the keyword index hold the text of every indexed passage, the log names
documents, and under the common umask 022 SQLite and logging would create them readable
by every user of the machine. Files are created with the mode already (no moment of being
readable) and existing ones, from earlier versions, are tightened. SQLite gives its -wal,
-shm and -journal files the mode of their database. Only what belongs to this user is
changed; on Windows, where modes mean little, nothing is.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

FOLDER_MODE = 0o700
FILE_MODE = 0o600
_POSIX = os.name == "posix"


def private_folder(path: Path) -> Path:
    """Creates `path` (and missing parents, which keep the umask's mode) owner-only,
    or takes group and other access away from an existing folder of ours."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True, mode=FOLDER_MODE)
    _tighten(path, FOLDER_MODE)
    return path


_homes_tightened: set[Path] = set()


def private_home(home: Path) -> Path:
    """The home folder owner-only; once per process, also the files an earlier version
    left readable in it (the database, side files, logs). Models sit in a private folder."""
    private_folder(home)
    if home not in _homes_tightened:
        _homes_tightened.add(home)
        for folder in (home, home / "indexes", home / "logs", home / "models"):
            if folder.is_dir() and not folder.is_symlink():
                _tighten(folder, FOLDER_MODE)
                for entry in os.scandir(folder):
                    if entry.is_file(follow_symlinks=False):
                        _tighten(Path(entry.path), FILE_MODE)
    return home


def private_file(path: Path) -> Path:
    """Creates an empty `path` with mode 0600 if there is none, else tightens it to 0600.

    For files another library creates (SQLite, logging): made first, they keep the mode.
    """
    path = Path(path)
    if _POSIX:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
        except FileExistsError:
            _tighten(path, FILE_MODE)
        else:
            os.close(fd)
    return path


def open_private(path: Path, mode: str = "a", encoding: str | None = "utf-8", errors: str | None = None):
    """`open(path, mode)` for writing, a new file created 0600 (an existing one is tightened)."""
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    flags |= os.O_APPEND if "a" in mode else os.O_TRUNC
    fd = os.open(path, flags, FILE_MODE)
    try:
        _tighten(path, FILE_MODE)
        if "b" in mode:
            return os.fdopen(fd, mode)
        return os.fdopen(fd, mode, encoding=encoding, errors=errors)
    except BaseException:
        os.close(fd)
        raise


def make_tree_private(folder: Path) -> None:
    """Every folder under `folder` (itself included) 0700 and every file 0600; links are
    not followed. For trees written by libraries that take the umask (a model install,
    a training run)."""
    if not _POSIX:
        return
    for root, folders, files in os.walk(folder):
        _tighten(Path(root), FOLDER_MODE)
        for name in files:
            _tighten(Path(root) / name, FILE_MODE)


def _tighten(path: Path, mode: int) -> None:
    """Takes away group/other bits beyond `mode` from a file or folder this user owns."""
    if not _POSIX:
        return
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode) or info.st_uid != os.getuid():
        return
    current = stat.S_IMODE(info.st_mode)
    wanted = current & mode
    if wanted != current:
        os.chmod(path, wanted)
