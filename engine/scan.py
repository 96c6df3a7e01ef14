"""Finding the files to index: recursive, skips hidden and system folders, never loops.

    >>> for path in scan_files(Path("~/Documents").expanduser(), {".txt", ".pdf"}): ...
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Collection, Iterator
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


def user_path(path: str | Path) -> Path:
    """`path` with a leading ~ or ~user expanded, as a shell would.

    Example: user_path("~/Papers") == Path.home() / "Papers"

    Raises:
        InputError: ~user names no user of this machine (Path.expanduser's RuntimeError).
    """
    try:
        return Path(path).expanduser()
    except RuntimeError as e:
        from engine.errors import InputError

        user = str(path)[1:].replace("\\", "/").split("/", 1)[0]
        raise InputError(f"{path}: there is no user '{user}' on this machine for ~{user}") from e


def is_hidden(name: str) -> bool:
    return name.startswith(".") or name.startswith("~$")  # ~$ are Office lock files


def scan_files(root: Path, extensions: Collection[str] | None = None,
               exclude: Collection[str] = (),
               unreadable: Callable[[Path, OSError], None] | None = None) -> Iterator[Path]:
    """Yields files under `root` (or `root` itself) whose suffix is in `extensions`.

    Example: list(scan_files(Path("corpus"), exclude={"/home/me/corpus/mining"}))

    `extensions=None` yields every entry that is not a folder, regular or not (the indexer
    judges each by its content, and says why a FIFO, a device or a broken link is not read). Files and folders whose `path_key` is in `exclude` are passed by.
    Symbolic links to folders are followed once: a folder already visited (same device
    and inode) is skipped, so link cycles end. Unreadable folders are skipped with a
    log line, and passed to `unreadable` (to be reported); the scan goes on.
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
            if unreadable is not None:
                unreadable(folder, e)
            continue
        key = (info.st_dev, info.st_ino)
        if key in visited:
            continue
        visited.add(key)
        yield from _scan_folder(folder, extensions, exclude, stack, unreadable)


def _scan_folder(folder: Path, extensions: Collection[str] | None, exclude: frozenset[str],
                 stack: list[Path], unreadable: Callable[[Path, OSError], None] | None) -> Iterator[Path]:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as e:
        log.warning("cannot list folder %s: %s", folder, e)
        if unreadable is not None:
            unreadable(folder, e)
        return
    subfolders = []
    for entry in entries:
        if is_hidden(entry.name) or (exclude and path_key(Path(entry.path)) in exclude):
            continue
        try:
            if entry.is_dir():  # follows links; cycles are caught by `visited`
                if entry.name not in SYSTEM_DIRS:
                    subfolders.append(Path(entry.path))
            elif entry.is_file():
                if extensions is None or Path(entry.name).suffix.lower() in extensions:
                    yield Path(entry.path)
            elif extensions is None:  # a FIFO, device, socket or broken link: the indexer lists why
                yield Path(entry.path)
        except OSError as e:  # a dangling link or a vanished entry
            log.debug("skipping %s: %s", entry.path, e)
    stack.extend(reversed(subfolders))


# Lone surrogates: on POSIX, os.fsdecode turns each byte of a name that is not UTF-8
# into U+DC80..U+DCFF; a database cannot store them as text.
_SURROGATE = "\ud800-\udfff"
_ESCAPE_POSIX = re.compile(f"\\\\(?=[\\\\xu{_SURROGATE}])|[{_SURROGATE}]")
_UNESCAPE_POSIX = re.compile(r"\\(\\|x[89a-f][0-9a-f]|ud[89a-f][0-9a-f]{2})")
# Windows forbids "*" in file names, so it can introduce an escape there.
_UNESCAPE_WINDOWS = re.compile(r"\*ud[89a-f][0-9a-f]{2}")


def _escape_surrogate(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def _escape_posix(match: re.Match) -> str:
    found = match.group()
    return "\\\\" if found == "\\" else _escape_surrogate(found)


def path_key(path: Path) -> str:
    r"""The text stored for a path: the path itself, unless its name is not valid Unicode.

    Example: path_key(Path(os.fsdecode(b"/notes/caf\xe9.txt"))) == r"/notes/caf\xe9.txt"

    Linux allows any bytes in names; the database needs text. A byte that is not UTF-8
    becomes `\xNN`, and a backslash that could be read as the start of such an escape
    (followed by another backslash, `x`, `u` or an escaped byte) is doubled, so two
    different names never share a key (a file literally named `caf\xe9.txt` and the
    bytes caf<0xE9>.txt stay apart) and `key_path` gives the exact name back. Names in
    valid UTF-8 without such backslashes, nearly all of them, are stored unchanged, and
    a folder's key is a prefix of the keys of the files in it.
    """
    text = os.fspath(path)
    if os.name == "nt":  # names are UTF-16; only an unpaired surrogate needs an escape
        return re.sub(f"[{_SURROGATE}]", lambda m: f"*u{ord(m.group()):04x}", text)
    return _ESCAPE_POSIX.sub(_escape_posix, text)


def _unescape_posix(match: re.Match) -> str:
    found = match.group(1)
    if found == "\\":
        return "\\"
    if found.startswith("x"):
        return chr(0xDC00 + int(found[1:], 16))
    return chr(int(found[1:], 16))


def key_path(key: str) -> Path:
    """The path a stored key names: the inverse of `path_key`.

    Example: key_path(path_key(p)) == p
    """
    if os.name == "nt":
        return Path(_UNESCAPE_WINDOWS.sub(lambda m: chr(int(m.group()[2:], 16)), key))
    return Path(_UNESCAPE_POSIX.sub(_unescape_posix, key))


def is_below(path: str, folder: str) -> bool:
    return path.startswith(folder.rstrip("/") + "/")


def is_excluded(path: str, excluded: Collection[str]) -> bool:
    """True when `path` is one of `excluded` or lies below one.

    Example: is_excluded("/c/mining/a.txt", ["/c/mining"]) is True
    """
    return any(path == e or is_below(path, e) for e in excluded)


def member_key(container: str, inner: tuple[str, ...]) -> str:
    """The stored key of a document inside a file: the file's key, then "/" and each member name.

    Example: member_key("/mail/inbox.mbox", ("message-3.eml", "report.pdf")) ==
        "/mail/inbox.mbox/message-3.eml/report.pdf"

    A member's name keeps its folders inside the archive ("docs/manual.pdf"), so a key
    alone does not say where one container ends; the store's `parent` of each member
    does. Names are escaped like file names (`path_key`), so a tar member whose name is
    not UTF-8 has a key the database can hold.
    """
    if not inner:
        return container
    escape = (lambda name: path_key(Path(name))) if os.name != "nt" else (lambda name: name)
    return container.rstrip("/\\") + "/" + "/".join(escape(name) for name in inner)
