"""The parallel-sentence finder on documents: read, dedupe, encode, mine, maybe align.

    >>> result = mine_documents(Path("de.pdf"), Path("en.docx"), encoder)
    >>> result.src_lang, result.tgt_lang, result.pairs[0]
    ('de', 'en', MinedPair(score=1.21, src_text='Hallo Welt.', tgt_text='Hello world.', ...))

`iter_mine_documents` is the same run as a generator for the GUI: it yields
`MiningProgress(stage, done, total)` events and finally `MiningFinished(result)`; the
caller cancels by no longer iterating (closing the generator).

Sentences come from extraction + segmentation, or, for .txt/.tsv files holding one
sentence per line, from the lines themselves (`lines=True`, or detected when None).
Both sides are encoded with kind="query": e5 models are trained with "query: " on both
sides of symmetric tasks (their model card names bitext mining as one), and models
without prefixes ignore the kind.

By default each side's language mean is taken out of its vectors before they are compared
(`space="neutral"`, the correction search uses: engine.index.language_means): a sentence
is then close to its translation rather than to everything in its own language, which
raised BUCC-style F1 on every language pair measured (docs/benchmarks.md,
"Parallel-sentence mining"). Scores are on that space's scale, hence thresholds per space.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.mining.alignment import AlignConfig, align_vectors, joined_neighbours, should_align
from engine.errors import ExtractionError, InputError
from engine.index.language_means import LanguageMeans
from engine.mining.margin import MARGINS, MODES, MiningConfig, neighbours_steps, select_pairs

log = logging.getLogger(__name__)

# Scores above which a pair counts as a translation, per vector space and margin, for the
# default model (multilingual-e5-small, its CPU int8 variant; fp32 gives 1.277, 0.118, 0.600
# in the neutral space): the best mean dev F1 over de fr es ru zh ar hi -> en in
# `bench/bench_mining.py f1` (docs/benchmarks.md, "Parallel-sentence mining").
SPACES = ("neutral", "plain")
DEFAULT_THRESHOLDS = {
    "neutral": {"ratio": 1.26, "distance": 0.117, "absolute": 0.587},
    "plain": {"ratio": 1.03, "distance": 0.025, "absolute": 0.875},
}
LINE_FILE_SUFFIXES = (".txt", ".tsv")
ALIGN_CHOICES = ("auto", "on", "off")
MAX_LINE_FILE_BYTES = 64 * 1024 * 1024
ENCODE_BATCH = 64


@dataclass(frozen=True)
class MiningOptions:
    """Everything a mining run can be told.

    Attributes:
        k, margin, mode: see `engine.mining.margin`.
        threshold: keep pairs scoring above it; None = DEFAULT_THRESHOLDS[space][margin]
            for mined pairs and no threshold for aligned beads.
        align: "on" aligns in document order, "off" never, "auto" when the mined pairs
            are nearly monotonic (`engine.mining.alignment.should_align`).
        lines: read .txt/.tsv files as one sentence per line; None = decide per file.
        src_lang, tgt_lang: ISO 639-1 codes; None = detect.
        allow_same_language: mine even when both sides are in one language.
        keep_below_threshold: return the candidates at or below the threshold too, for a
            reviewer to lower it; `MiningResult.threshold` still says where the cut lies,
            and only the pairs above it decide whether to align.
        space: "neutral" compares vectors with each side's language mean taken out,
            "plain" as encoded (see the module docstring).
    """

    k: int = 4
    margin: str = "ratio"
    mode: str = "max"
    threshold: float | None = None
    align: str = "auto"
    lines: bool | None = None
    src_lang: str | None = None
    tgt_lang: str | None = None
    allow_same_language: bool = False
    keep_below_threshold: bool = False
    space: str = "neutral"
    search: MiningConfig = field(default_factory=MiningConfig)
    alignment: AlignConfig = field(default_factory=AlignConfig)

    def __post_init__(self):
        if self.margin not in MARGINS:
            raise InputError(f"unknown margin '{self.margin}'; choose one of {', '.join(MARGINS)}")
        if self.mode not in MODES:
            raise InputError(f"unknown mode '{self.mode}'; choose one of {', '.join(MODES)}")
        if self.align not in ALIGN_CHOICES:
            raise InputError(f"unknown align '{self.align}'; choose one of {', '.join(ALIGN_CHOICES)}")
        if self.space not in SPACES:
            raise InputError(f"unknown space '{self.space}'; choose one of {', '.join(SPACES)}")
        if self.k < 1:
            raise InputError(f"k must be at least 1, got {self.k}")

    @property
    def effective_threshold(self) -> float:
        return DEFAULT_THRESHOLDS[self.space][self.margin] if self.threshold is None else self.threshold


@dataclass(frozen=True)
class MinedPair:
    """A pair of texts; indices are positions in the side's sentence list (several for a
    1-2 or 2-1 aligned bead, whose texts are the sentences joined by a space)."""

    score: float
    src_text: str
    tgt_text: str
    src_indices: tuple[int, ...]
    tgt_indices: tuple[int, ...]


@dataclass(frozen=True)
class MiningResult:
    pairs: tuple[MinedPair, ...]  # best score first, or in document order when aligned
    src_lang: str | None
    tgt_lang: str | None
    n_src: int  # sentences read on each side (duplicates included)
    n_tgt: int
    aligned: bool = False  # pairs come from ordered alignment rather than mining
    increasing: float = 0.0  # share of mined pairs in document order (see should_align)
    threshold: float = 0.0  # applied to the scores; -inf for aligned beads without one set
    # distinct sentences on each side: duplicates are encoded once, so the encoding
    # progress counts these, and a summary must show both figures to add up
    n_src_distinct: int = 0
    n_tgt_distinct: int = 0
    space: str = "plain"  # the vectors the scores come from (MiningOptions.space)

    def sentences_text(self) -> str:
        """Example: "80 and 80 sentences (79 and 79 distinct)"."""
        text = f"{self.n_src} and {self.n_tgt} sentences"
        if (self.n_src_distinct, self.n_tgt_distinct) not in ((0, 0), (self.n_src, self.n_tgt)):
            text += f" ({self.n_src_distinct} and {self.n_tgt_distinct} distinct)"
        return text


@dataclass(frozen=True)
class MiningProgress:
    stage: str  # "read source", "encode source", "search source", "align", ...
    done: int
    total: int


@dataclass(frozen=True)
class MiningFinished:
    result: MiningResult


MiningEvent = MiningProgress | MiningFinished


# ---- reading ------------------------------------------------------------------------


def _read_bytes(path: Path) -> bytes:
    """The file's bytes; only a regular file is opened (a FIFO or /dev/zero is refused)."""
    from engine.safe_open import read_regular

    try:
        return read_regular(path, MAX_LINE_FILE_BYTES)
    except ExtractionError as e:
        if isinstance(e.__cause__, FileNotFoundError):
            raise ExtractionError(path, "no such file") from e
        raise


