"""Presentations (.pptx, .odp): one page per slide, its text then its speaker notes.

    >>> extract_pptx(Path("talk.pptx"), data).page_starts     # slide 1, slide 2, ...

python-pptx reads .pptx (shapes in reading order, groups opened, tables cell by cell);
an .odp's content.xml is streamed with lxml, slide by slide (draw:page), notes included.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from engine.errors import CorruptDocumentError, EncryptedDocumentError
from engine.extract.base import ExtractedText, clean_title, join_pages, normalise_whitespace
from engine.extract.docx_file import CELL_SEPARATOR, checked_office_zip
from engine.extract.limits import Budget


def _slide_text(parts: list[str], notes: list[str], budget: Budget) -> str:
    body = "\n".join(p for p in parts if p.strip())
    note = "\n".join(n for n in notes if n.strip())
    text = normalise_whitespace(body + ("\n\n" + note if note else ""))
    budget.add_text(text)
    return text


# -- .pptx ----------------------------------------------------------------------------


def _shape_texts(shapes) -> list[str]:
    """Texts of shapes in order; group shapes are opened with a stack, not recursion."""
    from pptx.shapes.group import GroupShape

    out: list[str] = []
    stack = list(reversed(list(shapes)))
    while stack:
        shape = stack.pop()
        if isinstance(shape, GroupShape):
            stack.extend(reversed(list(shape.shapes)))
            continue
        if getattr(shape, "has_table", False) and shape.has_table:
            for row in shape.table.rows:
                out.append(CELL_SEPARATOR.join(" ".join(c.text.split()) for c in row.cells if c.text.strip()))
        elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            out.append(shape.text_frame.text)
    return out


def extract_pptx(path: Path, data: bytes, budget: Budget | None = None) -> ExtractedText:
    """Text of a .pptx file: each slide's shapes, then its notes.

    Example: extract_pptx(Path("a.pptx"), data).format == "pptx"
    """
    budget = checked_office_zip(path, data, budget, "PPTX")
    import pptx
    from lxml.etree import XMLSyntaxError
    from pptx.exc import PackageNotFoundError

    try:
        deck = pptx.Presentation(io.BytesIO(data))
        slides = []
        for slide in deck.slides:
            budget.check_time()
            notes = [slide.notes_slide.notes_text_frame.text] if (
                slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None) else []
            slides.append(_slide_text(_shape_texts(slide.shapes), notes, budget))
        title = clean_title(deck.core_properties.title)
    except (zipfile.BadZipFile, PackageNotFoundError, KeyError, ValueError, XMLSyntaxError, EOFError) as e:
        raise CorruptDocumentError(path, f"not a valid PPTX file ({e or type(e).__name__})") from e
    text, starts = join_pages(slides)
    return ExtractedText(text=text, format="pptx", page_starts=starts, title=title or _first_line(slides))


def _first_line(slides: list[str]) -> str | None:
    for slide in slides:
        if slide:
            return clean_title(slide.split("\n", 1)[0])
    return None


# -- .odp -----------------------------------------------------------------------------

_DRAW_PAGE = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}page"
_NOTES = "{urn:oasis:names:tc:opendocument:xmlns:presentation:1.0}notes"
_TEXT_P = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}p"
_TEXT_H = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}h"


def extract_odp(path: Path, data: bytes, budget: Budget | None = None) -> ExtractedText:
    """Text of an .odp file, slide by slide, notes after each slide's text.

    Example: extract_odp(Path("a.odp"), data).page_starts == (0, 41)
    """
    budget = checked_office_zip(path, data, budget, "ODP", ole_possible=False)
    from lxml import etree

    slides: list[str] = []
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            if "META-INF/manifest.xml" in zf.namelist() and b"encryption-data" in zf.read("META-INF/manifest.xml"):
                raise EncryptedDocumentError(path, "encrypted ODP (password protected)")
            with zf.open("content.xml") as content:
                for _event, page in etree.iterparse(content, tag=_DRAW_PAGE):
                    budget.check_time()
                    slides.append(_odp_slide(page, budget))
                    page.clear()
    except KeyError as e:
        raise CorruptDocumentError(path, "not a valid ODP file (no content.xml)") from e
    except (zipfile.BadZipFile, etree.XMLSyntaxError, EOFError, OSError) as e:
        raise CorruptDocumentError(path, f"not a valid ODP file ({e or type(e).__name__})") from e
    text, starts = join_pages(slides)
    return ExtractedText(text=text, format="odp", page_starts=starts, title=_first_line(slides))


def _odp_slide(page, budget: Budget) -> str:
    notes_nodes = set()
    notes: list[str] = []
    for note in page.iter(_NOTES):
        for p in note.iter(_TEXT_P, _TEXT_H):
            notes_nodes.add(p)
            notes.append("".join(p.itertext()))
    parts = ["".join(p.itertext()) for p in page.iter(_TEXT_P, _TEXT_H) if p not in notes_nodes]
    return _slide_text(parts, notes, budget)
