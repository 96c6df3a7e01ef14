"""PDF text layer with pypdf; each page's start offset is kept for page numbers."""

from __future__ import annotations

import io
import logging
import re
from pathlib import Path

from engine.errors import (
    CorruptDocumentError,
    DocumentTooLargeError,
    EncryptedDocumentError,
    ExtractionError,
    ExtractionTimeoutError,
)
from engine.extract.base import (
    MAX_HEADING_CHARS,
    ExtractedText,
    Heading,
    clean_title,
    join_pages,
    normalise_whitespace,
)
from engine.extract.limits import Budget

log = logging.getLogger(__name__)

def _open_reader(path: Path, data: bytes, budget: Budget):
    """A PdfReader that can read pages: decrypted with the empty password when needed."""
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, LimitReachedError, PdfReadError, PdfStreamError

    if b"%%EOF" not in data[-2048:]:
        # pypdf would try to rebuild the file; a missing end marker means a cut download.
        raise CorruptDocumentError(path, "damaged or truncated PDF (no end-of-file marker)")
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            _decrypt_with_empty_password(path, reader)
        _check_declared_pages(path, reader, budget)
        reader.pages[0]  # noqa: B018 -- forces the page tree to load while we catch errors
    except (EncryptedDocumentError, CorruptDocumentError, DocumentTooLargeError):
        raise
    except LimitReachedError as e:
        raise DocumentTooLargeError(path, f"too large to read safely: {_short(e)}") from e
    except DependencyError as e:
        raise EncryptedDocumentError(path, f"encrypted PDF (cannot decrypt: {e})") from e
    except (PdfReadError, PdfStreamError, ValueError, KeyError, IndexError, TypeError, AttributeError) as e:
        raise CorruptDocumentError(path, f"damaged or truncated PDF ({_short(e)})") from e
    return reader


def _decrypt_with_empty_password(path: Path, reader) -> None:
    """PDFs with only an owner password open with an empty user password."""
    from pypdf import PasswordType
    from pypdf.errors import FileNotDecryptedError

    try:
        result = reader.decrypt("")
    except FileNotDecryptedError as e:
        raise EncryptedDocumentError(path, "encrypted PDF (password protected)") from e
    if result == PasswordType.NOT_DECRYPTED:
        raise EncryptedDocumentError(path, "encrypted PDF (password protected)")


def _short(error: Exception) -> str:
    text = str(error) or type(error).__name__
    return text if len(text) <= 120 else text[:117] + "..."


def _declared_page_count(reader) -> int | None:
    """/Count of the page tree's root: free to read, and enough to refuse a page bomb early."""
    try:
        count = reader.trailer["/Root"]["/Pages"]["/Count"]
        return int(count)
    except Exception:  # noqa: BLE001 -- missing or odd /Count: the real count decides
        return None


def _check_declared_pages(path: Path, reader, budget: Budget) -> None:
    """Refuses a PDF whose page tree declares more than `max_pages`, before flattening it."""
    declared = _declared_page_count(reader)
    if declared is not None and declared > budget.limits.max_pages:
        raise DocumentTooLargeError(
            path, f"PDF declares {declared:,} pages, over the limit of {budget.limits.max_pages:,}"
        )


def _check_page_count(path: Path, reader, budget: Budget) -> int:
    """The real number of pages, refused over `max_pages`."""
    from pypdf.errors import LimitReachedError

    limit = budget.limits.max_pages
    try:
        count = len(reader.pages)  # flattens the page tree; it may hold more than /Count says
    except LimitReachedError as e:
        raise DocumentTooLargeError(path, f"too large to read safely: {_short(e)}") from e
    if count > limit:
        raise DocumentTooLargeError(path, f"PDF has {count:,} pages, over the limit of {limit:,}")
    return count


def _page_texts(path: Path, reader, budget: Budget) -> list[str]:
    """Normalised text of every page; a page that fails to parse counts as empty."""
    texts = []
    for number, page in enumerate(reader.pages, start=1):
        budget.check_time()
        try:
            texts.append(normalise_whitespace(page.extract_text() or ""))
            budget.add_text(texts[-1])
        except DocumentTooLargeError:
            raise
        except Exception as e:  # noqa: BLE001 -- pypdf raises many kinds on bad content streams
            log.warning("%s: page %d unreadable, skipped: %s", path, number, _short(e))
            texts.append("")
    return texts


def _metadata_title(reader) -> str | None:
    try:
        metadata = reader.metadata
        return clean_title(metadata.title) if metadata else None
    except Exception:  # noqa: BLE001 -- a damaged info dictionary must not lose the text
        return None


