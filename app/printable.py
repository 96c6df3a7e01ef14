"""Text from files and names made safe to print: no colours, cursor moves, split lines or
reversed text from a crafted file name.

    >>> printable("report\x1b[31m\u202eFDP.exe\n")
    'report\\x1b[31m\\u202eFDP.exe\\n'
    >>> with escaped_stdout():      # everything printed on stdout, as a safety net
    ...     print(hit.path)

A file may be named with an ANSI escape sequence (the terminal obeys it), a newline (one
result prints as two) or U+202E RIGHT-TO-LEFT OVERRIDE (the rest of the line displays
reversed), and the same goes for a snippet's text, a model manifest's fields or a lock
file's contents. `printable` escapes C0 and C1 control characters, DEL, the bidirectional
formatting characters and the line and paragraph separators, and shows a byte that was
not UTF-8 (a lone surrogate, as Python decodes it) as \\xNN. Joiners (U+200C, U+200D)
stay: Persian, Indic scripts and emoji need them.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

_BIDI = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_SEPARATORS = [0x2028, 0x2029]


def _one_line_table() -> dict[int, str]:
    table = {c: f"\\x{c:02x}" for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)]}
    table |= {ord("\n"): "\\n", ord("\t"): "\\t", ord("\r"): "\\r"}
    table |= {c: f"\\u{c:04x}" for c in _BIDI + _SEPARATORS}
    table |= {c: f"\\x{c - 0xDC00:02x}" for c in range(0xDC80, 0xDD00)}  # surrogateescape'd bytes
    return table


def _stream_table() -> dict[int, str]:
    """C0 controls as \\xNN (json.dumps escapes them itself, so they only come from plain
    lines); the rest as \\uNNNN, which is also valid inside a JSON string."""
    table = {c: f"\\x{c:02x}" for c in range(0x20) if chr(c) not in "\n\t"}
    table |= {c: f"\\u{c:04x}" for c in [0x7F, *range(0x80, 0xA0), *_BIDI, *_SEPARATORS, *range(0xDC80, 0xDD00)]}
    return table


_ONE_LINE = _one_line_table()
_LINES = _stream_table()


def printable(text: object) -> str:
    """`text` as one line with nothing a terminal would act on; see the module docstring."""
    return str(text).translate(_ONE_LINE)


class EscapingStream:
    """A text stream that escapes what `printable` does, except line breaks and tabs.

    For stdout, where Babelfind writes plain lines and JSON: json.dumps leaves C1 controls,
    bidirectional characters and lone surrogates in its strings, and their \\u escapes
    are still valid JSON, read back as the same text."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(text.translate(_LINES))

    def __getattr__(self, name):
        return getattr(self._stream, name)


@contextmanager
def escaped_stdout() -> Iterator[None]:
    """Routes sys.stdout through an EscapingStream while the block runs."""
    original = sys.stdout
    sys.stdout = EscapingStream(original)
    try:
        yield
    finally:
        sys.stdout = original
