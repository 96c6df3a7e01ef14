"""DOCX text with python-docx: body paragraphs and table cells in document order."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from engine.errors import CorruptDocumentError, EncryptedDocumentError
from engine.extract.base import ExtractedText, clean_title, heading_line, normalise_with_headings
from engine.extract.limits import Budget, check_archive
from engine.extract.sniff import OLE_MAGIC, ZIP_MAGIC

# Password-protected OOXML is an OLE file holding a stream of this (UTF-16) name.
_ENCRYPTED_PACKAGE = "EncryptedPackage".encode("utf-16-le")
CELL_SEPARATOR = " | "


def check_not_ole(path: Path, data: bytes, kind: str) -> None:
    """Name the two usual reasons an Office file is not a zip: encryption, old format."""
    if not data.startswith(OLE_MAGIC):
        return
    if _ENCRYPTED_PACKAGE in data:
        raise EncryptedDocumentError(path, f"encrypted {kind} (password protected)")
    raise CorruptDocumentError(path, f"not a valid {kind} file (old binary Office format)")


def checked_office_zip(path: Path, data: bytes, budget: Budget | None, kind: str, *,
                       ole_possible: bool = True) -> Budget:
    """The document's budget, after the checks every Office or OpenDocument zip gets first.

    Example: budget = checked_office_zip(path, data, budget, "XLSX")

    Raises EncryptedDocumentError or CorruptDocumentError for a password-protected or old
    binary Office file (an OLE file, when `ole_possible`), a file that is no zip, or a zip
    bomb (engine.extract.limits.check_archive).
    """
    if ole_possible:
        check_not_ole(path, data, kind)
    if not data.startswith(ZIP_MAGIC):
        raise CorruptDocumentError(path, f"not a valid {kind} file (not a zip archive)")
    budget = budget or Budget.start(path)
    check_archive(path, data, budget, kind)
    return budget


def _cell_text(cell) -> str:
    return "\n".join(_block_lines(cell, mark_headings=False))  # a cell's "heading" heads no section


def _table_lines(table) -> list[str]:
    lines = []
    for row in table.rows:
        seen: set[int] = set()
        cells = []
        for cell in row.cells:
            # A merged cell is returned once per grid column it spans.
            if id(cell._tc) in seen:
                continue
            seen.add(id(cell._tc))
            cells.append(" ".join(_cell_text(cell).split()))
        lines.append(CELL_SEPARATOR.join(c for c in cells if c))
    return lines


def _block_lines(container, mark_headings: bool = True) -> list[str]:
    """Paragraph texts and tables (rows joined by newlines) of a body or a cell, in order;
    with `mark_headings`, a heading's text starts with HEADING_MARK."""
    from docx.table import Table

    lines: list[str] = []
    for block in container.iter_inner_content():
        if isinstance(block, Table):
            lines.append("\n".join(_table_lines(block)))  # one block: rows on their own lines
        else:
            lines.append(heading_line(block.text, mark_headings and _is_heading(block)))
    return lines


def _is_heading(paragraph) -> bool:
    style = paragraph.style.name if paragraph.style is not None else ""
    return style == "Title" or style.startswith("Heading")


def _first_heading(doc) -> str | None:
    for paragraph in doc.paragraphs:
        if _is_heading(paragraph):
            return clean_title(paragraph.text)
    return None


def extract_docx(path: Path, data: bytes, budget: Budget | None = None) -> ExtractedText:
    """Text of a .docx file; CorruptDocumentError for anything python-docx cannot open.

    Example: extract_docx(Path("a.docx"), data).title == "Venetian glass"
    """
    budget = checked_office_zip(path, data, budget, "DOCX")
    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from lxml.etree import XMLSyntaxError

    try:
        doc = docx.Document(io.BytesIO(data))
        lines = _block_lines(doc)
        budget.check_time()
        title = clean_title(doc.core_properties.title) or _first_heading(doc)
    except (zipfile.BadZipFile, PackageNotFoundError, KeyError, ValueError, XMLSyntaxError, EOFError) as e:
        raise CorruptDocumentError(path, f"not a valid DOCX file ({e or type(e).__name__})") from e
    # Word paragraphs are paragraphs: one blank line between them.
    text, headings = normalise_with_headings("\n\n".join(line for line in lines if line.strip()))
    return ExtractedText(text=text, format="docx", title=title, headings=headings)
