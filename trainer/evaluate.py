"""STS evaluation as SimCSE reports it, plus alignment and uniformity (no torch needed).

    >>> report = evaluate_sts(encoder_encode(load_encoder("all-minilm-l6-v2")), sts_dir)
    >>> report.scores["STSBenchmark"], report.average      # Spearman x 100

Aggregation, read from SimCSE's `evaluation.py` and its copy of SentEval's `senteval/sts.py`:

* STS12-STS16: every subset's scored pairs (an empty gold line drops the pair; STS13 has
  no SMT input) are **concatenated** and one Spearman is computed over all of them
  (`results[task]['all']['spearman']['all']`), not the mean of the subsets' Spearmans.
* STS-B and SICK-R: the Spearman of the **test** split (`results[task]['test']['spearman']`):
  `sts-test.csv` (fields 5, 6 are the sentences, 4 the score) and
  `SICK_test_annotated.txt` (header skipped; columns 1, 2 sentences, 3 relatedness).
* Sentences are split on whitespace and re-joined with single spaces (SentEval's
  tokenisation + SimCSE's batcher); the similarity is the cosine.
* The average is the plain mean of the seven numbers.

Alignment and uniformity (Wang & Isola 2020) as in SimCSE's analysis: alignment is the mean
squared distance of the normalised embeddings of STS-B dev pairs scored above 4;
uniformity is log E[exp(-2 ||x - y||^2)] over all pairs of distinct STS-B dev sentences.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from engine.errors import InputError

log = logging.getLogger(__name__)

Encode = Callable[[Sequence[str]], np.ndarray]  # sentences -> [n, d] (any norm)

STS_YEARS = {
    "STS12": ("STS12-en-test", "STS", ("MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN",
                                        "surprise.SMTnews")),
    "STS13": ("STS13-en-test", "STS", ("FNWN", "headlines", "OnWN")),
    "STS14": ("STS14-en-test", "STS", ("deft-forum", "deft-news", "headlines", "images",
                                        "OnWN", "tweet-news")),
    "STS15": ("STS15-en-test", "STS", ("answers-forums", "answers-students", "belief",
                                        "headlines", "images")),
    "STS16": ("STS16-en-test", "STS2016", ("answer-answer", "headlines", "plagiarism",
                                            "postediting", "question-question")),
}
TASKS = (*STS_YEARS, "STSBenchmark", "SICKRelatedness")
# Published numbers for orientation (Spearman x 100, the paper's Table, Knowl 6).
PUBLISHED = {"SimCSE-BERT-base": 74.83, "MixCSE-BERT-base": 77.66}


@dataclass(frozen=True)
class StsPairs:
    """Scored sentence pairs of one task (subsets concatenated in SentEval's order)."""

    name: str
    left: tuple[str, ...]
    right: tuple[str, ...]
    gold: np.ndarray  # [n] float64


@dataclass(frozen=True)
class StsReport:
    scores: dict  # task -> Spearman x 100
    pairs: dict  # task -> number of pairs
    alignment: float | None = None
    uniformity: float | None = None
    extra: dict = field(default_factory=dict)

    @property
    def average(self) -> float:
        return float(np.mean(list(self.scores.values()))) if self.scores else float("nan")

    def to_dict(self) -> dict:
        return {"scores": dict(self.scores), "average": self.average, "pairs": dict(self.pairs),
                "alignment": self.alignment, "uniformity": self.uniformity, **self.extra}


def sts_dir_of(data_dir: Path) -> Path:
    """`…/sts/original` under a shared data folder (or the folder itself if it is that)."""
    data_dir = Path(data_dir)
    for candidate in (data_dir, data_dir / "original", data_dir / "sts" / "original"):
        if (candidate / "STSBenchmark").is_dir():
            return candidate
    raise InputError(f"no STS data (STSBenchmark/ …) under {data_dir}")


def _clean(sentence: str) -> str:
    return " ".join(sentence.split())


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise InputError(f"cannot read STS file {path}: {e}") from e


def load_year(sts_dir: Path, task: str) -> StsPairs:
    """STS12-16: pairs with a gold score, subsets in SentEval's order."""
    folder, stem, subsets = STS_YEARS[task]
    left, right, gold = [], [], []
    for subset in subsets:
        inputs = _read_lines(sts_dir / folder / f"{stem}.input.{subset}.txt")
        scores = _read_lines(sts_dir / folder / f"{stem}.gs.{subset}.txt")
        if len(inputs) != len(scores):
            raise InputError(f"{task} {subset}: {len(inputs)} input lines but {len(scores)} scores")
        for line, score in zip(inputs, scores):
            if score.strip() == "":  # unscored pair (STS15/16): SentEval drops it
                continue
            columns = line.split("\t")
            left.append(_clean(columns[0]))
            right.append(_clean(columns[1]))
            gold.append(float(score))
    return StsPairs(task, tuple(left), tuple(right), np.array(gold))


def load_stsb(sts_dir: Path, split: str = "test") -> StsPairs:
    """STS-B `sts-{split}.csv`: genre, file, year, id, score, s1, s2[, notes]."""
    left, right, gold = [], [], []
    for line in _read_lines(sts_dir / "STSBenchmark" / f"sts-{split}.csv"):
        columns = line.strip().split("\t")
        if len(columns) < 7:
            continue
        gold.append(float(columns[4]))
        left.append(_clean(columns[5]))
        right.append(_clean(columns[6]))
    return StsPairs(f"STSBenchmark-{split}", tuple(left), tuple(right), np.array(gold))


def load_sick(sts_dir: Path) -> StsPairs:
    """SICK-R test: header, then pair_ID, sentence_A, sentence_B, relatedness, entailment."""
    left, right, gold = [], [], []
    for line in _read_lines(sts_dir / "SICK" / "senteval" / "SICK_test_annotated.txt")[1:]:
        columns = line.strip().split("\t")
        left.append(_clean(columns[1]))
        right.append(_clean(columns[2]))
        gold.append(float(columns[3]))
    return StsPairs("SICKRelatedness", tuple(left), tuple(right), np.array(gold))


def load_task(sts_dir: Path, task: str) -> StsPairs:
    if task in STS_YEARS:
        return load_year(sts_dir, task)
    if task == "STSBenchmark":
        return load_stsb(sts_dir, "test")
    if task == "SICKRelatedness":
        return load_sick(sts_dir)
    raise InputError(f"unknown STS task {task!r}; choose from {', '.join(TASKS)}")


def rankdata(values: np.ndarray) -> np.ndarray:
    """1-based ranks, ties get their average rank (as scipy.stats.rankdata)."""
    values = np.asarray(values, dtype=np.float64)
    order = np.argsort(values, kind="mergesort")
    sorted_values = values[order]
    # boundaries of runs of equal values in sorted order
    starts = np.r_[True, sorted_values[1:] != sorted_values[:-1]]
    run_id = np.cumsum(starts) - 1
    run_start = np.flatnonzero(starts)
    run_end = np.r_[run_start[1:], len(values)]
    average = (run_start + run_end + 1) / 2.0  # mean of 1-based positions start+1..end
    ranks = np.empty(len(values))
    ranks[order] = average[run_id]
    return ranks


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rho: Pearson correlation of the average ranks."""
    ra, rb = rankdata(a), rankdata(b)
    ra -= ra.mean()
    rb -= rb.mean()
    denominator = np.sqrt((ra * ra).sum() * (rb * rb).sum())
    return float((ra * rb).sum() / denominator) if denominator > 0 else float("nan")


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float64)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def embed_unique(encode: Encode, sentences: Sequence[str]) -> dict[str, np.ndarray]:
    """Encodes each distinct sentence once; returns sentence -> unit vector."""
    unique = sorted(set(sentences), key=len)  # similar lengths batch with little padding
    vectors = _unit(encode(unique)) if unique else np.zeros((0, 1))
    return dict(zip(unique, vectors))


def cosine_scores(encode: Encode, pairs: StsPairs, cache: dict | None = None) -> np.ndarray:
    cache = cache if cache is not None else {}
    missing = [s for s in set(pairs.left) | set(pairs.right) if s not in cache]
    cache.update(embed_unique(encode, missing))
    left = np.stack([cache[s] for s in pairs.left])
    right = np.stack([cache[s] for s in pairs.right])
    return (left * right).sum(1)


def evaluate_sts(encode: Encode, sts_dir: Path, tasks: Sequence[str] = TASKS, *,
                 with_alignment: bool = True,
                 progress: Callable[[str], None] | None = None) -> StsReport:
    """Spearman x 100 per task (SimCSE's aggregation, see the module docstring)."""
    sts_dir = sts_dir_of(sts_dir)
    scores, counts, cache = {}, {}, {}
    for task in tasks:
        if progress:
            progress(task)
        pairs = load_task(sts_dir, task)
        scores[task] = 100 * spearman(cosine_scores(encode, pairs, cache), pairs.gold)
        counts[task] = len(pairs.gold)
    align = uniform = None
    if with_alignment:
        align, uniform = alignment_uniformity(encode, sts_dir)
    return StsReport(scores, counts, align, uniform)


def stsb_dev_spearman(encode: Encode, sts_dir: Path) -> float:
    """Spearman x 100 on STS-B dev: the model selection signal during training."""
    pairs = load_stsb(sts_dir_of(sts_dir), "dev")
    return 100 * spearman(cosine_scores(encode, pairs), pairs.gold)


def alignment(x: np.ndarray, y: np.ndarray) -> float:
    """E ||f(x) - f(y)||^2 over positive pairs (rows of unit vectors)."""
    return float(((_unit(x) - _unit(y)) ** 2).sum(1).mean())


def uniformity(x: np.ndarray, t: float = 2.0) -> float:
    """log E exp(-t ||f(x) - f(y)||^2) over all pairs i < j (unit rows)."""
    z = _unit(x)
    sq = np.clip(2 - 2 * z @ z.T, 0, None)  # [n, n] squared distances of unit vectors
    upper = sq[np.triu_indices(len(z), k=1)]
    return float(np.log(np.mean(np.exp(-t * upper))))


def alignment_uniformity(encode: Encode, sts_dir: Path) -> tuple[float, float]:
    """(alignment on STS-B dev pairs with score > 4, uniformity on all its sentences)."""
    pairs = load_stsb(sts_dir_of(sts_dir), "dev")
    vectors = embed_unique(encode, pairs.left + pairs.right)
    positive = pairs.gold > 4
    left = np.stack([vectors[s] for s, p in zip(pairs.left, positive) if p])
    right = np.stack([vectors[s] for s, p in zip(pairs.right, positive) if p])
    return alignment(left, right), uniformity(np.stack(list(vectors.values())))


def encoder_encode(encoder, kind: str = "query") -> Encode:
    """An `Encode` for a registry encoder; STS is symmetric, so both sides use `kind`
    (e5's model card asks for the "query: " prefix on symmetric tasks)."""
    return lambda sentences: encoder.encode(list(sentences), kind=kind)


def run_sts(encoder, data_dir: Path, *, as_json: bool = False) -> dict:
    """`babelfind eval MODEL --sts`: evaluates, prints a table unless `as_json`, returns a dict."""
    report = evaluate_sts(encoder_encode(encoder), Path(data_dir),
                          progress=lambda task: log.info("STS: %s", task))
    data = report.to_dict()
    if not as_json:
        print(format_report(report, getattr(encoder, "name", "")))
    return data


def format_report(report: StsReport, title: str = "") -> str:
    names = {"STSBenchmark": "STS-B", "SICKRelatedness": "SICK-R"}
    header = " ".join(f"{names.get(t, t):>7}" for t in report.scores) + f" {'Avg':>7}"
    values = " ".join(f"{v:7.2f}" for v in report.scores.values()) + f" {report.average:7.2f}"
    lines = [f"STS Spearman x 100 {title}".rstrip(), header, values]
    if report.alignment is not None:
        lines.append(f"alignment {report.alignment:.4f}  uniformity {report.uniformity:.4f} "
                     "(STS-B dev; lower is better for both)")
    return "\n".join(lines)


def report_json(report: StsReport) -> str:
    return json.dumps(report.to_dict(), indent=2)
