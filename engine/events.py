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
    counts passages, the time left the seconds of reading and encoding left, not files
    (engine.throughput): files hold very different amounts of work.
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
class ScoreParts:
    """The parts of a passage's score (engine.explain): why it stands where it does."""

    # the vectors as stored (the passage's with its section context); None when the query was not encoded
    plain_cosine: float | None
    cosine: float | None  # in the space the search ranks by (the same as plain when the correction is off)
    # cosine to the centroid of the passage's document, mixed into the score with the
    # context weight (engine.index.document_context); None when the context is off
    document: float | None
    hubness: float  # subtracted from `cosine` (0: no penalty; below 0 for a passage far from every query)
    z: float | None  # the corrected cosine (context in, hubness out) in deviations above this query's mean
    meaning: float  # the fused score's meaning part: z / best z, never below 0 (0 without a dense score)
    keyword_share: float  # BM25 / the query's best possible BM25, 0..1
    keywords: float  # what the keywords add to the fused score (weight x discounted share)
    score: float  # the ranking score

    def text(self) -> str:
        """One line, e.g. "cosine 0.440 (plain 0.810), document 0.520, hubness -0.010, z 3.20 ->
        meaning 1.00; keywords 0.00 -> +0.00; score 1.000" (the hubness part as it changes the
        cosine)."""
        parts = []
        if self.cosine is not None:
            plain = f" (plain {self.plain_cosine:.3f})" if self.plain_cosine is not None else ""
            z = "-" if self.z is None else f"{self.z:.2f}"
            document = f", document {self.document:.3f}" if self.document is not None else ""
            parts.append(f"cosine {self.cosine:.3f}{plain}{document}, hubness {-self.hubness:+.3f}, "
                         f"z {z} -> meaning {self.meaning:.2f}")
        parts.append(f"keywords {self.keyword_share:.2f} -> +{self.keywords:.2f}")
        return "; ".join(parts) + f"; score {self.score:.3f}"


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
    explanation: ScoreParts | None = None  # the score's parts, when the search was asked to explain


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
    title: str | None = None  # the document's own title (a message's subject), when it has one
    format: str | None = None  # what extraction read it as: names its pages (engine.extract.page_name)

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
    language: str | None = None  # the query's, as detected: its stems mark too (HighlightTerms.stemmed)
    best_z: float | None = None  # the best candidate's z: the fused score's meaning part is z / best_z
    unknown_names: tuple[str, ...] = ()  # names in the query no passage holds (engine.search.unknown_names)
    left_out: tuple[tuple[str, int], ...] = ()  # each excluded word or phrase, and the documents it left out
