"""Rich Text Format (.rtf) with striprtf: the text, without control words and destinations.

    >>> extract_rtf(Path("memo.rtf"), b"{\\\\rtf1\\\\ansi Hello \\\\b world\\\\b0.}").text
    'Hello world.'

RTF is 7-bit text whose other characters are escapes (\\'e9 in the document's code page,
\\u233 for Unicode), so the bytes decode as Latin-1 without loss before striprtf reads
them; it skips font tables, pictures and other destinations, and keeps table cells.
"""

from __future__ import annotations

import re
from pathlib import Path

from engine.errors import CorruptDocumentError
from engine.extract.base import ExtractedText, clean_title, normalise_whitespace
from engine.extract.limits import Budget

RTF_MAGIC = b"{\\rtf"
_TITLE = re.compile(rb"\{\\title\s+([^{}\\]*)\}")


def extract_rtf(path: Path, data: bytes, budget: Budget | None = None) -> ExtractedText:
    """Text of an .rtf file.

    Example: extract_rtf(Path("a.rtf"), data).format == "rtf"
    """
    if data[:64].lstrip()[:5] != RTF_MAGIC:
        raise CorruptDocumentError(path, "not a valid RTF file (no {\\rtf header)")
    budget = budget or Budget.start(path)
    from striprtf.striprtf import rtf_to_text

    text = normalise_whitespace(rtf_to_text(data.decode("latin-1"), errors="ignore"))
    budget.check_time()
    budget.add_text(text)
    title = _TITLE.search(data[:65536])
    return ExtractedText(text=text, format="rtf",
                         title=clean_title(title.group(1).decode("latin-1")) if title else None)
