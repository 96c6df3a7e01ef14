"""Sentences and passages: the units Babelfind encodes, stores and shows.

`split_sentences` finds sentence spans with rules that hold across scripts (Latin,
Cyrillic, Greek, Arabic, Devanagari, and CJK, which puts no space after "。").
`make_passages` groups consecutive sentences into short overlapping passages.
All offsets index the text exactly as given (`ExtractedText.text`), end exclusive,
so `text[span.start:span.end]` is what a result preview shows.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from engine import junk
from engine.abbreviations import (
    AFTER_ORDINAL,
    BEFORE_NUMBER,
    ORDINAL_PERIOD_LANGUAGES,
    SENTENCE_FINAL_PATTERN,
    abbreviations_for,
)
from engine.errors import InputError
from engine.spans import PassageSpan, Span

MAX_SENTENCE_CHARS = 400


@dataclass(frozen=True)
class _LanguageRules:
    """What the caller's language changes: extra abbreviations, ordinals like "3."."""

    abbreviations: frozenset[str]
    ordinal_period: bool

    @classmethod
    def for_language(cls, language: str | None) -> _LanguageRules:
        code = _language_code(language)
        return cls(abbreviations_for(code), code in ORDINAL_PERIOD_LANGUAGES)


def _char_class(chars: str) -> str:
    return "[" + "".join(re.escape(c) for c in chars) + "]"


# Quotes close on either side in some language („so“ in German, »so« too), so both
# forms follow a terminal; French puts a space before » ("« Non. »").
_CLOSERS = _char_class("\"'”’“‘»›«‹)]}」』】）〕〉》〗〙〛")
_CLOSING = rf"{_CLOSERS}*(?:[^\S\n]+[»›](?=\s|$))?"
# After "。" a “ or ‘ opens the next sentence (Chinese never closes with them).
_CJK_CLOSING = _char_class("\"'”’»›)]}」』】）〕〉》〗〙〛") + "*"
_OPENERS = _char_class("\"'“‘„«‹([{「『【（〔〈《¿¡")
# End a sentence whatever follows: CJK never puts a space after them, and danda or the
# Arabic question mark are never used inside a sentence, so glued text still splits.
_ALWAYS_STOPS = "。！？｡．।॥؟۔"
# End a sentence only before whitespace or the end of the text (so "3.14" and
# "example.com" stay whole); U+037E is the Greek question mark.
_WESTERN_STOPS = ".!?…‼⁇⁈⁉։።\u037e"
_ALWAYS, _WESTERN = _char_class(_ALWAYS_STOPS), _char_class(_WESTERN_STOPS)
_FIRST_CHARS = _char_class(_ALWAYS_STOPS + _WESTERN_STOPS + ";\n\f\u2029")

_BOUNDARY_ALTERNATIVES = (
    # a blank line (or form feed / paragraph separator) always ends a sentence
    r"(?P<para>\n[^\S\n]*\n\s*|[\f\u2029]\s*)"
    # a new line that opens a list item: "- item", "• item", "2) item", "3. item"
    r"|(?P<bullet>\n[^\S\n]*(?=(?:[-•*·‣◦▪–—]|\d{1,3}[.)])[^\S\n]))"
    rf"|(?P<always>{_ALWAYS}+){_CJK_CLOSING}"
    rf"|(?P<term>{_WESTERN}+){_CLOSING}"
    # Greek writes its question mark as ";" (usually U+003B, not U+037E)
    rf"|(?P<greek>;){_CLOSING}"
)
# Every alternative starts with one of _FIRST_CHARS; the lookahead lets the regex engine
# skip all other characters with one set test (3x faster on long documents; the test
# suite checks it finds exactly what the plain alternatives find).
_BOUNDARY = re.compile(rf"(?={_FIRST_CHARS})(?:{_BOUNDARY_ALTERNATIVES})")
_LEADING_OPENERS = re.compile(f"^{_OPENERS}+")
_NEXT_WORD = re.compile(rf"\s*{_OPENERS}*(\w*)")
_SENTENCE_FINAL = re.compile(SENTENCE_FINAL_PATTERN)
_ROMAN = re.compile(r"[IVXLC]{1,6}")
# A letter with its Devanagari vowel sign or virama, which Python's \w leaves out.
_LETTER = r"[^\W\d_][\u0900-\u0903\u093a-\u094f\u0951-\u0957\u0962\u0963]*"
_DOTTED = re.compile(rf"(?:(?:{_LETTER}){{1,3}}\.)+(?:{_LETTER}){{1,3}}")  # e.g, z.B, U.S, बी.सी
_LIST_MARKER = re.compile(r"\d{1,3}|[IVXLC]{1,5}|[ivxlc]{1,5}|[^\W\d_]")
_LAST_SPACE = re.compile(r".*\s", re.DOTALL)
_LAST_SOFT_STOP = re.compile(r".*[，、；：,;:]", re.DOTALL)
_ABBREVIATION_WINDOW = 40  # no abbreviation is longer; bounds the look-back