# Bookmarks read at most: a manual has hundreds; more is a generated index, not sections.
MAX_OUTLINE_ENTRIES = 5000
_SECTION_NUMBER = re.compile(r"^\s*\d+(?:[.)]\d+)*[.)]?\s+")  # "2.6 ", "3) "; one way to match, so linear


def _outline(reader, budget: Budget) -> list[tuple[str, int]]:
    """(title, 0-based page) of the PDF's bookmarks in outline order; [] when it has none
    or they cannot be read (a damaged outline must not lose the text)."""
    entries: list[tuple[str, int]] = []
    try:
        stack = [iter(reader.outline)]
        while stack and len(entries) < MAX_OUTLINE_ENTRIES:
            budget.check_time()
            item = next(stack[-1], None)
            if item is None:
                stack.pop()
            elif isinstance(item, list):  # the children of the entry before it
                stack.append(iter(item))
            elif (title := clean_title(item.title)) and (page := reader.get_destination_page_number(item)) >= 0:
                entries.append((title, page))
    except ExtractionTimeoutError:
        raise
    except Exception as e:  # noqa: BLE001 -- pypdf raises many kinds on a bad outline
        log.info("%s: outline unreadable, no section headings: %s", budget.path, _short(e))
        return []
    return entries


def _outline_headings(entries: list[tuple[str, int]], texts: list[str], starts: tuple[int, ...],
                      budget: Budget) -> tuple[Heading, ...]:
    """The bookmarks as headings of the joined text: each where its title is written on its
    page (with or without its section number), else at the page's start."""
    headings = []
    for title, page in entries:
        budget.check_time()  # each looks through its page's text
        if page < len(texts) and texts[page]:
            headings.append(Heading(starts[page] + _title_offset(texts[page], title), title[:MAX_HEADING_CHARS]))
    return tuple(sorted(headings, key=lambda h: h.start))


def _title_offset(page_text: str, title: str) -> int:
    for wanted in (title, _SECTION_NUMBER.sub("", title)):
        words = wanted.split()
        if words and (found := re.search(r"\s+".join(map(re.escape, words)), page_text, re.IGNORECASE)):
            return found.start()
    return 0


def _has_image(page) -> bool:
    """Whether a page draws an image (a scan); blank pages are not worth an OCR pass."""
    try:
        objects = page["/Resources"].get_object().get("/XObject")
        if objects is None:
            return False
        return any(obj.get_object().get("/Subtype") == "/Image" for obj in objects.get_object().values())
    except Exception:  # noqa: BLE001 -- an odd resource dictionary: let OCR decide
        return True


def _ocr_empty_pages(path: Path, data: bytes, reader, texts: list[str], budget: Budget) -> tuple[list[int], str | None]:
    """Fills in the empty pages that hold an image with OCR text; (pages read, engine)."""
    from engine.extract.ocr import check_ocr, read_pages

    wanted = [n for n, text in enumerate(texts, start=1) if not text and _has_image(reader.pages[n - 1])]
    if not wanted:
        return [], None
    try:
        setup = check_ocr(path, budget.limits, "a scanned PDF")
    except ExtractionError as e:
        log.info("%s: %d pages without text are not read: %s", path, len(wanted), e.reason)
        return [], None
    result = read_pages(path, "pdf", data, budget, wanted, setup=setup)
    read = []
    for number, text in result.texts.items():
        texts[number - 1] = normalise_whitespace(text)
        budget.add_text(texts[number - 1])
        if texts[number - 1]:
            read.append(number)
    return read, result.engine


def extract_pdf(path: Path, data: bytes, budget: Budget | None = None) -> ExtractedText:
    """Text layer of a PDF, and OCR of its scanned pages; ExtractionError when no page has text.

    Example: extract_pdf(Path("a.pdf"), data).page_starts == (0, 52)
    """
    budget = budget or Budget.start(path)
    reader = _open_reader(path, data, budget)
    try:
        page_count = _check_page_count(path, reader, budget)
    except DocumentTooLargeError:
        raise
    except Exception as e:  # noqa: BLE001
        raise CorruptDocumentError(path, f"damaged or truncated PDF ({_short(e)})") from e
    if page_count == 0:
        raise CorruptDocumentError(path, "damaged PDF (no pages)")
    texts = _page_texts(path, reader, budget)
    ocr_pages, engine = _ocr_empty_pages(path, data, reader, texts, budget)
    text, starts = join_pages(texts)
    if not text:
        raise ExtractionError(path, "no text layer (scanned PDF?)")
    headings = _outline_headings(_outline(reader, budget), texts, starts, budget)
    return ExtractedText(text=text, format="pdf", page_starts=starts, title=_metadata_title(reader),
                         ocr_pages=tuple(ocr_pages), ocr_engine=engine, headings=headings)
