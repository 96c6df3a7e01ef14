"""Word 97-2003 documents (.doc) through antiword, or catdoc when antiword is absent.

    >>> extract_doc(Path("letter.doc"), data).format
    'doc'

No Python library reads the binary Word format well; these two small Debian tools do
(Recoll uses them too). Neither installed: a MissingToolError naming them.
"""

from __future__ import annotations

from pathlib import Path

from engine.errors import CorruptDocumentError, EncryptedDocumentError, MissingToolError
from engine.extract.base import ExtractedText, normalise_whitespace
from engine.extract.limits import Budget
from engine.extract.tools import find_tool, install_hint, run_tool

# A Word file whose FIB says "encrypted" (bit 8 of the flags at offset 0x0B of the
# WordDocument stream); antiword says so in English.
_ENCRYPTED_MESSAGES = ("is encrypted", "encrypted documents")


def extract_doc(path: Path, data: bytes, budget: Budget | None = None) -> ExtractedText:
    """Text of a .doc file; MissingToolError when neither antiword nor catdoc is installed.

    Example: extract_doc(Path("a.doc"), data).text.startswith("Glassblowing")
    """
    budget = budget or Budget.start(path)
    antiword, catdoc = find_tool("antiword"), find_tool("catdoc")
    if antiword is None and catdoc is None:
        raise MissingToolError(path, "antiword",
                               f"legacy Word .doc needs antiword or catdoc ({install_hint('antiword')})")
    try:
        if antiword is not None:
            # -w 0: a paragraph on one line; -m UTF-8.txt: UTF-8 output
            raw = run_tool(path, [antiword, "-w", "0", "-m", "UTF-8.txt", "{input}"], data, budget, suffix=".doc")
        else:
            raw = run_tool(path, [catdoc, "-w", "-d", "utf-8", "{input}"], data, budget, suffix=".doc")
    except CorruptDocumentError as e:
        if any(m in e.reason for m in _ENCRYPTED_MESSAGES):
            raise EncryptedDocumentError(path, "encrypted DOC (password protected)") from e
        raise
    text = normalise_whitespace(raw.decode("utf-8", "replace").replace("\ufffd", ""))
    return ExtractedText(text=text, format="doc")
