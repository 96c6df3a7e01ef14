"""ODT (OpenDocument text) with odfpy: headings and paragraphs in document order."""

from __future__ import annotations

import contextlib
import io
import zipfile
from pathlib import Path

from engine.errors import CorruptDocumentError, EncryptedDocumentError
from engine.extract.base import ExtractedText, clean_title, heading_line, normalise_with_headings
from engine.extract.docx_file import checked_office_zip
from engine.extract.limits import Budget

_BLOCK_TAGS = ("text:p", "text:h")


def _check_not_encrypted(path: Path, data: bytes) -> None:
    """An encrypted ODT lists encryption data in its manifest; content.xml is ciphertext."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            manifest = zf.read("META-INF/manifest.xml")
    except KeyError:
        return  # odfpy reports a missing manifest better than we could
    except (zipfile.BadZipFile, EOFError, OSError) as e:
        raise CorruptDocumentError(path, f"not a valid ODT file (damaged zip archive: {e})") from e
    if b"encryption-data" in manifest:
        raise EncryptedDocumentError(path, "encrypted ODT (password protected)")


def _paragraphs(root) -> list[str]:
    """Text of every text:p / text:h under `root`, depth first, without recursion; a
    heading's (text:h) starts with HEADING_MARK."""
    from odf import teletype

    out: list[str] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if getattr(node, "qname", None) and node.tagName in _BLOCK_TAGS:
            out.append(heading_line(teletype.extractText(node), node.tagName == "text:h"))
            continue  # notes inside a paragraph are part of its text already
        stack.extend(reversed(getattr(node, "childNodes", [])))
    return out


def _title(doc) -> str | None:
    from odf import dc

    for element in doc.meta.getElementsByType(dc.Title):
        return clean_title(str(element))
    return None


def _load_quietly(path: Path, data: bytes, load):
    """odfpy's `load`, with the XML part it prints to stdout on a parse error kept off stdout.

    odfpy prints the whole part and goes on without it; output meant for a pipe
    (`babelfind index --json`) must not fill with a damaged file's XML, and a document
    missing a part is damaged, not merely shorter.
    """
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        doc = load(io.BytesIO(data))
    if "SAX FAILED TO PARSE" in captured.getvalue():
        raise CorruptDocumentError(path, "not a valid ODT file (an XML part is not well-formed)")
    return doc


def extract_odt(path: Path, data: bytes, budget: Budget | None = None) -> ExtractedText:
    """Text of an .odt file.

    Example: extract_odt(Path("a.odt"), data).format == "odt"
    """
    budget = checked_office_zip(path, data, budget, "ODT", ole_possible=False)
    _check_not_encrypted(path, data)
    from odf.opendocument import load
    from xml.sax import SAXException

    try:
        doc = _load_quietly(path, data, load)
        budget.check_time()
        paragraphs = _paragraphs(doc.text)
        title = _title(doc)
    except (zipfile.BadZipFile, KeyError, ValueError, SAXException, AttributeError, EOFError) as e:
        raise CorruptDocumentError(path, f"not a valid ODT file ({e or type(e).__name__})") from e
    text, headings = normalise_with_headings("\n\n".join(p for p in paragraphs if p.strip()))
    return ExtractedText(text=text, format="odt", title=title, headings=headings)
