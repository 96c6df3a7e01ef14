"""Durations and sizes as the window writes them, for every part of it.

    >>> duration_text(75), size_text(3_400_000)
    ('1 min 15 s', '3.4 MB')
"""

from __future__ import annotations


def duration_text(seconds: float) -> str:
    """Example: duration_text(75) == "1 min 15 s"; duration_text(4.2) == "4 s"."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def size_text(size: int) -> str:
    """Example: size_text(1536) == "1.5 KB"; size_text(3_400_000) == "3.4 MB"."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} bytes"
