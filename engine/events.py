"""What long-running engine generators yield, and what search returns.

Front ends (CLI progress bar, Qt worker) only read these plain frozen objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.query import ParsedQuery


@dataclass(frozen=True)
class IndexProgress:
    """Yielded after each file is stored, after each batch of passages encoded (a large
    file reports while it is encoded), and while a model switch re-encodes.

    A file counts as done once its passages are written, not when it was read: the
    encoder works on batches of files, and counting earlier made "80 / 80 files,
    about 0 s left" appear while half of them still waited for their vectors. The rate
    and the time left count passages, not files (engine.throughput): files hold very
    different amounts of work.
    """

    files_done: int
    files_total: int
    passages: int  # passages written so far in this run
    rate: float  # passages encoded per second over this run
    eta_s: float | None  # seconds left; None until a rate is known
    current: str | None = None  # path being worked on
    # what files_done / files_total count: "files" while indexing, "passages" while a
    # model switch re-encodes (there are no files to count then)
    unit: str = "files"
    # set while another process writes to the library and this run waits for its turn
    waiting: str | None = None
    encoded: int = 0  # passages encoded so far in this run (ahead of `passages` while they are stored)


@dataclass(frozen=True)
class SkippedFile:
    path: str
    reason: str


@dataclass(frozen=True)
class IndexSummary:
    indexed: int = 0
    unchanged: int = 0
    removed: int = 0
    skipped: tuple[SkippedFile, ...] = ()
    passages: int = 0
    cancelled: bool = False
    # seconds spent per stage (extract, encode, store, vectors), for benchmarks
    stage_seconds: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class IndexFinished:
    """The last event of an indexing run."""

    summary: IndexSummary


IndexEvent = IndexProgress | IndexFinished


@dataclass(frozen=True)
class PassageHit:
    passage_id: int
    score: float  # ranking score: cosine in mode "dense", BM25 share in "keyword", their fusion in "fused"
    text: str
    start: int  # character offsets of the passage in the document's extracted text
    end: int
    page: int | None  # 1-based PDF page of the passage start, else None
    language: str | None  # ISO 639-1
    snippet: str  # the passage on one line, shortened for display
    matched_by: str = "meaning"  # "keywords", "meaning" or "both" (engine.search.MATCH_KINDS)
    cosine: float | None = None  # cosine similarity to the query, when the query was encoded
    keyword_score: float = 0.0  # BM25 over the query's best possible BM25, 0..1; 0 for no match


@dataclass(frozen=True)
class DocumentHit:
    """One document in a result list; its passages are best first."""

    path: str  # absolute
    score: float  # best passage score
    language: str | None
    file_type: str  # extension without the dot, lower case
    passages: tuple[PassageHit, ...] = field(default_factory=tuple)

    matched_by: str = "meaning"  # "keywords", "meaning" or "both": how its passages matched
    # A weaker match: far below the best document (engine.search_config.SearchConfig.weak_below),
    # or any match of a query nothing answers well; front ends show these apart.
    weak: bool = False

    @property
    def best(self) -> PassageHit:
        return self.passages[0]


@dataclass(frozen=True)
class SearchResults:
    """One search: the best documents, and how many documents match in all."""

    hits: tuple[DocumentHit, ...]  # best first, at most k: the strong ones, then the weak ones
    total: int  # documents that really match (every one, not only the k shown); weak ones not
    languages: dict[str, int]  # documents per language among all `total` matches ('' unknown)
    complete: bool = True  # False when so many passages matched that counting stopped: "at least"
    weak_total: int = 0  # weaker matches besides `total` (DocumentHit.weak), shown after the others
    query: ParsedQuery | None = None  # what was searched for: its words to mark (`query.highlight`)
