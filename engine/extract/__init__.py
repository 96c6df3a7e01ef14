"""Document text extraction: one entry point, one small module per format.

Example:
    >>> extracted = extract(Path("notes/bees.md"))
    >>> extracted.format, extracted.title, page_of(extracted, 120)
    ('md', 'Keeping bees', None)

The format is chosen by content first (a PDF named `.txt` is read as a PDF) and by
extension among the plain-text formats; a file whose extension names no format
(`LICENSE`, `corpus.de`) is read as text when its content is text. Every failure is a
typed `ExtractionError` subclass whose `reason` is a short sentence for the user, whatever
the parsing library raised; every document is read under `ExtractLimits` (size, unpacked
size, pages, time).
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

from engine.config import ExtractLimits
from engine.errors import (
    BabelfindError,
    CorruptDocumentError,
    DocumentTooLargeError,
    ExtractionError,
    UnsupportedFormatError,
)
from engine.extract.base import FORMATS, ExtractedText, page_of
from engine.extract.limits import Budget
from engine.extract.sniff import OLE_MAGIC, ZIP_MAGIC, sniff_bytes, sniff_format
from engine.extract.text_file import BINARY_REASON
from engine.safe_open import read_regular

__all__ = [
    "DEFAULT_MAX_BYTES",
    "FORMATS",
    "SUPPORTED_EXTENSIONS",
    "ExtractLimits",
    "ExtractedText",
    "extract",
    "extract_data",
    "page_of",
    "sniff_format",
]

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = ExtractLimits().max_file_bytes
OUT_OF_MEMORY = "too large to read: ran out of memory"
EXTENSION_FORMATS = {
    ".txt": "txt", ".text": "txt", ".md": "md", ".markdown": "md", ".rst": "rst",
    ".csv": "csv", ".html": "html", ".htm": "html", ".xhtml": "html", ".pdf": "pdf",
    ".docx": "docx", ".odt": "odt", ".epub": "epub", ".po": "po", ".pot": "po",
}
SUPPORTED_EXTENSIONS = frozenset(EXTENSION_FORMATS)
TEXT_FORMATS = frozenset({"txt", "md", "rst", "csv"})
CONTAINER_FORMATS = frozenset({"pdf", "docx", "odt", "epub"})


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


def _run_extractor(path: Path, data: bytes, fmt: str, budget: Budget) -> ExtractedText:
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

        return extract_pdf(path, data, budget)
    if fmt == "docx":
        from engine.extract.docx_file import extract_docx

        return extract_docx(path, data, budget)
    if fmt == "odt":
        from engine.extract.odt_file import extract_odt

        return extract_odt(path, data, budget)
    from engine.extract.epub_file import extract_epub

    return extract_epub(path, data, budget)


def _guarded_extractor(path: Path, data: bytes, fmt: str, budget: Budget) -> ExtractedText:
    """`_run_extractor`, with whatever a parsing library raises turned into a typed error.

    Fuzzing found ValueError, TypeError, IndexError, AssertionError, zlib.error,
    LookupError, lxml's ParserError and more escaping pypdf, python-docx, odfpy and
    ebooklib on damaged files. A damaged file is the file's fault, so it becomes a
    CorruptDocumentError for that file; the traceback goes to the log, where a bug of
    ours would still show.
    """
    try:
        return _run_extractor(path, data, fmt, budget)
    except BabelfindError:
        raise
    except MemoryError as e:
        raise DocumentTooLargeError(path, OUT_OF_MEMORY) from e
    except RecursionError as e:
        raise CorruptDocumentError(path, f"damaged {fmt.upper()} file (nested too deeply)") from e
    except Exception as e:  # noqa: BLE001 -- see the docstring
        # INFO, not WARNING: the skip reason already tells the user; the log file keeps the trace.
        log.info("%s: %s parser failed", path, fmt, exc_info=True)
        raise CorruptDocumentError(path, f"damaged or unreadable {fmt.upper()} file ({short_error(e)})") from e


def short_error(error: BaseException) -> str:
    """The exception's type and message, cut to 120 characters for a skip reason."""
    text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    return text if len(text) <= 120 else text[:117] + "..."


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
    try:
        fmt = _choose_format(path, data)
    except BabelfindError:
        raise
    except MemoryError as e:
        raise DocumentTooLargeError(path, OUT_OF_MEMORY) from e
    except Exception as e:  # noqa: BLE001 -- sniffing opens zip directories of any quality
        log.info("%s: sniffing the format failed", path, exc_info=True)
        raise CorruptDocumentError(path, f"damaged or unreadable file ({short_error(e)})") from e
    extracted = _guarded_extractor(path, data, fmt, budget)
    if not extracted.text:
        if fmt == "pdf":
            raise ExtractionError(path, "no text layer (scanned PDF?)")
        raise ExtractionError(path, "document has no text")
    log.debug("%s: %d characters of %s", path, len(extracted.text), fmt)
    return extracted
