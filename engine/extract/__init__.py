"""Document text extraction: one entry point, one small module per format.

Example:
    >>> extracted = extract(Path("notes/bees.md"))
    >>> extracted.format, extracted.title, page_of(extracted, 120)
    ('md', 'Keeping bees', None)

The format is chosen by content first (a PDF named `.txt` is read as a PDF) and by
extension among the plain-text formats; a file whose extension names no format
(`LICENSE`, `corpus.de`) is read as text when its content is text. Every failure is a typed `ExtractionError`
subclass whose `reason` is a short sentence for the user.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from pathlib import Path

from engine.errors import (
    CorruptDocumentError,
    DocumentTooLargeError,
    ExtractionError,
    UnsupportedFormatError,
)
from engine.extract.base import FORMATS, ExtractedText, page_of
from engine.extract.sniff import OLE_MAGIC, ZIP_MAGIC, sniff_bytes, sniff_format
from engine.extract.text_file import BINARY_REASON

__all__ = [
    "DEFAULT_MAX_BYTES",
    "FORMATS",
    "SUPPORTED_EXTENSIONS",
    "ExtractedText",
    "extract",
    "page_of",
    "sniff_format",
]

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
EXTENSION_FORMATS = {
    ".txt": "txt", ".text": "txt", ".md": "md", ".markdown": "md", ".rst": "rst",
    ".csv": "csv", ".html": "html", ".htm": "html", ".xhtml": "html", ".pdf": "pdf",
    ".docx": "docx", ".odt": "odt", ".epub": "epub", ".po": "po", ".pot": "po",
}
SUPPORTED_EXTENSIONS = frozenset(EXTENSION_FORMATS)
TEXT_FORMATS = frozenset({"txt", "md", "rst", "csv"})
CONTAINER_FORMATS = frozenset({"pdf", "docx", "odt", "epub"})


def _read_bytes(path: Path, max_bytes: int) -> bytes:
    """The whole file, after checking it is a regular file of acceptable size."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            # Opening a FIFO would block forever; a directory cannot be read.
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise ExtractionError(path, f"cannot read: {kind}")
        if info.st_size > max_bytes:
            raise DocumentTooLargeError(path, f"file is {_human_size(info.st_size)}, over the {_human_size(max_bytes)} limit")
        with path.open("rb") as f:
            data = f.read(max_bytes + 1)
    except FileNotFoundError as e:
        raise ExtractionError(path, "file not found (moved or deleted?)") from e
    except PermissionError as e:
        raise ExtractionError(path, "permission denied") from e
    except OSError as e:
        raise ExtractionError(path, f"cannot read: {os.strerror(e.errno or errno.EIO)}") from e
    if len(data) > max_bytes:  # it grew after stat
        raise DocumentTooLargeError(path, f"file is over the {_human_size(max_bytes)} limit")
    if not data:
        raise ExtractionError(path, "file is empty")
    return data


def _human_size(size: int) -> str:
    """Example: _human_size(5000) == "4.9 KiB"."""
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MiB"
    return f"{size / 1024:.1f} KiB"


def _choose_format(path: Path, data: bytes) -> str:
    """Content decides between containers; the extension decides among text formats."""
    by_extension = EXTENSION_FORMATS.get(path.suffix.lower())
    by_content = sniff_bytes(data)
    if by_content in CONTAINER_FORMATS:
        return by_content
    if by_extension == "pdf":
        raise CorruptDocumentError(path, "not a valid PDF file (no %PDF header)")
    if by_extension in CONTAINER_FORMATS:
        if not data.startswith((ZIP_MAGIC, OLE_MAGIC)):
            raise CorruptDocumentError(path, f"not a valid {by_extension.upper()} file (not a zip archive)")
        return by_extension  # its extractor explains what is wrong with the archive
    if by_extension is None:
        return _sniffed_format(path, by_content)
    if by_content is None:
        raise ExtractionError(path, BINARY_REASON)
    if by_content == "html" and by_extension == "txt":
        return "html"
    return by_extension


def _sniffed_format(path: Path, by_content: str | None) -> str:
    """A file whose name says nothing we know (LICENSE, corpus.de): text content is read as text."""
    if by_content in ("txt", "html"):
        return by_content
    raise UnsupportedFormatError(path, unsupported_reason(path))


def unsupported_reason(path: Path) -> str:
    """Why a file with an unknown extension and no text content is not read.

    Example: unsupported_reason(Path("messages.mo")) == "not a supported format: .mo"
    """
    if Path(path).suffix:
        return f"not a supported format: {Path(path).suffix.lower()}"
    return "not a supported format: binary content, no extension"


def _run_extractor(path: Path, data: bytes, fmt: str) -> ExtractedText:
    # Imported on use: each pulls in its own parsing library.
    if fmt in TEXT_FORMATS:
        from engine.extract.text_file import extract_text_file

        return extract_text_file(path, data, fmt)
    if fmt == "po":
        from engine.extract.po_file import extract_po_file

        return extract_po_file(path, data)
    if fmt == "html":
        from engine.extract.html_file import extract_html_file

        return extract_html_file(path, data)
    if fmt == "pdf":
        from engine.extract.pdf_file import extract_pdf

        return extract_pdf(path, data)
    if fmt == "docx":
        from engine.extract.docx_file import extract_docx

        return extract_docx(path, data)
    if fmt == "odt":
        from engine.extract.odt_file import extract_odt

        return extract_odt(path, data)
    from engine.extract.epub_file import extract_epub

    return extract_epub(path, data)


def extract(path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> ExtractedText:
    """Normalised text of the document at `path`.

    Example: extract(Path("report.pdf")).page_starts == (0, 1843, 3920)

    Raises:
        UnsupportedFormatError: neither extension nor content names a format we read.
        EncryptedDocumentError: the document needs a password (or is DRM protected).
        CorruptDocumentError: the content is damaged, truncated or not what the name says.
        DocumentTooLargeError: the file is larger than `max_bytes`.
        ExtractionError: unreadable path, vanished file, empty document, binary junk.
    """
    path = Path(path)
    data = _read_bytes(path, max_bytes)
    fmt = _choose_format(path, data)
    extracted = _run_extractor(path, data, fmt)
    if not extracted.text:
        if fmt == "pdf":
            raise ExtractionError(path, "no text layer (scanned PDF?)")
        raise ExtractionError(path, "document has no text")
    log.debug("%s: %d characters of %s", path, len(extracted.text), fmt)
    return extracted
