"""Content-free fragments: the lines of a document that no query should ever find.

    >>> text = "Contents\\n1 Introduction . . . . . . 1\\n- 2 -\\nLibffi calls C functions."
    >>> [text[s.start:s.end] for s in drop_junk(text, split_sentences(text))]
    ['Contents', 'Libffi calls C functions.']

Real folders are full of text that carries no meaning of its own: the dot-leader lines
of a PDF's table of contents, bare page numbers, rules of dashes, a manual's
"Next: ... Up: ... [Index]" navigation bar, the "#: src/main.c:12" source references and
the header fields of a gettext catalogue, the path lists of a Debian copyright file. Encoded alone, such a fragment lands near the centre of the vector
space, close to every query, and beats the passage a query asks for (issue 11: `. . 11`
scored 0.86 against every query, the right Russian passage 0.81).

The rules work on whole lines, because that is where layout junk lives: a table of
contents line is cut into pieces like ". . . . ." by the sentence splitter, but the line
it came from is easy to recognise. The same holds for a gettext catalogue's header and
the "Files:" path lists of a Debian copyright file. `drop_junk` removes junk lines from sentence spans
(splitting a sentence where a junk line sits inside it) and drops what is left without a
letter or digit. Everything else is content: a one-word heading ("Installation"), a
six-character CJK sentence, an amount ("1.234,50 €"), a phone number, a copyright line.
Short content is merged into a neighbouring passage by `merge_fragments`, never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from engine.spans import PassageSpan, Span

# A leader run: ". . . ." (spaced dots, as PDF TOCs print them) or "......", "……", "····",
# "____". Spaced runs need four dots, tight runs six, so "Wait... what" stays content.
_LEADER = r"(?:(?:[.·•][^\S\n]){3,}[.·•]|[.·…_]{6,}|…{2,})"
# A page number: arabic, or roman as in front matter ("iv"), optionally "12-13" or "A-3".
_PAGE_NUMBER = r"(?:\d{1,4}(?:[-–]\d{1,4})?|[ivxlcdm]{1,7}|[IVXLCDM]{1,7}|[A-Z][-–]\d{1,3})"
# Table of contents line: a title (maybe empty), a leader, then a page number or nothing.
_TOC_LINE = re.compile(rf"^.*?{_LEADER}[^\S\n]*{_PAGE_NUMBER}?[^\S\n]*$")
# A line that is only a page number, however decorated: "12", "- 12 -", "[iv]", "12 / 40".
_PAGE_LINE = re.compile(
    rf"^[^\w\n]*{_PAGE_NUMBER}(?:[^\S\n]*(?:/|of|von|de|di|из|sur)[^\S\n]*\d{{1,4}})?[^\w\n]*$",
    re.IGNORECASE,
)
# "Page 3", "Seite 3 von 10", "Página 3 de 10": the word, a number, maybe "of N".
_PAGE_WORDS = "page|p|pg|seite|s|página|pagina|pag|pág|страница|стр|sayfa|sida|side|strona|pagina"
_PAGE_LABEL_LINE = re.compile(
    rf"^[^\w\n]*(?:{_PAGE_WORDS})\.?[^\S\n]*\d{{1,4}}"
    rf"(?:[^\S\n]*(?:/|of|von|de|di|из|sur|av|z)[^\S\n]*\d{{1,4}})?[^\w\n]*$",
    re.IGNORECASE,
)
# Texinfo / HTML manual navigation: "Next: Types, Previous: Basics, Up: Using libffi [Index]".
_NAV_KEY = r"(?:Next|Previous|Prev|Up|Home|Top|Contents|Index)"
_NAV_LINE = re.compile(
    rf"^[^\S\n]*{_NAV_KEY}:.*(?:,[^\S\n]*{_NAV_KEY}:|\[(?:Contents|Index)\])[^\n]*$"
)
# A line of link tags only: "[Contents][Index]", "[Top] [Up] [Next]".
_TAG_LINE = re.compile(r"^[^\S\n]*(?:\[[^\]\n]{1,24}\][^\S\n]*){1,8}$")
# gettext catalogue comments that are not translator notes: "#: file.c:12", "#, c-format",
# "#| msgid ..." (the previous source string).
_PO_COMMENT = re.compile(r"^[^\S\n]*#[:,|]")
# gettext structure: an empty msgid/msgstr opening a multi-line string, and the header's
# fields ("Project-Id-Version: sed 4.8\n"), the same dozen lines in every catalogue.
_PO_EMPTY = re.compile(r'^msg(?:id|id_plural|str|ctxt)(?:\[\d+\])?[^\S\n]+""$')
_PO_HEADER_FIELD = re.compile(
    r'^"(?:Project-Id-Version|Report-Msgid-Bugs-To|POT-Creation-Date|PO-Revision-Date|'
    r'Last-Translator|Language-Team|Language|MIME-Version|Content-Type|'
    r'Content-Transfer-Encoding|Plural-Forms|X-[\w-]+):[^\n]*"$'
)
# Debian machine-readable copyright files: the "Files:" field and the bare path lines
# that continue it ("lib/vtls/rustls.h", "m4/*"); the Copyright and License fields stay.
_DEP5_FILES = re.compile(r"^Files:[^\S\n]")
# A bare path: path characters only, with a slash and then a glob, a file extension or
# a second slash ("m4/*", "lib/vtls/rustls.h"); "TCP/IP" and "and/or" are words.
_PATH_CHARS = re.compile(r"^[\w.+~*-]+(?:/[\w.+~*-]*)+$")
_PATH_SIGN = re.compile(r"\*|\.[A-Za-z0-9]{1,5}$|/.*/")
# No letter at all and no digits: rules, bullets, "* * *", "|---|---|", "====".
_NO_WORD = re.compile(r"^[^\w\n]*$")
_LINE = re.compile(r"[^\n\f\u2029]+")
_HAS_ALNUM = re.compile(r"\w")

_JUNK_LINE_PATTERNS = (_NO_WORD, _TOC_LINE, _PAGE_LINE, _PAGE_LABEL_LINE, _NAV_LINE, _TAG_LINE,
                       _PO_COMMENT, _PO_EMPTY, _PO_HEADER_FIELD, _DEP5_FILES)


def is_junk_line(line: str) -> bool:
    """Whether one line (no newline inside) is layout with no content of its own.

    Example: is_junk_line("2.2 Naming . . . . . . . . 3") -> True; is_junk_line("Naming") -> False
    """
    stripped = line.strip()
    if not stripped:
        return False  # blank lines are paragraph breaks, handled by the splitter
    if _PATH_CHARS.match(stripped) and _PATH_SIGN.search(stripped):
        return True
    return any(pattern.match(stripped) for pattern in _JUNK_LINE_PATTERNS)


def junk_ranges(text: str) -> list[tuple[int, int]]:
    """(start, end) of every junk line in `text`, in order, end exclusive.

    Example: junk_ranges("Title\\n- 3 -\\n") -> [(6, 11)]
    """
    return [m.span() for m in _LINE.finditer(text) if is_junk_line(m.group())]


def drop_junk(text: str, sentences: Sequence[Span]) -> list[Span]:
    """The sentences without their junk lines; pieces with no letter or digit go too.

    A sentence with a junk line inside it (the splitter joins single newlines) is cut
    into the pieces around that line, so every span returned holds content only.
    Spans keep indexing `text` directly.
    """
    ranges = junk_ranges(text)
    kept: list[Span] = []
    position = 0  # first junk range that may still overlap a sentence (both are ordered)
    for sentence in sentences:
        while position < len(ranges) and ranges[position][1] <= sentence.start:
            position += 1
        for start, end in _outside(sentence, ranges, position):
            start, end = _strip(text, start, end)
            if start < end and _HAS_ALNUM.search(text, start, end):
                kept.append(Span(start, end))
    return kept


def _outside(sentence: Span, ranges: list[tuple[int, int]], position: int) -> Iterator[tuple[int, int]]:
    """The parts of `sentence` outside the junk ranges starting at index `position`."""
    start = sentence.start
    while position < len(ranges) and ranges[position][0] < sentence.end:
        junk_start, junk_end = ranges[position]
        if junk_start > start:
            yield start, min(junk_start, sentence.end)
        start = max(start, junk_end)
        position += 1
    if start < sentence.end:
        yield start, sentence.end


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def content_weight(text: str) -> int:
    """Letters and digits, with each CJK character worth three (one CJK character is
    about a word). Example: content_weight("Installation") -> 12; content_weight("我来了。") -> 9
    """
    weight = 0
    for char in text:
        if _is_cjk(char):
            weight += 3
        elif char.isalnum():
            weight += 1
    return weight


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return (0x3040 <= code <= 0x30FF or 0x3400 <= code <= 0x9FFF or 0xAC00 <= code <= 0xD7AF
            or 0xF900 <= code <= 0xFAFF)


def merge_fragments(text: str, passages: Sequence[PassageSpan], min_weight: int) -> list[PassageSpan]:
    """Passages with each fragment (content weight under `min_weight`) merged into a neighbour.

    Example: a heading "Installation" that could not join the paragraph after it
    (that paragraph was already full) becomes the first sentence of that paragraph's
    passage; a trailing "Thanks!" joins the passage before it. A document whose only
    passage is a fragment keeps it: short content is never dropped.
    """
    merged: list[PassageSpan] = []
    pending: PassageSpan | None = None  # a fragment waiting for the passage after it
    for passage in passages:
        if pending is not None:
            passage, pending = _join(pending, passage), None
        if content_weight(passage_text(text, passage)) < min_weight:
            pending = passage
            continue
        merged.append(passage)
    if pending is not None:
        merged.append(_join(merged.pop(), pending) if merged else pending)
    return merged


def _join(first: PassageSpan, second: PassageSpan) -> PassageSpan:
    """One passage covering both (they may share an overlapping sentence)."""
    sentences = first.sentences + tuple(s for s in second.sentences if s.start >= first.end)
    return PassageSpan(sentences[0].start, sentences[-1].end, sentences)


def passage_text(text: str, passage: PassageSpan) -> str:
    """What a passage says: its sentences with the whitespace between them, and a newline
    where dropped junk lay between two sentences (so the junk is never encoded).

    Example: passage_text("A b.\\n- 2 -\\nC d.", p) -> "A b.\\nC d."
    """
    parts = [text[passage.sentences[0].start : passage.sentences[0].end]]
    for previous, current in zip(passage.sentences, passage.sentences[1:]):
        gap = text[previous.end : current.start]
        parts.append(gap if not gap.strip() else "\n")
        parts.append(text[current.start : current.end])
    return "".join(parts)

