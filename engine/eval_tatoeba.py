"""LASER's Tatoeba similarity-search error for any encoder.

    >>> report = evaluate_encoder(encoder, Path("../shared/data/tatoeba/v1"), ["deu", "fra"])
    >>> report.mean_error          # percent, lower is better; accuracy = 100 - error

For each language xxx, files `tatoeba.xxx-eng.xxx` and `tatoeba.xxx-eng.eng` hold aligned
lines. Every sentence's cosine nearest neighbour on the other side must be its aligned
line; the error is the share that is not, averaged over both directions (as LASER's
evaluation reports it).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from engine.errors import InputError

_PAIR_RE = re.compile(r"^tatoeba\.([a-z]{3})-eng\.\1$")
# Published averages over the 112 languages (error %, lower is better).
PUBLISHED_112 = {
    "LASER (Artetxe & Schwenk 2019)": 34.5,  # 65.5% accuracy
    "LaBSE (Feng et al. 2022)": 16.3,  # 83.7% accuracy
}


@dataclass(frozen=True)
class LanguageResult:
    lang: str
    pairs: int
    error_to_eng: float  # % of xxx sentences whose nearest English line is wrong
    error_from_eng: float  # % of English sentences whose nearest xxx line is wrong

    @property
    def error(self) -> float:
        return (self.error_to_eng + self.error_from_eng) / 2


@dataclass(frozen=True)
class TatoebaReport:
    model: str
    results: tuple[LanguageResult, ...]

    @property
    def mean_error(self) -> float:
        return float(np.mean([r.error for r in self.results])) if self.results else float("nan")

    def to_dict(self) -> dict:
        return {"model": self.model, "mean_error": self.mean_error,
                "mean_accuracy": 100 - self.mean_error, "languages": len(self.results),
                "results": [asdict(r) | {"error": r.error} for r in self.results]}


def available_languages(data_dir: Path) -> list[str]:
    """ISO 639-3 codes with both sides present in `data_dir`, sorted."""
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise InputError(
            f"Tatoeba folder not found: {data_dir}. The test sets are not shipped with Babelfind: "
            "copy data/tatoeba/v1 (tatoeba.xxx-eng.xxx and .eng files) from "
            "https://github.com/facebookresearch/LASER into DATA/tatoeba/v1 and pass --data DATA "
            "(or set BABELFIND_SHARED_DATA)"
        )
    langs = []
    for path in data_dir.iterdir():
        match = _PAIR_RE.match(path.name)
        if match and (data_dir / f"tatoeba.{match[1]}-eng.eng").is_file():
            langs.append(match[1])
    return sorted(langs)


def load_pair(data_dir: Path, lang: str) -> tuple[list[str], list[str]]:
    """(xxx lines, English lines), aligned by line number."""
    data_dir = Path(data_dir)
    if lang not in available_languages(data_dir):
        raise InputError(f"no Tatoeba pair for '{lang}' in {data_dir}")
    other = _read_lines(data_dir / f"tatoeba.{lang}-eng.{lang}")
    english = _read_lines(data_dir / f"tatoeba.{lang}-eng.eng")
    if len(other) != len(english):
        raise InputError(f"{data_dir}: {lang} has {len(other)} lines but eng has {len(english)}")
    return other, english


def _read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").rstrip("\n").split("\n")


def nearest_neighbour_error(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(% of rows of a whose nearest row of b is not the aligned one, and b -> a).

    a, b: [n, d] aligned by row; cosine similarity (rows are normalised here).
    """
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    sims = a @ b.T  # [n, n]
    truth = np.arange(len(a))
    a_to_b = float(np.mean(sims.argmax(axis=1) != truth) * 100)
    b_to_a = float(np.mean(sims.argmax(axis=0) != truth) * 100)
    return a_to_b, b_to_a


def evaluate_encoder(
    encoder,
    data_dir: Path,
    langs: Sequence[str] | None = None,
    *,
    kind: str = "query",
    limit: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> TatoebaReport:
    """Tatoeba error of `encoder` (an Encoder) for `langs` (default: every language found),
    on the first `limit` pairs of each (None: all).

    e5-style models expect the "query: " prefix on both sides of symmetric tasks, so both
    sides are encoded as `kind` (default "query").
    """
    langs = list(langs) if langs else available_languages(data_dir)
    results = []
    for i, lang in enumerate(langs):
        if progress:
            progress(lang, i, len(langs))
        other, english = (side[:limit] for side in load_pair(data_dir, lang))
        to_eng, from_eng = nearest_neighbour_error(
            encoder.encode(other, kind=kind), encoder.encode(english, kind=kind))
        results.append(LanguageResult(lang, len(other), to_eng, from_eng))
    if progress:
        progress("done", len(langs), len(langs))
    return TatoebaReport(getattr(encoder, "name", "encoder"), tuple(results))
