"""EPUB with ebooklib: chapters in spine order, each through `html_to_text`."""

from __future__ import annotations

import io
import logging
import re
import warnings
import zipfile
from pathlib import Path

from engine.errors import CorruptDocumentError, EncryptedDocumentError
from engine.extract.base import ExtractedText, Heading, clean_title, join_pages
from engine.extract.html_file import TooDeepError, read_html, too_deep
from engine.extract.docx_file import checked_office_zip
from engine.extract.limits import Budget
from engine.extract.text_file import decode_text

log = logging.getLogger(__name__)

_CIPHER_URI = re.compile(rb"""CipherReference[^>]*URI\s*=\s*["']([^"']+)["']""")
_CONTENT_SUFFIXES = (b".xhtml", b".html", b".htm", b".xml")


def _check_not_encrypted(path: Path, data: bytes) -> None:
    """DRM encrypts the chapters; font obfuscation (also in encryption.xml) is harmless."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        try:
            encryption = zf.read("META-INF/encryption.xml")
        except KeyError:
            return
    uris = _CIPHER_URI.findall(encryption)
    if any(uri.lower().endswith(_CONTENT_SUFFIXES) for uri in uris):
        raise EncryptedDocumentError(path, "encrypted EPUB (DRM protected)")


def _read_book(path: Path, data: bytes):
    from ebooklib import epub

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ebooklib warns about its own future defaults
        return epub.read_epub(io.BytesIO(data), options={"ignore_ncx": True})


def _chapters(path: Path, book, budget: Budget) -> list[tuple[str, tuple[Heading, ...]]]:
    """Each chapter's text and headings, in spine order (empty chapters left out)."""
    chapters = []
    seen: set[str] = set()
    for idref, _linear in book.spine:
        budget.check_time()
        if idref in seen:  # a spine naming one chapter many times would read it as often
            continue
        seen.add(idref)
        item = book.get_item_with_id(idref)
        if item is None:
            log.warning("%s: spine names missing item %r, skipped", path, idref)
            continue
        html = decode_text(item.get_content(), path)
        try:
            text, _title, headings = read_html(html)
        except TooDeepError as e:
            raise too_deep(path, e) from e
        budget.add_text(text)
        if text:
            chapters.append((text, headings))
    return chapters


def _joined(chapters: list[tuple[str, tuple[Heading, ...]]]) -> tuple[str, tuple[Heading, ...]]:
    """The chapters' texts separated by a blank line, and their headings at their offsets there."""
    text, starts = join_pages([chapter for chapter, _ in chapters])
    headings = (Heading(start + h.start, h.text) for start, (_, own) in zip(starts, chapters) for h in own)
    return text, tuple(headings)


def extract_epub(path: Path, data: bytes, budget: Budget | None = None) -> ExtractedText:
    """Text of an .epub file; chapters separated by a blank line.

    Example: extract_epub(Path("a.epub"), data).text.startswith("Chapter one")
    """
    budget = checked_office_zip(path, data, budget, "EPUB", ole_possible=False)
    from ebooklib.epub import EpubException
    from lxml.etree import XMLSyntaxError

    try:
        _check_not_encrypted(path, data)
        book = _read_book(path, data)
        chapters = _chapters(path, book, budget)
    except (zipfile.BadZipFile, EpubException, KeyError, ValueError, XMLSyntaxError, EOFError) as e:
        raise CorruptDocumentError(path, f"not a valid EPUB file ({e or type(e).__name__})") from e
    titles = book.get_metadata("DC", "title")
    title = clean_title(titles[0][0]) if titles else None
    text, headings = _joined(chapters)
    return ExtractedText(text=text, format="epub", title=title, headings=headings)
