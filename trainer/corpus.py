"""Training sentences from the user's files, folders or indexed collections.

    >>> corpus = load_corpus(CorpusSource(paths=("notes/",)), CorpusFilter(), seed=42)
    >>> corpus.stats.kept, corpus.sentences[0]

Files go through the engine's extractors (`engine.extract.extract`) and sentence splitter
(`engine.segment.split_sentences`), so every format the app indexes can be trained on. A
`.txt` file with one sentence a line (SimCSE's wiki1m) is read line by line instead. An
indexed collection gives its stored passages' sentences (passages overlap, so repeated
sentences are counted as duplicates). Sentences are de-duplicated, length-filtered and
shuffled with the seed, and `CorpusStats` says how many of each were dropped.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

from engine.errors import ExtractionError, InputError
from engine.safe_open import open_regular_text
from engine.scan import path_key

log = logging.getLogger(__name__)

# How many lines decide whether a .txt file is one sentence a line.
_SNIFF_LINES = 2000


class CorpusTooSmallError(InputError):
    """Fewer usable sentences than training needs; `stats` says where they went."""

    def __init__(self, kept: int, needed: int, stats: CorpusStats):
        self.kept, self.needed, self.stats = kept, needed, stats
        super().__init__(
            f"the corpus has {kept} usable sentences but training needs at least {needed} "
            f"(two batches); read {stats.read}, dropped {stats.duplicates} duplicates, "
            f"{stats.too_short} too short and {stats.too_long} too long. Add more documents "
            "or lower the batch size."
        )


ALL_INDEXED = "*"  # as a collection: every indexed document of the library


@dataclass(frozen=True)
class CorpusSource:
    """Where the sentences come from: files/folders, or one indexed collection."""

    paths: tuple[str, ...] = ()
    collection: str | None = None  # a root path of the library, that folder's name, or ALL_INDEXED
    one_per_line: bool | None = None  # .txt files: one sentence a line; None: guess
    db_url: str | None = None  # the library's database (default: BABELFIND_HOME's)


@dataclass(frozen=True)
class CorpusFilter:
    min_chars: int = 10
    max_chars: int = 1000
    min_words: int = 3
    max_words: int = 200


@dataclass(frozen=True)
class CorpusStats:
    """Counts shown before training: every sentence read ends in exactly one bucket."""

    files: int = 0
    files_failed: int = 0
    read: int = 0
    duplicates: int = 0
    too_short: int = 0
    too_long: int = 0
    kept: int = 0
    failures: tuple[str, ...] = field(default=(), repr=False)  # "path: reason", first few


@dataclass(frozen=True)
class Corpus:
    sentences: tuple[str, ...]
    stats: CorpusStats


Progress = Callable[[int, str], None]  # (files done, current file)


def load_corpus(source: CorpusSource, filt: CorpusFilter, seed: int, *,
                min_sentences: int = 0, progress: Progress | None = None) -> Corpus:
    """The de-duplicated, filtered, shuffled sentences of `source`.

    Raises:
        InputError: nothing to read (no paths, unknown collection, missing path).
        CorpusTooSmallError: fewer than `min_sentences` sentences survive.
    """
    if bool(source.paths) == bool(source.collection):
        raise InputError("choose the training sentences: files/folders or one collection")
    counter = _Counter()
    if source.collection:
        raw = collection_sentences(source.collection, source.db_url)
    else:
        raw = file_sentences(source.paths, source.one_per_line, counter, progress)
    sentences = filter_sentences(raw, filt, counter)
    random.Random(seed).shuffle(sentences)
    stats = counter.stats(len(sentences))
    if len(sentences) < min_sentences:
        raise CorpusTooSmallError(len(sentences), min_sentences, stats)
    return Corpus(tuple(sentences), stats)


def filter_sentences(raw: Iterable[str], filt: CorpusFilter, counter: _Counter) -> list[str]:
    """Whitespace-normalised sentences in first-seen order, without duplicates or outliers."""
    seen: set[str] = set()
    kept: list[str] = []
    for sentence in raw:
        counter.read += 1
        text = " ".join(sentence.split())
        words = len(text.split())
        if len(text) < filt.min_chars or words < filt.min_words:
            counter.too_short += 1
        elif len(text) > filt.max_chars or words > filt.max_words:
            counter.too_long += 1
        elif text in seen:
            counter.duplicates += 1
        else:
            seen.add(text)
            kept.append(text)
    return kept


class _Counter:
    def __init__(self) -> None:
        self.files = self.files_failed = self.read = 0
        self.duplicates = self.too_short = self.too_long = 0
        self.failures: list[str] = []

    def stats(self, kept: int) -> CorpusStats:
        return CorpusStats(self.files, self.files_failed, self.read, self.duplicates,
                           self.too_short, self.too_long, kept, tuple(self.failures[:20]))


def file_sentences(paths: Iterable[str], one_per_line: bool | None, counter: _Counter,
                   progress: Progress | None = None) -> Iterator[str]:
    """Sentences of every readable file under `paths`; unreadable files are counted."""
    from engine.extract import DOCUMENT_EXTENSIONS

    for path in _expand(paths, DOCUMENT_EXTENSIONS):
        counter.files += 1
        if progress:
            progress(counter.files, str(path))
        try:
            if path.suffix.lower() == ".txt" and _is_one_per_line(path, one_per_line):
                yield from _lines(path)
            else:
                yield from _document_sentences(path)
        except (ExtractionError, OSError, UnicodeError) as e:
            counter.files_failed += 1
            counter.failures.append(f"{path}: {e}")
            log.info("skipping %s: %s", path, e)


def _expand(paths: Iterable[str], extensions: frozenset[str]) -> Iterator[Path]:
    for item in paths:
        path = Path(item).expanduser()
        if path.is_file():
            yield path
        elif path.is_dir():
            for child in sorted(path.rglob("*")):
                if child.is_file() and child.suffix.lower() in extensions:
                    yield child
        elif path.exists():  # a FIFO or device: opening it could block or never end
            raise InputError(f"{path} is not a regular file or folder")
        else:
            raise InputError(f"{path} does not exist")


def _is_one_per_line(path: Path, one_per_line: bool | None) -> bool:
    """A .txt file with no blank line in its first lines is taken as one sentence a line."""
    if one_per_line is not None:
        return one_per_line
    with open_regular_text(path) as f:  # a FIFO or a link to /dev/zero is refused, not read
        head = [line for _, line in zip(range(_SNIFF_LINES), f)]
    return len(head) > 1 and all(line.strip() for line in head)


def _lines(path: Path) -> Iterator[str]:
    with open_regular_text(path) as f:
        for line in f:
            if line.strip():
                yield line


def _document_sentences(path: Path) -> Iterator[str]:
    from engine.extract import extract
    from engine.segment import split_sentences

    text = extract(path).text
    for span in split_sentences(text):
        yield text[span.start:span.end]


def collection_sentences(collection: str, db_url: str | None = None) -> Iterator[str]:
    """Sentences of the stored passages of one indexed root (by path or folder name), or
    of every indexed document for ALL_INDEXED."""
    from engine.config import data_paths
    from engine.segment import split_sentences
    from engine.store import Store

    store = Store.open(db_url or data_paths().db_url)
    try:
        rows = store.passage_texts(None if collection == ALL_INDEXED else _find_root(store, collection))
    finally:
        store.close()
    for text, language in rows:
        for span in split_sentences(text, language):
            yield text[span.start:span.end]


def _find_root(store, collection: str) -> str:
    roots = [root.path for root, *_ in store.roots()]
    wanted = path_key(Path(collection).expanduser().absolute()) if "/" in collection else None
    matches = [r for r in roots if r == collection or r == wanted or Path(r).name == collection]
    if len(matches) == 1:
        return matches[0]
    known = ", ".join(roots) or "none"
    if not matches:
        raise InputError(f"no indexed collection '{collection}' (indexed: {known})")
    raise InputError(f"'{collection}' names several collections ({', '.join(matches)}); give the path")

