"""Plain-text formats (.txt .md .rst .csv): find the encoding, refuse binary junk.

The encoding is never assumed: a BOM decides first, then strict UTF-8 (fast, and right
for ASCII), then charset-normalizer on a bounded sample, so a 50 MB file costs one
detection on 256 KiB plus one decode, not several scans of the whole file.
"""

from __future__ import annotations

import codecs
import logging
import unicodedata
from pathlib import Path

from engine.errors import ExtractionError
from engine.extract.base import (
    HEADING_MARK,
    ExtractedText,
    normalise_whitespace,
    normalise_with_headings,
    without_heading_marks,
)
from engine.extract.markup import strip_markdown, strip_rst

log = logging.getLogger(__name__)

DETECT_SAMPLE_BYTES = 256 * 1024
PRINTABLE_SAMPLE_CHARS = 64 * 1024
# More than this share of control or undecodable characters means "not text".
MAX_JUNK_RATIO = 0.02
# Longest first: the UTF-32 LE BOM starts with the UTF-16 LE one.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_ALLOWED_CONTROLS = frozenset("\t\n\r\f\v")
BINARY_REASON = "binary content, not text"
# Most used first: when several codecs explain the bytes equally well, the common one wins.
COMMON_ENCODINGS = ("utf_8", "cp1252", "cp1251", "shift_jis", "cp932", "gb18030", "euc_kr", "big5")


def bom_encoding(data: bytes) -> str | None:
    """Codec named by a byte-order mark at the start of `data`, if any."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding
    return None


def _utf8_prefix_ok(sample: bytes, is_whole: bool) -> bool:
    """Strict UTF-8 check that tolerates a character cut at the end of a sample."""
    try:
        sample.decode("utf-8")
        return True
    except UnicodeDecodeError as e:
        # A multi-byte character cut by the sample boundary is at most 3 bytes short.
        return not is_whole and e.start >= len(sample) - 3 and e.reason == "unexpected end of data"


def _detect_sample(data: bytes) -> bytes:
    """At most DETECT_SAMPLE_BYTES, cut after a newline so no character is split."""
    if len(data) <= DETECT_SAMPLE_BYTES:
        return data
    sample = data[:DETECT_SAMPLE_BYTES]
    cut = sample.rfind(b"\n")
    return sample[: cut + 1] if cut > DETECT_SAMPLE_BYTES // 2 else sample


def detect_encoding(data: bytes, hint: str | None = None) -> str | None:
    """Best codec for `data`, or None when it does not look like any text encoding.

    Example: detect_encoding("Grüße".encode("cp1252")) in {"cp1252", "cp1250", ...}
    """
    if encoding := bom_encoding(data):
        return encoding
    sample = _detect_sample(data)
    if hint and _decodes(sample, hint, is_whole=len(sample) == len(data)):
        return hint
    if _utf8_prefix_ok(sample, is_whole=len(sample) == len(data)):
        return "utf-8"
    from charset_normalizer import from_bytes  # lazy: only non-UTF-8 files pay for it

    matches = from_bytes(sample)
    best = matches.best()
    if best is None:
        return None
    return _preferred_among_ties(best, matches)


def _preferred_among_ties(best, matches) -> str:
    """Break charset-normalizer's ties (cp1250 vs cp1252 score alike on French) by prevalence."""
    tied: set[str] = set()
    for match in matches:
        if (match.percent_chaos, match.percent_coherence) == (best.percent_chaos, best.percent_coherence):
            tied.update(match.could_be_from_charset)
    for encoding in COMMON_ENCODINGS:
        if encoding in tied:
            return encoding
    return best.encoding


def _decodes(sample: bytes, encoding: str, is_whole: bool) -> bool:
    try:
        codecs.lookup(encoding)
    except LookupError:
        return False
    try:
        sample.decode(encoding)
        return True
    except UnicodeDecodeError as e:
        return not is_whole and e.start >= len(sample) - 4


def is_mostly_printable(text: str) -> bool:
    """False when control characters or U+FFFD make up more than MAX_JUNK_RATIO."""
    sample = text[:PRINTABLE_SAMPLE_CHARS]
    if not sample:
        return True
    junk = sum(
        1
        for ch in sample
        if ch == "\ufffd" or (unicodedata.category(ch) == "Cc" and ch not in _ALLOWED_CONTROLS)
    )
    return junk <= MAX_JUNK_RATIO * len(sample)


def looks_like_text(data: bytes) -> bool:
    """Cheap verdict on the first bytes of a file: does it read as text in some encoding?"""
    sample = _detect_sample(data)
    encoding = detect_encoding(sample)
    if encoding is None:
        return False
    return is_mostly_printable(sample.decode(encoding, errors="replace"))


def decode_text(data: bytes, path: Path, hint: str | None = None) -> str:
    """Decode a whole text file, raising ExtractionError for binary content.

    Args:
        data: the file's bytes.
        path: for the error message.
        hint: an encoding the file declares (an HTML meta charset); used when it fits.
    """
    encoding = detect_encoding(data, hint)
    if encoding is None:
        raise ExtractionError(path, BINARY_REASON)
    log.debug("%s: decoding as %s", path, encoding)
    text = _decode_whole(data, encoding)
    if not is_mostly_printable(text):
        raise ExtractionError(path, BINARY_REASON)
    return text


def _decode_whole(data: bytes, encoding: str) -> str:
    """Decode all of `data`; if a file that began as UTF-8 turns out not to be, look again.

    The sample only shows the head of a large file: ASCII for 300 KiB, then cp1252.
    Detection then runs once more on the bytes around the first invalid sequence.
    """
    if encoding != "utf-8":
        return data.decode(encoding, errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        window = data[max(0, e.start - DETECT_SAMPLE_BYTES // 2) : e.start + DETECT_SAMPLE_BYTES // 2]
        better = detect_encoding(window) or "utf-8"
        return data.decode(better, errors="replace")


_HEADING_STRIPPERS = {"md": strip_markdown, "rst": strip_rst}


def extract_text_file(path: Path, data: bytes, fmt: str) -> ExtractedText:
    """Text of a .txt/.md/.rst/.csv file; markdown and reST lose their light syntax and
    give their section headings."""
    text = decode_text(data, path)
    stripper = _HEADING_STRIPPERS.get(fmt)
    if stripper is None:
        return ExtractedText(text=normalise_whitespace(text), format=fmt)
    text, title = stripper(without_heading_marks(text), HEADING_MARK)
    text, headings = normalise_with_headings(text)
    return ExtractedText(text=text, format=fmt, title=title, headings=headings)


