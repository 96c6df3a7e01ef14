"""The int8 gate: an int8 variant is served by default only when benchmark evidence says
it costs (almost) nothing against fp32, on every language, not just on average.

    >>> verdict = judge_int8(fp32, int8)          # two `Quality`s, measured on the same data
    >>> verdict.verdict, verdict.reason           # ('refused', 'est +4.45 points Tatoeba error ...')

Accepted only when, over all Tatoeba languages (LASER's 112), the mean error is within
`MAX_MEAN_DELTA` point of fp32, no language is more than `MAX_LANGUAGE_DELTA` points
worse, and STS-B test Spearman (x 100) drops by at most `MAX_STS_DROP`. A refusal needs
one language (or STS-B) beyond its bound; a pass needs every number ("incomplete"
otherwise; the mean is judged only over the full set). `measure_quality` runs
the benchmarks for one encoder; `evidence_record` is what manifests and
resources/models/int8_evidence.json keep.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from engine.errors import InputError

FULL_TATOEBA_LANGUAGES = 112  # LASER's Tatoeba set; a pass needs every one of them
MAX_MEAN_DELTA = 0.5  # points of mean Tatoeba error
MAX_LANGUAGE_DELTA = 2.0  # points of Tatoeba error, any one language
MAX_STS_DROP = 0.5  # points of STS-B test Spearman x 100
PASSED, REFUSED, INCOMPLETE, NOT_RUN = "passed", "refused", "incomplete", "not run"


@dataclass(frozen=True)
class GateData:
    """Where the gate's benchmarks are: the Tatoeba folder (tatoeba.xxx-eng.*) and the STS
    folder holding STSBenchmark/. `min_languages`: Tatoeba languages a pass needs."""

    tatoeba_dir: Path
    sts_dir: Path | None
    min_languages: int = FULL_TATOEBA_LANGUAGES

    @classmethod
    def beside(cls, tatoeba_dir: Path) -> GateData:
        """The shared data layout: data/tatoeba/v1 and data/sts/original."""
        tatoeba_dir = Path(tatoeba_dir)
        for root in tatoeba_dir.parents:
            if (root / "sts" / "original" / "STSBenchmark").is_dir():
                return cls(tatoeba_dir, root / "sts" / "original")
        return cls(tatoeba_dir, None)


@dataclass(frozen=True)
class Quality:
    """What one variant measured: Tatoeba error % per language, STS-B test Spearman x 100."""

    tatoeba: Mapping[str, float]
    sts_b: float | None
    extra: dict = field(default_factory=dict)  # sentences/s and the like, recorded only

    @property
    def mean_error(self) -> float:
        return float(np.mean(list(self.tatoeba.values()))) if self.tatoeba else float("nan")


@dataclass(frozen=True)
class GateVerdict:
    verdict: str  # PASSED | REFUSED | INCOMPLETE
    reason: str

    @property
    def passed(self) -> bool:
        return self.verdict == PASSED


def judge_int8(fp32: Quality, int8: Quality, *,
               min_languages: int = FULL_TATOEBA_LANGUAGES) -> GateVerdict:
    """The gate's decision on `int8` against `fp32` (pure: numbers in, verdict out).

    >>> judge_int8(Quality({"est": 37.95}, 80.1), Quality({"est": 42.40}, 80.0), min_languages=1)
    GateVerdict(verdict='refused', reason='est +4.45 points Tatoeba error (gate: <= 2 per language)')
    """
    # refusals first: one language or STS-B beyond its bound settles it, whatever is missing
    deltas = {lang: int8.tatoeba[lang] - fp32.tatoeba[lang]
              for lang in fp32.tatoeba if lang in int8.tatoeba}
    worst = max(deltas, key=deltas.get) if deltas else None
    if worst is not None and deltas[worst] > MAX_LANGUAGE_DELTA:
        return GateVerdict(REFUSED, f"{worst} {deltas[worst]:+.2f} points Tatoeba error "
                                    f"(gate: <= {MAX_LANGUAGE_DELTA:g} per language)")
    if fp32.sts_b is not None and int8.sts_b is not None and fp32.sts_b - int8.sts_b > MAX_STS_DROP:
        return GateVerdict(REFUSED, f"STS-B Spearman -{fp32.sts_b - int8.sts_b:.2f} points "
                                    f"(gate: <= {MAX_STS_DROP:g})")
    missing = sorted(set(fp32.tatoeba) - set(int8.tatoeba))
    if missing:
        return GateVerdict(INCOMPLETE, f"int8 not measured on {len(missing)} Tatoeba languages "
                                       f"that fp32 was ({', '.join(missing[:5])})")
    if len(deltas) < min_languages:
        return GateVerdict(INCOMPLETE, f"measured on {len(deltas)} Tatoeba languages; a pass "
                                       f"needs {min_languages}")
    if fp32.sts_b is None or int8.sts_b is None:
        return GateVerdict(INCOMPLETE, "no STS-B measurement; a pass needs one")
    mean_delta = float(np.mean(list(deltas.values()))) if deltas else 0.0
    if mean_delta > MAX_MEAN_DELTA:
        return GateVerdict(REFUSED, f"mean {mean_delta:+.2f} points Tatoeba error over "
                                    f"{len(deltas)} languages (gate: <= {MAX_MEAN_DELTA:g})")
    worst_text = f", worst {worst} {deltas[worst]:+.2f}" if worst is not None else ""
    return GateVerdict(PASSED, f"Tatoeba mean {mean_delta:+.2f} points over {len(deltas)} "
                               f"languages{worst_text}; STS-B {int8.sts_b - fp32.sts_b:+.2f}")


def evidence_record(fp32: Quality, int8: Quality, verdict: GateVerdict, *,
                    min_languages: int = FULL_TATOEBA_LANGUAGES) -> dict:
    """The JSON a manifest's variants["int8"] (and the evidence file) keeps of one gate run."""
    return {
        "gate": verdict.verdict, "reason": verdict.reason,
        "tatoeba": {"languages": len(int8.tatoeba),
                    "fp32_mean": round(fp32.mean_error, 4), "int8_mean": round(int8.mean_error, 4),
                    "fp32": {k: round(v, 4) for k, v in sorted(fp32.tatoeba.items())},
                    "int8": {k: round(v, 4) for k, v in sorted(int8.tatoeba.items())}},
        "sts_b": {"fp32": _rounded(fp32.sts_b), "int8": _rounded(int8.sts_b)},
        "limits": {"mean": MAX_MEAN_DELTA, "per_language": MAX_LANGUAGE_DELTA,
                   "sts_b": MAX_STS_DROP, "min_languages": min_languages},
    }


