"""Document text extraction: one entry point, one small module per format.

Example:
    >>> extracted = extract(Path("notes/bees.md"))
    >>> extracted.format, extracted.title, page_of(extracted, 120)
    ('md', 'Keeping bees', None)

The format is chosen by content first (a PDF named `.txt` is read as a PDF) and by
extension among the text formats (engine.extract.dispatch); a file whose extension
names no format (`LICENSE`, `corpus.de`) is read as text when its content is text.
Every failure is a typed `ExtractionError` subclass whose `reason` is a short sentence
for the user, whatever the parsing library raised; every document is read under
`ExtractLimits` (size, unpacked size, pages, cells, time). Archives and e-mail hold
other documents: `extract_tree` gives each of them (docs/formats.md).
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

from engine.config import ExtractLimits
from engine.errors import ExtractionError
from engine.extract.base import FORMATS, ExtractedText, page_name, page_of
from engine.extract.dispatch import EXTENSION_FORMATS, OUT_OF_MEMORY, extension_format, run_guarded, short_error, unsupported_reason
from engine.extract.limits import Budget
from engine.extract.members import PURE_CONTAINERS
from engine.extract.sniff import sniff_format
from engine.extract.tree import SkipBelow, TreeDocument, choose_format_guarded, extract_tree, no_text_error, open_member
from engine.safe_open import read_regular

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DOCUMENT_EXTENSIONS",
    "FORMATS",
    "OUT_OF_MEMORY",
    "SUPPORTED_EXTENSIONS",
    "SkipBelow",
    "ExtractLimits",
    "ExtractedText",
    "TreeDocument",
    "extension_format",
    "extract",
    "extract_data",
    "extract_tree",
    "open_member",
    "page_name",
    "page_of",
    "short_error",
    "sniff_format",
    "unsupported_reason",
]

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = ExtractLimits().max_file_bytes
SUPPORTED_EXTENSIONS = frozenset(EXTENSION_FORMATS)
# Extensions read as one document each, without OCR: what a training corpus or a
# bitext reads from a folder (archives and mailboxes hold many; images need OCR).
DOCUMENT_EXTENSIONS = frozenset(ext for ext, fmt in EXTENSION_FORMATS.items()
                                if fmt not in PURE_CONTAINERS and fmt != "image")


def extract(path: Path, *, max_bytes: int | None = None, limits: ExtractLimits | None = None) -> ExtractedText:
    """Normalised text of the document at `path`.

    Example: extract(Path("report.pdf")).page_starts == (0, 1843, 3920)

    Args:
        path: the document; only a regular file is opened (see engine.safe_open).
        max_bytes: overrides `limits.max_file_bytes`.
        limits: bounds on size, unpacked size, pages and time (ExtractLimits defaults).

    Raises:
        UnsupportedFormatError: neither extension nor content names a format we read.
        EncryptedDocumentError: the document needs a password (or is DRM protected).
        CorruptDocumentError: the content is damaged, truncated or not what the name says.
        DocumentTooLargeError: the file, or what it unpacks to, is over a limit.
        ExtractionTimeoutError: reading it took longer than `limits.max_seconds`.
        NotRegularFileError: a folder, FIFO or device.
        ExtractionError: unreadable path, vanished file, empty document, binary junk.
    """
    path = Path(path)
    limits = limits or ExtractLimits()
    if max_bytes is not None:
        limits = dataclasses.replace(limits, max_file_bytes=max_bytes)
    return extract_data(path, read_regular(path, limits.max_file_bytes), limits=limits)


def extract_data(path: Path, data: bytes, *, limits: ExtractLimits | None = None) -> ExtractedText:
    """`extract` for bytes already read from `path` (the indexer hashes the same bytes).

    Example: extract_data(Path("a.md"), b"# Bees").title == "Bees"
    """
    path = Path(path)
    if not data:
        raise ExtractionError(path, "file is empty")
    budget = Budget.start(path, limits)
    fmt = choose_format_guarded(path, data)
    if fmt in PURE_CONTAINERS:
        raise ExtractionError(path, f"a {fmt} archive or mailbox: its members are read one by one")
    extracted = run_guarded(path, data, fmt, budget)
    if not extracted.text:
        raise no_text_error(path, fmt)
    log.debug("%s: %d characters of %s", path, len(extracted.text), fmt)
    return extracted
