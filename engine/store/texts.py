"""Extracted texts kept in the database, for documents that are costly to read again.

    >>> data = encode_text(extracted)          # zlib-compressed JSON
    >>> decode_text(data) == extracted

A member of an archive or a mailbox can only be read by unpacking its container, and
an OCR'd scan costs seconds a page; the preview reads their text from here instead.
"""

from __future__ import annotations

import dataclasses
import json
import zlib

from engine.extract.base import ExtractedText, Heading

_TUPLES = ("page_starts", "page_labels", "ocr_pages")


def encode_text(extracted: ExtractedText) -> bytes:
    """Example: len(encode_text(ExtractedText("a" * 10_000, "txt"))) < 100"""
    return zlib.compress(json.dumps(dataclasses.asdict(extracted), ensure_ascii=False).encode("utf-8"), 6)


def decode_text(data: bytes) -> ExtractedText:
    fields = json.loads(zlib.decompress(data).decode("utf-8"))
    known = {f.name for f in dataclasses.fields(ExtractedText)}
    fields = {k: (tuple(v) if k in _TUPLES else v) for k, v in fields.items() if k in known}
    if "headings" in fields:
        fields["headings"] = tuple(Heading(**h) for h in fields["headings"])
    return ExtractedText(**fields)
