"""Every document a file holds: the file itself, and the members of archives and mail in it.

    >>> for document in extract_tree(Path("mail.mbox"), data):
    ...     document.inner, document.error      # ("message-1.eml",) None, ..., then () None

Members come depth first, each before the container that holds it, and the file
itself last: a caller that stores them in that order has stored all of a container
once its own record is there. One `Budget` covers the whole tree, so the limits on
members, unpacked bytes, text and time hold for an archive and everything inside it
together; containers nested deeper than `max_depth` are not opened.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from engine.config import ExtractLimits
from engine.errors import BabelfindError, CorruptDocumentError, DocumentTooLargeError, ExtractionError, NotIndexedError
from engine.extract.base import ExtractedText
from engine.extract.dispatch import OUT_OF_MEMORY, choose_format, run_guarded, short_error
from engine.extract.limits import Budget
from engine.extract.archive_file import archive_members
from engine.extract.email_file import email_members
from engine.extract.members import CONTAINER_FORMATS, PURE_CONTAINERS, Member, member_path

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TreeDocument:
    """One document of a file: the file itself (`inner == ()`) or a member inside it.

    Attributes:
        inner: member names from the file down to this document, e.g. ("a.zip", "b.pdf").
        extracted: its text, or None when it could not be read.
        error: why it could not be read (or, for an archive, why not all of it was).
        size: its size in bytes (unpacked, for a member).
        mtime: a member's own time (its archive entry's); None for the file itself.
    """

    inner: tuple[str, ...]
    extracted: ExtractedText | None
    error: ExtractionError | None
    size: int
    mtime: float | None = None


def iter_members(fmt: str, path: Path, data: bytes, budget: Budget) -> Iterator[Member]:
    """The members of container `data` (format `fmt`, one of CONTAINER_FORMATS), in order.

    Each counts against the budget's member and unpacked-size limits before it is
    unpacked, so a zip bomb or a mailbox of a million messages stops at the limit.
    """
    if fmt in ("zip", "tar", "compressed"):
        return archive_members(fmt, path, data, budget)
    return email_members(fmt, path, data, budget)


def choose_format_guarded(path: Path, data: bytes) -> str:
    try:
        return choose_format(path, data)
    except BabelfindError:
        raise
    except MemoryError as e:
        raise DocumentTooLargeError(path, OUT_OF_MEMORY) from e
    except Exception as e:  # noqa: BLE001 -- sniffing opens zip directories of any quality
        log.info("%s: sniffing the format failed", path, exc_info=True)
        raise CorruptDocumentError(path, f"damaged or unreadable file ({short_error(e)})") from e


def no_text_error(path: Path, fmt: str) -> ExtractionError:
    if fmt == "pdf":
        return ExtractionError(path, "no text layer (scanned PDF?)")
    return ExtractionError(path, "document has no text")


@dataclass(frozen=True)
class SkipBelow:
    """A `skip` for extract_tree that can cross to the reading child process: True for
    the members whose stored keys (`member_key(container, inner)`) are, or lie below, one
    of `excluded` (the folders and members the user left out)."""

    container: str
    excluded: tuple[str, ...]

    def __call__(self, inner: tuple[str, ...]) -> bool:
        from engine.scan import is_excluded, member_key

        return is_excluded(member_key(self.container, inner), self.excluded)


def extract_tree(path: Path, data: bytes, *, limits: ExtractLimits | None = None,
                 skip: Callable[[tuple[str, ...]], bool] | None = None) -> Iterator[TreeDocument]:
    """The documents of the file at `path` whose bytes are `data`, members first.

    `skip(inner)` True leaves a member (and what it holds) out: one the user forgot.
    """
    budget = Budget.start(path, limits)
    yield from _documents(Path(path), data, (), None, budget, skip or (lambda _inner: False))


def _documents(path: Path, data: bytes, inner: tuple[str, ...], mtime: float | None, budget: Budget,
               skip: Callable[[tuple[str, ...]], bool]) -> Iterator[TreeDocument]:
    try:
        if not data:
            raise ExtractionError(path, "file is empty")
        fmt = choose_format_guarded(path, data)
        extracted = run_guarded(path, data, fmt, budget)
    except ExtractionError as e:
        yield TreeDocument(inner, None, e, len(data), mtime)
        return
    error = None
    if fmt in CONTAINER_FORMATS:
        if len(inner) >= budget.limits.max_depth:
            log.info("%s: nested %d containers deep; its members are not read", path, len(inner))
        else:
            error = yield from _members(path, data, fmt, inner, budget, skip)
    if error is not None and fmt not in PURE_CONTAINERS:
        log.warning("%s: not every attachment was read: %s", path, error.reason)
        error = None  # the message itself is read; what it holds was cut short
    if error is None and not extracted.text and fmt not in PURE_CONTAINERS:
        error = no_text_error(path, fmt)
    yield TreeDocument(inner, None if error and fmt not in PURE_CONTAINERS else extracted, error, len(data), mtime)


def _members(path: Path, data: bytes, fmt: str, inner: tuple[str, ...], budget: Budget,
             skip: Callable[[tuple[str, ...]], bool]):
    """Yields the members' documents; returns the error that stopped the container, if any."""
    read = 0
    try:
        for member in iter_members(fmt, path, data, budget):
            read += 1
            names = (*inner, member.name)
            if skip(names):
                continue
            yield from _member_documents(path, member, names, budget, skip)
    except ExtractionError as e:
        if read:
            e.reason = f"{e.reason} (after {read:,} members)"
        return e
    return None


def _member_documents(path: Path, member: Member, names: tuple[str, ...], budget: Budget,
                      skip: Callable[[tuple[str, ...]], bool]) -> Iterator[TreeDocument]:
    if member.error is not None:
        yield TreeDocument(names, None, member.error, len(member.data), member.mtime)
        return
    yield from _documents(member_path(path, member.name), member.data, names, member.mtime, budget, skip)


def open_member(path: Path, data: bytes, inner: tuple[str, ...], *, limits: ExtractLimits | None = None) -> bytes:
    """The bytes of the member `inner` (names from the outside in) of the file at `path`.

    Example: open_member(Path("a.zip"), data, ("docs.tar.gz", "docs/manual.pdf"))[:5] == b"%PDF-"

    Raises:
        NotIndexedError: no such member (the file changed since it was indexed).
        ExtractionError: the container cannot be read any more.
    """
    budget = Budget.start(path, limits)
    for name in inner:
        fmt = choose_format_guarded(path, data)
        if fmt not in CONTAINER_FORMATS:
            raise NotIndexedError(member_path(path, name))
        found = next((m for m in iter_members(fmt, path, data, budget) if m.name == name), None)
        if found is None:
            raise NotIndexedError(member_path(path, name))
        if found.error is not None:
            raise found.error
        path, data = member_path(path, name), found.data
    return data