def quality_of_record(record: dict, variant: str) -> Quality:
    """The `Quality` of "fp32" or "int8" kept in an `evidence_record`."""
    try:
        return Quality(dict(record["tatoeba"][variant]), (record.get("sts_b") or {}).get(variant))
    except (KeyError, TypeError) as e:
        raise InputError(f"int8 evidence lacks the {variant} Tatoeba numbers") from e


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(float(value), 4)


# --- measuring ------------------------------------------------------------------------

Vectors = dict  # lang -> (xxx side [n, d], eng side [n, d]), float32 unit rows


def tatoeba_vectors(encoder, tatoeba_dir: Path, langs: Sequence[str] | None = None,
                    progress: Callable[[str], None] | None = None) -> Vectors:
    """Both sides of each language encoded as "query" (as engine.eval_tatoeba does)."""
    from engine.eval_tatoeba import available_languages, load_pair

    vectors = {}
    for lang in langs or available_languages(tatoeba_dir):
        if progress:
            progress(lang)
        vectors[lang] = tuple(encoder.encode(side, kind="query")
                              for side in load_pair(tatoeba_dir, lang))
    return vectors


def tatoeba_errors(vectors: Vectors) -> dict[str, float]:
    """Error % per language (both directions averaged), from `tatoeba_vectors`."""
    from engine.eval_tatoeba import nearest_neighbour_error

    return {lang: float(np.mean(nearest_neighbour_error(other, english)))
            for lang, (other, english) in vectors.items()}


def stsb_spearman(encoder, sts_dir: Path) -> float:
    """STS-B test Spearman x 100 with "query" prefixes (trainer.evaluate's aggregation)."""
    from trainer.evaluate import cosine_scores, encoder_encode, load_stsb, spearman, sts_dir_of

    pairs = load_stsb(sts_dir_of(sts_dir), "test")
    return 100 * spearman(cosine_scores(encoder_encode(encoder), pairs), pairs.gold)


def measure_quality(encoder, data: GateData, langs: Sequence[str] | None = None) -> tuple[Quality, Vectors]:
    """Tatoeba (every language of `data`, or `langs`) and STS-B for one encoder."""
    vectors = tatoeba_vectors(encoder, data.tatoeba_dir, langs)
    sts = stsb_spearman(encoder, data.sts_dir) if data.sts_dir is not None else None
    return Quality(tatoeba_errors(vectors), sts), vectors


def mean_cosine(a: Vectors, b: Vectors) -> tuple[float, float]:
    """(mean, min) row cosine between two variants' Tatoeba vectors."""
    cos = np.concatenate([(x * y).sum(1) for lang in a for x, y in zip(a[lang], b[lang])])
    return float(cos.mean()), float(cos.min())


# --- calibration text for static schemes ------------------------------------------------

def calibration_sentences(corpus_dir: Path, per_language: int = 24) -> list[str]:
    """Multilingual calibration text, never Tatoeba: the Wikipedia half ("w" ids) of each
    PUD language, and English Wikipedia sentences (corpus/wiki-en), `per_language` each."""
    corpus_dir = Path(corpus_dir)
    pud = sorted((corpus_dir / "pud-parallel").glob("pud.*.tsv"))
    if not pud:
        raise InputError(f"no PUD sentences (pud-parallel/pud.xx.tsv) under {corpus_dir}")
    sentences = []
    for path in pud:
        rows = [line.split("\t", 1) for line in path.read_text(encoding="utf-8").splitlines()]
        wiki = [text for sent_id, text in (r for r in rows if len(r) == 2) if sent_id.startswith("w")]
        # different sentences per language, so the set covers more than one text's words
        offset = len(sentences) % max(1, len(wiki))
        sentences += (wiki[offset:] + wiki[:offset])[:per_language]
    wiki_en = corpus_dir / "wiki-en" / "wiki1m_for_simcse.head.txt"
    if wiki_en.is_file():
        lines = [s for s in wiki_en.read_text(encoding="utf-8").splitlines() if s.strip()]
        sentences += lines[:per_language]
    return sentences