def read_lines(path: Path) -> list[str]:
    """Non-empty lines of a text file; for .tsv the last tab-separated field of each line
    (PUD/Tatoeba style "id<TAB>sentence")."""
    from engine.extract.text_file import decode_text

    path = Path(path)
    text = decode_text(_read_bytes(path), path)
    lines = (line.rsplit("\t", 1)[-1] if path.suffix.lower() == ".tsv" else line for line in text.splitlines())
    return [" ".join(line.split()) for line in lines if line.strip()]


def looks_like_one_sentence_per_line(lines: Sequence[str], language: str | None = None) -> bool:
    """True when nearly every line is a single sentence (a sentence-per-line corpus file)."""
    from engine.segment import split_sentences

    sample = list(lines[:500])
    if len(sample) < 2:
        return False
    single = sum(1 for line in sample if len(split_sentences(line, language)) <= 1)
    return single >= 0.9 * len(sample)


def is_plain_text_file(path: Path) -> bool:
    """True for .txt/.tsv, and for text under any name no other format claims.

    Example: is_plain_text_file(Path("train.de")) is True  # Moses-style corpus names
    """
    from engine.extract import SUPPORTED_EXTENSIONS, sniff_format

    suffix = path.suffix.lower()
    if suffix in LINE_FILE_SUFFIXES:
        return True
    if suffix in SUPPORTED_EXTENSIONS:
        return False
    try:
        return sniff_format(path) == "txt"
    except OSError:
        return False  # extraction then says what is wrong with the path