def split_sentences(
    text: str, language: str | None = None, *, max_chars: int = MAX_SENTENCE_CHARS
) -> list[Span]:
    """Sentence spans of `text`, in order, never overlapping, whitespace excluded.

    Example: split_sentences("Dr. Li came. 我来了。你呢？") ->
        [Span(0, 12), Span(13, 17), Span(17, 20)]

    Args:
        text: the document text; offsets index it directly.
        language: ISO 639-1 code when known ("de", "pl"...). It adds abbreviations
            that are ordinary words elsewhere ("ok." in Polish) and, where ordinals are
            written "3." (de, tr, pl, the Nordic and most Slavic languages), keeps
            "16. Jahrhundert" whole. None works for every language.
        max_chars: a "sentence" longer than this (lists, tables, CSV rows) is cut at
            the last whitespace (or CJK comma, or hard) before the limit.

    Raises:
        InputError: `text` is not a str, or `max_chars` is below 2.
    """
    if not isinstance(text, str):
        raise InputError(f"text must be a str, not {type(text).__name__}")
    if not isinstance(max_chars, int) or max_chars < 2:
        raise InputError(f"max_chars must be an int >= 2, got {max_chars!r}")
    rules = _LanguageRules.for_language(language)
    spans: list[Span] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        kind = match.lastgroup
        if kind in ("para", "bullet"):
            cut, resume = match.start(), match.end()
        elif kind == "always" and _continues_after(text, match):
            continue
        elif kind == "term" and not _ends_sentence(text, match, start, rules):
            continue
        elif kind == "greek" and not _after_greek(text, match.start()):
            continue
        else:
            cut = resume = match.end()
        _add_sentence(text, start, cut, max_chars, spans)
        start = resume
    _add_sentence(text, start, len(text), max_chars, spans)
    return spans


def _language_code(language: str | None) -> str | None:
    if language is None:
        return None
    if not isinstance(language, str):
        raise InputError(f"language must be an ISO 639-1 code or None, not {language!r}")
    return re.split(r"[-_]", language.strip().lower(), maxsplit=1)[0] or None


def _continues_after(text: str, match: re.Match) -> bool:
    """CJK stops that do not end the sentence.

    A full-width period between digits ("３．１４") is a decimal point, and a quote that
    closes after "。" and is followed by hiragana is quoted speech the sentence goes on
    from (「行く。」と言った).
    """
    end = match.end()
    if end >= len(text) or match.start() == 0:
        return False
    after = text[end]
    if match.group("always") == "．" and text[match.start() - 1].isdigit():
        return after.isdigit()
    quoted = end > match.end("always")
    return quoted and "\u3041" <= after <= "\u309f"


def _ends_sentence(text: str, match: re.Match, start: int, rules: _LanguageRules) -> bool:
    """Whether a ". ! ? …" run (plus closing quotes) ends the sentence begun at `start`."""
    terminal, end = match.group("term"), match.end()
    if end < len(text) and not text[end].isspace():
        return _glued_end(text, match.start(), end, terminal)
    next_word = _NEXT_WORD.match(text, end).group(1)
    if next_word[:1].islower():  # "e.g. the", "Wait… what": the sentence goes on
        return False
    if terminal != ".":
        return True
    return not _is_abbreviation(text, start, match.start(), next_word, rules)


def _glued_end(text: str, term_start: int, end: int, terminal: str) -> bool:
    """A terminal with no space after it: only CJK context or "end.Next" typos split."""
    if term_start == 0 or "…" in terminal:
        return False
    before, after = text[term_start - 1], text[end]
    if _is_cjk(before) and _is_cjk(after):
        return True
    following = text[end + 1 : end + 2]
    return before.islower() and after.isupper() and following.islower()


