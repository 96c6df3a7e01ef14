"""What a passage is encoded with besides its own words: its document's title and section.

    >>> contexts = passage_contexts(extracted.title, extracted.headings, spans, languages, "ru")
    >>> vectors = encode_with_contexts(encoder, texts, contexts, weight=0.35)

A passage is encoded alone, so a paragraph of a DHCP section that never writes "DHCP", or
a paragraph of a chapter on packaging files that speaks of "this file", carries nothing of
what its section is about, while a question names exactly that. So each passage has a
context, its document's title and the heading of the section it falls under ("Chapter 4.
Required files / 4.2. The copyright file"), and its vector is its own plus `weight` times
its context's, re-normalised. The context is encoded on its own, once per distinct context,
so the passage keeps its own words at full strength: encoding "<context>: <passage>" as one
text let a long title outweigh a short paragraph's words (docs/benchmarks.md, "Passages
encoded with their section heading", which measures both and the weight).

A passage in another language than its document's (an English paragraph left untranslated
in a Russian chapter) gets no context: it would pull the passage toward a language it is
not written in. A document with neither title nor headings (plain text, a news article)
gives its passages none, and their vectors are their own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from engine.extract.base import Heading

# How far a passage's vector moves toward its context's: chosen on five dev sets (xling,
# manual5, english-doc, faq4, mixed), the only weight tried that loses no top-1 on any.
CONTEXT_WEIGHT = 0.35
MAX_CONTEXT_CHARS = 300  # a title and a heading; past this the rest is not context


def passage_contexts(title: str | None, headings: Sequence[Heading], spans: Sequence[tuple[int, int]],
                     languages: Sequence[str | None], document_language: str | None,
                     file_name: str | None = None) -> list[str | None]:
    """The context of each passage (start, end offsets into the text, in text order): the
    title and the last heading that starts before the passage ends, "title / heading"; the
    title or the heading alone when there is one only or the heading repeats the title;
    None when there is neither, or the passage's language is not its document's. A title
    that is only the document's `file_name` ("pic-1.html", as groff writes its pages'
    titles) says nothing of what the text is about and is left out."""
    if title and file_name and _names_file(title, file_name):
        title = None
    starts = [h.start for h in headings]
    out: list[str | None] = []
    for (_start, end), language in zip(spans, languages):
        if language != document_language:
            out.append(None)
            continue
        under = int(np.searchsorted(starts, end, side="left")) - 1
        heading = headings[under].text if under >= 0 else None
        out.append(_context(title, heading))
    return out


def _context(title: str | None, heading: str | None) -> str | None:
    if heading and title and _same(heading, title):
        heading = None
    context = f"{title} / {heading}" if title and heading else title or heading
    return context[:MAX_CONTEXT_CHARS] if context else None


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def _names_file(title: str, file_name: str) -> bool:
    """Whether `title` is `file_name`, with or without its extension."""
    stem = file_name.rsplit(".", 1)[0] if "." in file_name else file_name
    return _same(title, file_name) or _same(title, stem)


def encode_passages(encoder, texts: Sequence[str]) -> np.ndarray:
    """`texts` encoded as passages by `encoder` (an engine Encoder), float32 [n, dim]."""
    return encoder.encode(list(texts), kind="passage")


def encode_with_contexts(encoder, texts: Sequence[str], contexts: Sequence[str | None],
                         weight: float = CONTEXT_WEIGHT) -> np.ndarray:
    """Passages `texts` with their `contexts` encoded by `encoder` as the indexer encodes them."""
    return with_contexts(encode_passages(encoder, texts), contexts, partial(encode_passages, encoder), weight)


def with_contexts(vectors: np.ndarray, contexts: Sequence[str | None],
                  encode: Callable[[list[str]], np.ndarray], weight: float = CONTEXT_WEIGHT) -> np.ndarray:
    """`vectors` (float32 [n, dim], unit rows) of passages with `contexts`: each with a
    context moved toward it, v + weight * encode(context), re-normalised; the others as
    they are. `encode` turns texts into unit vectors as passages are encoded."""
    vectors = np.asarray(vectors, np.float32)
    distinct = sorted({c for c in contexts if c})
    if not distinct or weight == 0.0:
        return vectors
    row_of = {context: i for i, context in enumerate(distinct)}
    encoded = np.asarray(encode(distinct), np.float32)
    held = np.array([i for i, c in enumerate(contexts) if c], np.int64)
    moved = vectors[held] + weight * encoded[[row_of[contexts[i]] for i in held]]
    out = vectors.copy()
    out[held] = moved / np.linalg.norm(moved, axis=1, keepdims=True)
    return out
