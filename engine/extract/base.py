"""The value every extractor returns, and the whitespace rules they all share.

Offsets that later stages store (passages, previews, page numbers) are offsets into
`ExtractedText.text` exactly as returned here, so every extractor normalises its text
*before* it records any offset.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

FORMATS = (
    "txt", "md", "rst", "csv", "po", "html", "pdf", "docx", "odt", "epub",
    "xlsx", "xls", "ods", "pptx", "odp", "rtf", "doc", "code", "subtitles",
    "eml", "msg", "mbox", "zip", "tar", "compressed", "image", "man",
)
# Formats whose text has parts other than pages: what a preview or a result calls them.
PAGE_KINDS = {"xlsx": "sheet", "xls": "sheet", "ods": "sheet", "pptx": "slide", "odp": "slide"}

# C0/C1 control characters that are not whitespace; they carry no text. (The whitespace
# ones, such as tab, VT, the separators \x1c-\x1f and NEL, become spaces.) Lone
# surrogates go too: a PDF's ToUnicode map can produce them, and no database stores them.
_CONTROL = re.compile("[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\ud800-\udfff]")


@dataclass(frozen=True)
class Heading:
    """A section heading of a document: where it starts in the text, and its words."""

    start: int
    text: str


@dataclass(frozen=True)
class ExtractedText:
    """Plain text of one document.

    Example: ExtractedText(text="Page one\\n\\nPage two", format="pdf", page_starts=(0, 10))

    Attributes:
        text: normalised text; all offsets elsewhere are offsets into this string.
        format: one of FORMATS, the format the content was read as (not the extension).
        page_starts: the offset in `text` where each page (PDF), sheet (spreadsheet) or
            slide (presentation) starts, the first one first; empty for formats without pages.
        title: the document's own title (metadata, first heading, a message's subject).
        page_labels: a name for each page where it has one (a sheet's name); else empty.
        ocr_pages: 1-based pages whose text was read by OCR (an image is page 1).
        ocr_engine: the OCR engine that read them ("tesseract 5.3.0"), when any did.
        date: the document's own date in epoch seconds (an e-mail's Date header), when
            it has one; the index uses it instead of the file's modification time.
        headings: the section headings of formats that mark them (HTML and EPUB h1-h6,
            Markdown and reST section titles, man .SH/.SS, DOCX and ODT heading styles,
            PDF bookmarks),
            in text order; a passage is encoded with the one it falls under
            (engine.passage_context).
    """

    text: str
    format: str
    page_starts: tuple[int, ...] = ()
    title: str | None = None
    page_labels: tuple[str, ...] = ()
    ocr_pages: tuple[int, ...] = ()
    ocr_engine: str | None = None
    date: float | None = None
    headings: tuple[Heading, ...] = ()


# Where a heading starts, until a reader's text is normalised and its headings taken: a
# Unicode noncharacter, which no text carries (readers remove it from their input,
# without_heading_marks) and normalise_whitespace keeps.
HEADING_MARK = "\ufdd0"
MAX_HEADING_CHARS = 200  # a heading's words kept; a longer "heading" is a styled paragraph


def without_heading_marks(text: str) -> str:
    """`text` as a document holds it, with no character a reader's heading marks could be taken for."""
    return text.replace(HEADING_MARK, "")


def heading_line(text: str, is_heading: bool = True) -> str:
    """A reader's paragraph `text` (any mark it held removed), starting with HEADING_MARK
    when it is a heading with words."""
    text = without_heading_marks(text)
    return HEADING_MARK + text if is_heading and text.strip() else text


def normalise_with_headings(text: str) -> tuple[str, tuple[Heading, ...]]:
    """A reader's marked text normalised (normalise_whitespace), and the headings it marked."""
    return take_heading_marks(normalise_whitespace(text))


def take_heading_marks(text: str) -> tuple[str, tuple[Heading, ...]]:
    """`text` without the heading marks, and the headings they marked: each one's start
    and its line's words."""
    if HEADING_MARK not in text:
        return text, ()
    first, *marked = text.split(HEADING_MARK)
    pieces, starts, length = [first], [], len(first)
    for piece in marked:
        # The mark and the heading's first word were joined by a space, or by a line break
        # where the heading starts with a <br>.
        piece = piece.removeprefix(" ").removeprefix("\n")
        starts.append(length)
        pieces.append(piece)
        length += len(piece)
    text = "".join(pieces)
    headings = []
    for start in starts:
        end = text.find("\n", start)
        words = text[start:end if end >= 0 else len(text)].strip()
        if words:
            headings.append(Heading(start, words[:MAX_HEADING_CHARS]))
    return text, tuple(headings)


def page_of(extracted: ExtractedText, offset: int) -> int | None:
    """1-based page holding character `offset`, or None for formats without pages.

    Example: page_of(ExtractedText("ab\\n\\ncd", "pdf", (0, 4)), 5) == 2
    """
    if not extracted.page_starts:
        return None
    # Empty pages share their start with the next page; bisect_right picks the later
    # one, which is the page that actually holds the character.
    return max(1, bisect.bisect_right(extracted.page_starts, offset))


PAGE_SEPARATOR = "\n\n"


def join_pages(texts: list[str]) -> tuple[str, tuple[int, ...]]:
    """Pages (sheets, slides) joined by a blank line, with the offset where each page starts.

    An empty page starts where the next page's text starts, so no offset maps to it.

    Example: join_pages(["ab", "", "cd"]) == ("ab\\n\\ncd", (0, 4, 4))
    """
    parts: list[str] = []
    starts: list[int] = []
    waiting = 0  # empty pages whose start is the next text's start
    length = 0
    for text in texts:
        if not text:
            waiting += 1
            continue
        if parts:
            parts.append(PAGE_SEPARATOR)
            length += len(PAGE_SEPARATOR)
        starts.extend([length] * (waiting + 1))
        waiting = 0
        parts.append(text)
        length += len(text)
    starts.extend([length] * waiting)
    return "".join(parts), tuple(starts)


def page_name(extracted_format: str | None, page: int, labels: tuple[str, ...] = ()) -> str:
    """How a result names its page: "page 3", "slide 3", "sheet Budget" (or "sheet 2").

    Example: page_name("xlsx", 2, ("Notes", "Budget")) == "sheet Budget"
    """
    kind = PAGE_KINDS.get(extracted_format or "", "page")
    if 0 < page <= len(labels) and labels[page - 1]:
        return f"{kind} {labels[page - 1]}"
    return f"{kind} {page}"


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