def _after_greek(text: str, position: int) -> bool:
    if position == 0:
        return False
    code = ord(text[position - 1])
    return 0x370 <= code <= 0x3FF or 0x1F00 <= code <= 0x1FFF


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return 0x3040 <= code <= 0x30FF or 0x3400 <= code <= 0x9FFF or 0xF900 <= code <= 0xFAFF


def _is_abbreviation(
    text: str, start: int, period: int, next_word: str, rules: _LanguageRules
) -> bool:
    """Whether the word before the period at `period` is an abbreviation, initial or number.

    Only called when the next word is not lowercase (that case never splits).
    """
    window = text[max(start, period - _ABBREVIATION_WINDOW) : period]
    if not window or window[-1].isspace():
        return False
    token = _LEADING_OPENERS.sub("", window.split()[-1])
    if not token:
        return False
    # initials ("J. R. R. Tolkien", "M. Dupont") and dotted forms ("z.B."), except the
    # era and clock abbreviations that usually end a sentence ("a. C.", "p.m.")
    if (len(token) == 1 and token.isalpha()) or _DOTTED.fullmatch(token):
        return not _SENTENCE_FINAL.search(window)
    lowered = token.lower()
    if lowered in rules.abbreviations:
        return True
    if next_word[:1].isdigit() and lowered in BEFORE_NUMBER:  # "Nr. 5", "p. 12"
        return True
    is_ordinal = (token.isdigit() and len(token) <= 3) or _ROMAN.fullmatch(token)
    if is_ordinal and (rules.ordinal_period or next_word.lower() in AFTER_ORDINAL):
        return True  # "3. Oktober", "16. Jahrhundert", (de, tr...) "III. Napolyon"
    # "1. Introduction", "IV. Results": a list marker that opens the sentence
    return bool(_LIST_MARKER.fullmatch(token)) and not text[start : period - len(token)].strip()


def _add_sentence(text: str, start: int, end: int, max_chars: int, spans: list[Span]) -> None:
    """Append `text[start:end]` without its surrounding whitespace, cut if overlong."""
    start, end = _strip(text, start, end)
    if start == end:
        return
    while end - start > max_chars:
        cut, resume = _cut_point(text, start, max_chars)
        spans.append(Span(*_strip(text, start, cut)))
        start = _strip(text, resume, end)[0]
    spans.append(Span(start, end))


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _cut_point(text: str, start: int, max_chars: int) -> tuple[int, int]:
    """Where to cut an overlong sentence: (end of the first piece, start of the rest).

    Prefers the last whitespace in the second half of the window, then the last comma
    or CJK comma, then a hard cut that does not separate a combining mark from its base.
    """
    low, high = start + max_chars // 2, start + max_chars
    space = _LAST_SPACE.match(text, low, high + 1)
    if space:
        return space.end() - 1, space.end()
    soft = _LAST_SOFT_STOP.match(text, low, high)
    if soft:
        return soft.end(), soft.end()
    cut = high
    while cut > low and _is_joining(text[cut]):
        cut -= 1
    return cut, cut


def _is_joining(char: str) -> bool:
    """Combining marks (Devanagari vowel signs, accents) and ZWJ belong to the char before."""
    return char == "\u200d" or unicodedata.category(char) in ("Mn", "Mc", "Me")


