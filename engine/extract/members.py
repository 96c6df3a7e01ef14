"""Files inside files: archive members, e-mail attachments, the messages of a mailbox.

    >>> names = MemberNames()
    >>> names.add("../docs\\report.pdf", "member-1")      # "docs/report.pdf"

A member is named by its path inside its container, "/"-separated, as the container
lists it but made safe: no empty, "." or ".." parts, backslashes read as separators, no
control characters, and a second member of the same name becomes "name (2).ext". The
index stores it below its container, `archive.zip/inside/report.pdf`, so a `path:`
filter, "forget" and the folder view treat a container like a folder
(docs/formats.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from engine.errors import ExtractionError

# Formats whose content is other documents; the tree walk asks them for members.
CONTAINER_FORMATS = frozenset({"zip", "tar", "compressed", "mbox", "eml", "msg"})
# Containers with no text of their own (a message has its own text, its attachments too).
PURE_CONTAINERS = frozenset({"zip", "tar", "compressed", "mbox"})
_UNSAFE = re.compile(r"[\x00-\x1f\x7f]")
MAX_NAME_CHARS = 255


@dataclass(frozen=True)
class Member:
    """One file inside a container, unpacked but not read yet.

    `error` is set instead of `data` when the member cannot be unpacked on its own
    (a password-protected zip member): the rest of the container is still read.
    """

    name: str
    data: bytes
    mtime: float | None = None
    error: ExtractionError | None = None


class MemberNames:
    """Safe, unique member names for one container, in the order its members come."""

    def __init__(self):
        self._taken: set[str] = set()

    def add(self, raw: str, fallback: str) -> str:
        """The name under which member `raw` is stored; `fallback` when nothing of it is usable.

        Example: names.add("../etc//passwd", "member-1") == "etc/passwd"; a second
        "a.txt" becomes "a (2).txt".
        """
        parts = [_UNSAFE.sub("", p).strip() for p in raw.replace("\\", "/").split("/")]
        parts = [p[:MAX_NAME_CHARS] for p in parts if p and p not in (".", "..")]
        name = "/".join(parts) or fallback
        if name in self._taken:
            stem, suffix = _split_suffix(name)
            number = 2
            while f"{stem} ({number}){suffix}" in self._taken:
                number += 1
            name = f"{stem} ({number}){suffix}"
        self._taken.add(name)
        return name


def _split_suffix(name: str) -> tuple[str, str]:
    suffix = PurePosixPath(name).suffix
    return (name[: -len(suffix)], suffix) if suffix else (name, "")


def member_path(container: Path, name: str) -> Path:
    """The path a member's errors and extractors are told: the container's, then the name."""
    return Path(container, *name.split("/"))
