"""From one extracted document (a file, or a member inside one) to what the store writes.

    >>> outcome = document_outcome(place, tree_document, config, dim, unsupported)
    >>> # DocumentWrite (passages to encode), FailureWrite (a reason), or None

The indexer calls this for each document `engine.extract.extract_tree` gives: it
segments the text into passages, detects their languages, and says where the document
lives: a member's key is below its file's (`engine.scan.member_key`), its parent is
the document that holds it, and its date is its own (a message's Date header).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import numpy as np

from engine.errors import ExtractionError, MissingToolError, UnsupportedFormatError
from engine.extract import SUPPORTED_EXTENSIONS, ExtractedText, TreeDocument, page_of
from engine.extract.base import PAGE_KINDS
from engine.extract.members import PURE_CONTAINERS
from engine.junk import passage_text
from engine.langid import detect_language, document_language, passage_languages
from engine.passage_context import passage_contexts
from engine.scan import member_key
from engine.segment import PassageSpan, Span, segment
from engine.store import DocumentWrite, FailureWrite, NewPassage
from engine.store.texts import encode_text

# File types named by the format when the name has no known extension (a Maildir message).
_FORMAT_TYPES = {"eml": "eml", "mbox": "mbox", "man": "man"}
MAX_FILE_TYPE_CHARS = 16  # the column's width


@dataclass(frozen=True)
class DocumentPlace:
    """The file on disk that a tree of documents comes from."""

    file: Path
    key: str
    size: int
    mtime: float
    digest: str


class Unsupported:
    """Members of one file in formats Babelfind does not read, counted by extension.

    An archive of program files or photos would otherwise list each member as skipped;
    one line says it all: "12 members not read (formats not supported: .class 10, .bin 2)".
    """

    def __init__(self):
        self.kinds: Counter[str] = Counter()

    def add(self, name: str) -> None:
        self.kinds[PurePosixPath(name).suffix.lower() or "no extension"] += 1

    def __bool__(self) -> bool:
        return bool(self.kinds)

    def reason(self) -> str:
        total = sum(self.kinds.values())
        kinds = ", ".join(f"{kind} {count:,}" for kind, count in self.kinds.most_common(5))
        more = ", ..." if len(self.kinds) > 5 else ""
        return f"{total:,} member{'s' * (total != 1)} not read (formats not supported: {kinds}{more})"


def file_type(path: Path | str, fmt: str | None = None) -> str:
    """The type filters see: the extension when Babelfind knows it, else the format's own.

    Example: file_type(Path("a.PDF")) == "pdf"; file_type(Path("1700.M1:2,S"), "eml") == "eml"
    """
    suffix = PurePosixPath(str(path)).suffix.lower()
    if suffix in SUPPORTED_EXTENSIONS:
        return suffix.lstrip(".")
    if fmt in _FORMAT_TYPES:
        return _FORMAT_TYPES[fmt]
    return suffix.lstrip(".")[:MAX_FILE_TYPE_CHARS]


def document_outcome(place: DocumentPlace, document: TreeDocument, config, dim: int,
                     unsupported: Unsupported) -> DocumentWrite | FailureWrite | None:
    """What to store for one document of `place`'s file; None for a member left unsaid."""
    inner = document.inner
    key = member_key(place.key, inner)
    parent = None if not inner else member_key(place.key, inner[:-1])
    name = inner[-1] if inner else place.file.name
    size = document.size if inner else place.size
    mtime = place.mtime if not inner or document.mtime is None else document.mtime
    error = document.error
    if error is not None and document.extracted is None:
        if inner and isinstance(error, UnsupportedFormatError) and not isinstance(error, MissingToolError):
            unsupported.add(name)
            return None
        return FailureWrite(key, size, mtime, place.digest, file_type(name), error.reason, parent)
    extracted = document.extracted
    kind = file_type(name, extracted.format)
    if extracted.format in PURE_CONTAINERS:
        # The archive's own record: no passages; a failure when not all of it could be read.
        if error is not None:
            return FailureWrite(key, size, mtime, place.digest, kind, error.reason, parent)
        return DocumentWrite(key, size, mtime, place.digest, kind, extracted.format, None, (),
                             np.empty((0, dim), np.float32), parent=parent, status="container")
    try:
        passages, language = _passages(place.file if not inner else Path(name), extracted, config)
    except ExtractionError as e:
        return FailureWrite(key, size, mtime, place.digest, kind, e.reason, parent)
    keep_text = bool(inner) or bool(extracted.ocr_pages)  # costly to read again for a preview
    return DocumentWrite(
        path=key,
        size=size,
        mtime=mtime,
        content_hash=place.digest,
        file_type=kind,
        format=extracted.format,
        language=language,
        passages=passages,
        vectors=np.empty((0, dim), np.float32),
        parent=parent,
        title=extracted.title,
        date=extracted.date,
        text=encode_text(extracted) if keep_text else None,
    )


def _passages(path: Path, extracted: ExtractedText, config) -> tuple[tuple[NewPassage, ...], str | None]:
    """The document's passages, and its language: the one holding most of their text."""
    spans = _spans(extracted, config)
    texts = [passage_text(extracted.text, s) for s in spans]
    if not texts:
        raise ExtractionError(path, "no text to index")
    languages = passage_languages(texts)
    majority = document_language(languages, [len(t) for t in texts])
    contexts = passage_contexts(extracted.title, extracted.headings, [(s.start, s.end) for s in spans],
                                languages, majority, file_name=path.name)
    passages = tuple(NewPassage(text, s.start, s.end, page_of(extracted, s.start), lang, context)
                     for text, s, lang, context in zip(texts, spans, languages, contexts))
    return passages, majority


def _spans(extracted: ExtractedText, config) -> list[PassageSpan]:
    """Passages of the text; a sheet or a slide is never joined to the next one.

    A PDF's paragraph often runs on over the page break, so its passages may too; a
    slide or a sheet is a unit of its own, and a result must name the right one.
    """
    text = extracted.text
    options = dict(max_chars=config.passage_max_chars, max_sentences=config.passage_max_sentences,
                   overlap=config.passage_overlap, tiny_chars=config.passage_join_chars,
                   drop_junk=config.drop_junk)
    # The language's abbreviation and ordinal rules ("16. Jahrhundert") help the splitter.
    language = detect_language(text)
    if extracted.format not in PAGE_KINDS or len(extracted.page_starts) < 2:
        return segment(text, language, **options)
    bounds = sorted(set(extracted.page_starts)) + [len(text)]
    spans: list[PassageSpan] = []
    for start, end in zip(bounds, bounds[1:]):
        spans += [_shifted(span, start) for span in segment(text[start:end], language, **options)]
    return spans


def _shifted(span: PassageSpan, offset: int) -> PassageSpan:
    return PassageSpan(span.start + offset, span.end + offset,
                       tuple(Span(s.start + offset, s.end + offset) for s in span.sentences))