def make_passages(
    text: str,
    sentences: Sequence[Span],
    *,
    max_chars: int = 600,
    max_sentences: int = 5,
    overlap: int = 1,
    tiny_chars: int = 100,
) -> list[PassageSpan]:
    """Group consecutive sentences into passages of at most `max_sentences` / `max_chars`.

    Example: make_passages(t, split_sentences(t), max_sentences=3, overlap=1) gives
        passages of sentences [0, 1, 2], [2, 3, 4], [4, 5]...

    The last `overlap` sentences of a passage start the next one, so a match that
    straddles two passages is still seen whole; a one-sentence passage carries nothing.
    A paragraph break (a blank line; extractors collapse longer runs to one) ends a
    passage and is never overlapped, because the next paragraph is usually a new
    topic and a mixed passage encodes neither well. The exception is a passage still
    shorter than `tiny_chars` (a heading, a caption, a page-break fragment): it joins
    the next paragraph, which gives that text its context instead of a passage of
    three words that matches every query vaguely. A single sentence longer than
    `max_chars` is one passage on its own (sentences are never cut here).

    Raises:
        InputError: sentences out of order, overlapping or outside `text`, or limits
            that leave no room (max_sentences < 1, overlap < 0 or >= max_sentences).
    """
    _check_passage_args(text, sentences, max_chars, max_sentences, overlap, tiny_chars)
    breaks = _paragraph_breaks(text, sentences)
    passages: list[PassageSpan] = []
    first, carried, count = 0, 0, len(sentences)
    while first < count:
        last = first + carried + 1  # exclusive; at least one sentence not seen before
        while last < count and _fits(sentences, first, last, max_chars, max_sentences):
            if breaks[last] and (
                sentences[last - 1].end - sentences[first].start >= tiny_chars
            ):
                break
            last += 1
        group = tuple(sentences[first:last])
        passages.append(PassageSpan(group[0].start, group[-1].end, group))
        carried = 0
        if last < count and not breaks[last]:
            carried = _carried(sentences, first, last, overlap, max_chars, max_sentences)
        first = last - carried
    return passages


def _fits(sentences: Sequence[Span], first: int, last: int, max_chars: int, max_sentences: int) -> bool:
    """Whether sentence `last` can join the passage `sentences[first:last]`."""
    return last - first < max_sentences and sentences[last].end - sentences[first].start <= max_chars


def _paragraph_breaks(text: str, sentences: Sequence[Span]) -> list[bool]:
    """For each sentence, whether a blank line (or page/paragraph separator) precedes it."""
    breaks = [False]
    for previous, current in zip(sentences, sentences[1:]):
        gap = text[previous.end : current.start]
        breaks.append(gap.count("\n") >= 2 or "\f" in gap or "\u2029" in gap)
    return breaks


def _carried(sentences, first: int, last: int, overlap: int, max_chars: int, max_sentences: int) -> int:
    """How many of the passage's last sentences open the next passage.

    Fewer than `overlap` when the passage is that short (never all of it) or when the
    carried sentences plus the next new one would not fit: every passage must add at
    least one sentence the previous one did not have.
    """
    carried = min(overlap, last - first - 1)
    while carried > 0 and not _fits(sentences, last - carried, last, max_chars, max_sentences):
        carried -= 1
    return carried


def _check_passage_args(text, sentences, max_chars, max_sentences, overlap, tiny_chars) -> None:
    if not isinstance(text, str):
        raise InputError(f"text must be a str, not {type(text).__name__}")
    if max_chars < 1 or max_sentences < 1 or tiny_chars < 0:
        raise InputError("max_chars and max_sentences must be >= 1, tiny_chars >= 0")
    if not 0 <= overlap < max_sentences:
        raise InputError(f"overlap must be in [0, max_sentences), got {overlap}")
    previous_end = 0
    for span in sentences:
        if not (previous_end <= span.start < span.end <= len(text)):
            raise InputError(
                f"sentence spans must be ordered, non-empty, non-overlapping and inside "
                f"the text (length {len(text)}); got {span} after end {previous_end}"
            )
        previous_end = span.end


FRAGMENT_WEIGHT = 20  # passages with fewer letters (a CJK character counts 3) are merged


def segment(text: str, language: str | None = None, *, drop_junk: bool = True,
            **passage_opts) -> list[PassageSpan]:
    """Sentences of `text` grouped into passages; `passage_opts` go to `make_passages`.

    Example: [engine.junk.passage_text(text, p) for p in segment(text, "de", max_sentences=3)]

    With `drop_junk` (the default), content-free lines (tables of contents, page
    numbers, navigation bars; see `engine.junk`) are left out of every passage and
    passages too short to mean anything on their own are merged into a neighbour.
    Read a passage's text with `engine.junk.passage_text`, which skips the junk lines
    that may lie between its first and last sentence.
    """
    sentences = split_sentences(text, language)
    if not drop_junk:
        return make_passages(text, sentences, **passage_opts)

    passages = make_passages(text, junk.drop_junk(text, sentences), **passage_opts)
    return junk.merge_fragments(text, passages, FRAGMENT_WEIGHT)