def read_sentences(path: Path, lines: bool | None = None, language: str | None = None) -> list[str]:
    """The sentences of a document, in order (duplicates kept).

    `lines`: True reads plain-text files (`is_plain_text_file`) one sentence per line;
    None does so when the file looks like one (always for .tsv); False always extracts
    and segments.
    """
    from engine.segment import split_sentences

    path = Path(path)
    if lines is not False and is_plain_text_file(path):
        found = read_lines(path)
        if lines or path.suffix.lower() == ".tsv" or looks_like_one_sentence_per_line(found, language):
            return found
    elif lines:
        raise InputError(f"{path}: --lines reads only plain-text files (.txt, .tsv, corpus.de, ...)")
    from engine.extract import extract

    text = extract(path).text
    return [" ".join(text[s.start : s.end].split()) for s in split_sentences(text, language)]


def side_language(sentences: Sequence[str]) -> str | None:
    """The language holding most characters among (up to 300 of) the sentences."""
    from engine.langid import detect_languages, document_language

    step = max(1, len(sentences) // 300)
    sample = list(sentences[::step])
    return document_language(detect_languages(sample), [len(s) for s in sample])


def unique(sentences: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """(distinct sentences in first-seen order, index into them for every sentence)."""
    position: dict[str, int] = {}
    inverse = np.array([position.setdefault(s, len(position)) for s in sentences], dtype=np.int64)
    return list(position), inverse


# ---- mining -------------------------------------------------------------------------


@dataclass(frozen=True)
class SideSpace:
    """Puts one side's vectors into the space they are mined in: as encoded ("plain"), or
    with the side's language mean taken out and re-normalised ("neutral")."""

    language: str | None
    means: LanguageMeans | None = None  # None: plain

    def __call__(self, vectors: np.ndarray) -> np.ndarray:
        if self.means is None or not len(vectors):
            return vectors
        return self.means.neutral(vectors, [self.language] * len(vectors), "query")


# The language means each encoder measured, kept while it lives: the window mines many
# documents with the library's one encoder, and a language's mean is a function of the
# model alone, so it is measured once per process rather than on every run.
_MEANS_BY_ENCODER: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _means_of(encoder) -> LanguageMeans:
    try:
        means = _MEANS_BY_ENCODER.get(encoder)
        if means is None:
            means = _MEANS_BY_ENCODER[encoder] = LanguageMeans(encoder.dim)
        return means
    except TypeError:  # an encoder that cannot be weakly referenced: measured for this run only
        return LanguageMeans(encoder.dim)


def _side_spaces(encoder, languages: tuple[str | None, str | None], space: str
                 ) -> Generator[MiningProgress, None, tuple[SideSpace, SideSpace]]:
    """Each side's SideSpace; for "neutral", the two languages' means are measured with
    `encoder` first (its own vectors of the shipped reference sentences, ~1 s a language,
    once per encoder and language)."""
    if space == "plain":
        return SideSpace(languages[0]), SideSpace(languages[1])
    yield MiningProgress("language means", 0, 1)
    means = _means_of(encoder)
    means.ensure(encoder, languages, "query")
    yield MiningProgress("language means", 1, 1)
    return SideSpace(languages[0], means), SideSpace(languages[1], means)


def _encode_steps(encoder, texts: Sequence[str], stage: str, space: SideSpace
                  ) -> Generator[MiningProgress, None, np.ndarray]:
    chunks = []
    for start in range(0, len(texts), ENCODE_BATCH):
        batch = list(texts[start : start + ENCODE_BATCH])
        chunks.append(np.asarray(encoder.encode(batch, kind="query"), dtype=np.float32))
        yield MiningProgress(stage, start + len(batch), len(texts))
    return space(np.concatenate(chunks)) if chunks else np.zeros((0, encoder.dim), dtype=np.float32)


def _check_sides(src: Sequence[str], tgt: Sequence[str], src_lang, tgt_lang, options, names) -> None:
    for sentences, name in ((src, names[0]), (tgt, names[1])):
        if not sentences:
            raise InputError(f"{name}: no sentences found; nothing to mine")
    if src_lang and src_lang == tgt_lang and not options.allow_same_language:
        raise InputError(
            f"both sides are in the same language ({src_lang}); the parallel-sentence finder "
            "pairs translations, give it a document in another language"
        )


def iter_mine_sentences(
    src_sentences: Sequence[str],
    tgt_sentences: Sequence[str],
    encoder,
    options: MiningOptions = MiningOptions(),
    names: tuple[str, str] = ("source", "target"),
) -> Generator[MiningEvent, None, None]:
    """Mines two sentence lists; yields progress events, then `MiningFinished`."""
    src_lang = options.src_lang or side_language(src_sentences)
    tgt_lang = options.tgt_lang or side_language(tgt_sentences)
    _check_sides(src_sentences, tgt_sentences, src_lang, tgt_lang, options, names)
    # Duplicates are encoded and mined once; pairs point at each text's first occurrence.
    src_unique, src_inverse = unique(src_sentences)
    tgt_unique, tgt_inverse = unique(tgt_sentences)
    # progress counts distinct sentences; MiningResult.sentences_text() names both figures
    spaces = yield from _side_spaces(encoder, (src_lang, tgt_lang), options.space)
    src_vecs = yield from _encode_steps(encoder, src_unique, "encode source", spaces[0])
    tgt_vecs = yield from _encode_steps(encoder, tgt_unique, "encode target", spaces[1])
    steps = neighbours_steps(src_vecs, tgt_vecs, options.k, options.search)
    neighbours = yield from _as_events(steps)
    threshold = options.effective_threshold
    candidates = select_pairs(neighbours, options.margin, options.mode,
                              None if options.keep_below_threshold else threshold)
    src_first = _first_positions(src_inverse, len(src_unique))
    tgt_first = _first_positions(tgt_inverse, len(tgt_unique))
    positions = [(int(src_first[p.src_index]), int(tgt_first[p.tgt_index])) for p in candidates]
    order_pairs = [pos for p, pos in zip(candidates, positions) if p.score > threshold]
    from engine.mining.margin import increasing_fraction

    increasing = increasing_fraction(order_pairs)
    aligned = options.align == "on" or (
        options.align == "auto" and should_align(order_pairs, len(src_sentences), len(tgt_sentences))
    )
    if aligned:
        # The DP already weighs each bead against skipping it; a threshold only applies
        # when the user set one.
        threshold = options.threshold if options.threshold is not None else -np.inf
        pairs = yield from _align_steps(
            src_sentences, tgt_sentences, src_vecs[src_inverse], tgt_vecs[tgt_inverse],
            encoder, options, -np.inf if options.keep_below_threshold else threshold,
            anchors=order_pairs, spaces=spaces,
        )
    else:
        pairs = [
            MinedPair(p.score, src_unique[p.src_index], tgt_unique[p.tgt_index], (s,), (t,))
            for p, (s, t) in zip(candidates, positions)
        ]
    result = MiningResult(
        tuple(pairs), src_lang, tgt_lang, len(src_sentences), len(tgt_sentences),
        aligned, increasing, threshold, len(src_unique), len(tgt_unique), options.space,
    )
    yield MiningFinished(result)


def stage_label(stage: str) -> str:
    """Example: stage_label("encode source") == "encode source (distinct sentences)".

    Repeated sentences are encoded once, so the encoding stages count fewer than the
    sentences read; the label says so, and the summary gives both figures.
    """
    return f"{stage} (distinct sentences)" if stage in ("encode source", "encode target") else stage


def _first_positions(inverse: np.ndarray, n_unique: int) -> np.ndarray:
    """For each distinct sentence, the position of its first occurrence."""
    first = np.full(n_unique, len(inverse), dtype=np.int64)
    np.minimum.at(first, inverse, np.arange(len(inverse)))
    return first


def _as_events(steps: Generator) -> Generator[MiningProgress, None, object]:
    while True:
        try:
            stage, done, total = next(steps)
        except StopIteration as finished:
            return finished.value
        yield MiningProgress(stage, done, total)


def _align_steps(src, tgt, src_vecs, tgt_vecs, encoder, options, threshold, anchors, spaces):
    """Ordered alignment beads above the threshold, as MinedPairs in document order."""
    src_joined = yield from _encode_steps(encoder, joined_neighbours(src), "encode source pairs", spaces[0])
    tgt_joined = yield from _encode_steps(encoder, joined_neighbours(tgt), "encode target pairs", spaces[1])
    yield MiningProgress("align", 0, 1)
    config = options.alignment
    if config.margin != options.margin or config.k != options.k:
        from dataclasses import replace

        config = replace(config, margin=options.margin, k=options.k)
    beads = align_vectors(
        src_vecs, tgt_vecs, src_joined if len(src) > 1 else None,
        tgt_joined if len(tgt) > 1 else None, config, anchors,
    )
    yield MiningProgress("align", 1, 1)
    return [
        MinedPair(
            b.score, " ".join(src[i] for i in b.src_indices), " ".join(tgt[j] for j in b.tgt_indices),
            b.src_indices, b.tgt_indices,
        )
        for b in beads
        if b.score > threshold
    ]


def iter_mine_documents(
    src_path: Path, tgt_path: Path, encoder, options: MiningOptions = MiningOptions()
) -> Generator[MiningEvent, None, None]:
    """Reads both documents, then mines them (see `iter_mine_sentences`)."""
    yield MiningProgress("read source", 0, 2)
    src = read_sentences(Path(src_path), options.lines, options.src_lang)
    yield MiningProgress("read target", 1, 2)
    tgt = read_sentences(Path(tgt_path), options.lines, options.tgt_lang)
    yield MiningProgress("read target", 2, 2)
    yield from iter_mine_sentences(src, tgt, encoder, options, names=(str(src_path), str(tgt_path)))


def _finish(events) -> MiningResult:
    for event in events:
        if isinstance(event, MiningFinished):
            return event.result
    raise RuntimeError("mining ended without a result")  # unreachable: the generator always finishes


def mine_sentences(src_sentences, tgt_sentences, encoder, options: MiningOptions = MiningOptions()):
    """`iter_mine_sentences` run to the end: the MiningResult."""
    return _finish(iter_mine_sentences(src_sentences, tgt_sentences, encoder, options))


def mine_documents(src_path: Path, tgt_path: Path, encoder, options: MiningOptions = MiningOptions()):
    """`iter_mine_documents` run to the end: the MiningResult."""
    return _finish(iter_mine_documents(src_path, tgt_path, encoder, options))


def result_rows(result: MiningResult) -> list[tuple[float, str, str]]:
    """(score, source, target) rows for `engine.mining.bitext_io.write_pairs`."""
    return [(p.score, p.src_text, p.tgt_text) for p in result.pairs]
