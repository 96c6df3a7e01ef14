"""Where sentences and passages lie in a text: offsets only, the text stays where it is.

    >>> text[span.start:span.end]                       # one sentence
    >>> [text[s.start:s.end] for s in passage.sentences]

Made by engine.segment (sentences, passages) and filtered by engine.junk (lines without
content), which both build on these two types.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    """One sentence: `text[start:end]`, without surrounding whitespace."""

    start: int
    end: int


@dataclass(frozen=True, slots=True)
class PassageSpan:
    """Consecutive sentences read as one unit; start/end are the first and last sentence's."""

    start: int
    end: int
    sentences: tuple[Span, ...]
