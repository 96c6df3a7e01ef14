"""The value every extractor returns, and the whitespace rules they all share.

Offsets that later stages store (passages, previews, page numbers) are offsets into
`ExtractedText.text` exactly as returned here, so every extractor normalises its text
*before* it records any offset.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

FORMATS = ("txt", "md", "rst", "csv", "po", "html", "pdf", "docx", "odt", "epub")

# C0/C1 control characters that are not whitespace; they carry no text. (The whitespace
# ones, such as tab, VT, the separators \x1c-\x1f and NEL, become spaces.) Lone
# surrogates go too: a PDF's ToUnicode map can produce them, and no database stores them.
_CONTROL = re.compile("[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\ud800-\udfff]")


@dataclass(frozen=True)
class ExtractedText:
    """Plain text of one document.

    Example: ExtractedText(text="Page one\\n\\nPage two", format="pdf", page_starts=(0, 10))

    Attributes:
        text: normalised text; all offsets elsewhere are offsets into this string.
        format: one of FORMATS, the format the content was read as (not the extension).
        page_starts: for PDFs, the offset in `text` where each page starts (page 1 first);
            empty for formats without pages.
        title: the document's own title (metadata or first heading), when it has one.
    """

    text: str
    format: str
    page_starts: tuple[int, ...] = ()
    title: str | None = None


def page_of(extracted: ExtractedText, offset: int) -> int | None:
    """1-based page holding character `offset`, or None for formats without pages.

    Example: page_of(ExtractedText("ab\\n\\ncd", "pdf", (0, 4)), 5) == 2
    """
    if not extracted.page_starts:
        return None
    # Empty pages share their start with the next page; bisect_right picks the later
    # one, which is the page that actually holds the character.
    return max(1, bisect.bisect_right(extracted.page_starts, offset))


def normalise_whitespace(text: str) -> str:
    """Collapse runs of spaces, keep line breaks, keep paragraph breaks as one blank line.

    Example: normalise_whitespace("a  b \\r\\n\\n\\n\\nc") == "a b\\n\\nc"

    Works line by line with str.split/join (C speed): per-character regexes over a
    50 MB file took seconds each.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n\n")
    out: list[str] = []
    blank_before = False
    for line in text.split("\n"):
        line = " ".join(line.split())
        if not line.isprintable():  # rare: only then pay for the regex
            line = " ".join(_CONTROL.sub("", line).split())
        if not line:
            blank_before = bool(out)
            continue
        if blank_before:
            out.append("")
            blank_before = False
        out.append(line)
    return "\n".join(out)


def clean_title(title: str | None) -> str | None:
    """A metadata title with whitespace collapsed, or None when it is blank."""
    if title is None:
        return None
    title = " ".join(_CONTROL.sub("", str(title)).split())
    return title or None
