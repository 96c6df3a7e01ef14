"""Same-language bias: do English passages crowd out the translation a query asks for?

    python bench/bench_language_bias.py --sentences 300

For each language X: queries are Tatoeba's English sentences, the corpus is their X
translations plus as many unrelated English sentences (the other side of the Italian
file), and a query counts as answered when its translation ranks first. Three readings
in one run: X alone (no distractors), X + English, X + English with per-language
centring by the corpus's own means (score q . (p - mean of p's language), the usual
correction for a language component in multilingual embeddings, with means no library
has before it is indexed), and X + English in the space search ranks by: the language
means of the shipped reference sentences taken out of queries and passages, re-normalised
(engine/index/language_means.py). The bias is what the English sentences cost: X alone
minus X + English, read two ways for the language-neutral space: against X alone as
encoded (what a user had before), and against X alone in the same space (the pull that
is left, without what the correction does to finding translations at all). The last two
readings rank as search does by default: language-neutral cosines less each passage's
hubness penalty for an English query (engine/index/hubness.py, the shipped reference
queries in the same space), X alone and X + English.

`--subspace 8 32` adds readings that also project out the directions in which languages'
means differ (the top principal directions of every reference language's passage mean,
centred over languages; "low-rank language subspace" removal, Xie et al. 2022), after
each vector's own mean is taken out: whatever of a language's identity a mean alone
leaves in its vectors.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from engine.eval_tatoeba import load_pair  # noqa: E402
from engine.index.hubness import HubnessConfig, HubnessPenalties  # noqa: E402
from engine.index.language_means import LanguageMeans  # noqa: E402
from engine.index.live_index import reference_queries  # noqa: E402
from engine.models import load_encoder  # noqa: E402

TATOEBA = REPO.parent / "shared" / "data" / "tatoeba" / "v1"
LANGUAGES = ("deu", "fra", "rus", "cmn", "ara", "hin", "jpn", "tur", "swe", "kor")
DISTRACTOR_FILE = "ita"  # its English side supplies sentences unrelated to the queries


def top1(scores: np.ndarray) -> float:
    """Share of queries (rows) whose best column is their own translation (same index)."""
    return float((scores.argmax(axis=1) == np.arange(len(scores))).mean())


# Tatoeba's codes, as the language detector names them (what the library's means are keyed by)
ISO_639_1 = {"deu": "de", "fra": "fr", "rus": "ru", "cmn": "zh", "ara": "ar", "hin": "hi", "jpn": "ja",
             "tur": "tr", "swe": "sv", "kor": "ko", "eng": "en"}


def language_subspace(encoder, means: LanguageMeans, rank: int) -> np.ndarray:
    """[rank, d]: the top principal directions of the reference languages' passage means."""
    from engine.index.language_means import reference_languages

    languages = sorted(reference_languages())
    means.ensure(encoder, languages, "passage")
    matrix = means.offsets(languages, "passage")
    _, _, directions = np.linalg.svd(matrix - matrix.mean(0), full_matrices=False)
    return directions[:rank].astype(np.float32)


def without(vectors: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """`vectors` with their components along `directions` removed, re-normalised."""
    kept = vectors - (vectors @ directions.T) @ directions
    return kept / np.linalg.norm(kept, axis=1, keepdims=True)


def top1_with_hubness(queries: np.ndarray, corpus: np.ndarray, reference: tuple[np.ndarray, list[str]],
                      language: str) -> float:
    """top1 of `queries` over `corpus` scored as search scores: cosine less each passage's
    hubness penalty for queries in `language`."""
    penalties = HubnessPenalties(*reference, HubnessConfig())
    ids = np.arange(len(corpus), dtype=np.int64)
    penalties.add(ids, corpus)
    _, ranked = penalties.correct((queries @ corpus.T).astype(np.float32), np.tile(ids, (len(queries), 1)), language)
    return float((ranked[:, 0] == np.arange(len(queries))).mean())


def readings(encoder, lang: str, distractors: np.ndarray, n: int, means: LanguageMeans,
             subspaces: dict[int, np.ndarray] | None = None, reference=None) -> dict:
    other, english = load_pair(TATOEBA, lang)
    queries = encoder.encode(english[:n], kind="query")  # [n, d]
    targets = encoder.encode(other[:n], kind="passage")  # [n, d]
    corpus = np.vstack([targets, distractors])  # [2n, d]: translations first
    is_english = np.arange(len(corpus)) >= n
    scores = queries @ corpus.T
    corpus_means = np.stack([corpus[~is_english].mean(0), corpus[is_english].mean(0)])  # [2, d]
    centred = scores - (queries @ corpus_means.T)[:, is_english.astype(int)]
    code = ISO_639_1[lang]
    means.ensure(encoder, [code, "en"], "passage")
    means.ensure(encoder, ["en"], "query")
    neutral_corpus = means.neutral(corpus, [code] * n + ["en"] * len(distractors), "passage")
    neutral_queries = means.neutral(queries, ["en"] * len(queries), "query")
    found = {"alone": top1(queries @ targets.T), "with_english": top1(scores), "centred": top1(centred),
             "neutral": top1(neutral_queries @ neutral_corpus.T),
             "neutral_alone": top1(neutral_queries @ neutral_corpus[:n].T)}
    if reference is not None:
        found["search_alone"] = top1_with_hubness(neutral_queries, neutral_corpus[:n], reference, "en")
        found["search"] = top1_with_hubness(neutral_queries, neutral_corpus, reference, "en")
    for rank, directions in (subspaces or {}).items():
        found[f"subspace {rank}"] = top1(without(neutral_queries, directions) @ without(neutral_corpus, directions).T)
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=300)
    parser.add_argument("--model", default=None, help="registered model (default: the active one)")
    parser.add_argument("--subspace", nargs="*", type=int, default=[],
                        help="also read with this many language directions projected out")
    args = parser.parse_args(argv)
    encoder = load_encoder(args.model)
    _, english = load_pair(TATOEBA, DISTRACTOR_FILE)
    distractors = encoder.encode(english[-args.sentences:], kind="passage")
    means = LanguageMeans(encoder.dim)
    subspaces = {rank: language_subspace(encoder, means, rank) for rank in args.subspace}
    reference = reference_queries(encoder, means)
    keys = ("alone", "with_english", "centred", "neutral_alone", "neutral", "search_alone", "search",
            *(f"subspace {rank}" for rank in args.subspace))
    print("| language | X alone | X + English | X + English, centred by the corpus | X alone, language-neutral "
          "| X + English, language-neutral (shipped) | X alone, as search ranks | X + English, as search ranks |"
          + "".join(f" the same, {rank} language directions out |" for rank in args.subspace))
    print("|---|---|---|---|---|---|---|---|" + "---|" * len(args.subspace))
    results = {}
    for lang in LANGUAGES:
        results[lang] = r = readings(encoder, lang, distractors, args.sentences, means, subspaces, reference)
        print(f"| {lang} | " + " | ".join(f"{r[key]:.3f}" for key in keys) + " |")
    mean = {key: float(np.mean([r[key] for r in results.values()])) for key in keys}
    print("| mean | " + " | ".join(f"{mean[key]:.3f}" for key in keys) + " |")
    bias = {key: mean["alone"] - mean[key] for key in keys[1:] if not key.endswith("_alone")}
    bias["neutral_within_space"] = mean["neutral_alone"] - mean["neutral"]
    bias["search_within_space"] = mean["search_alone"] - mean["search"]
    print(f"bias (X alone - reading): as encoded {bias['with_english']:.3f}, centred {bias['centred']:.3f}, "
          f"language-neutral {bias['neutral']:.3f} (against X alone in that space: "
          f"{bias['neutral_within_space']:.3f}), as search ranks {bias['search']:.3f} (within: "
          f"{bias['search_within_space']:.3f})"
          + "".join(f", {rank} directions out {bias[f'subspace {rank}']:.3f}" for rank in args.subspace))
    print(json.dumps({"model": encoder.name, "variant": encoder.variant, "mean": mean, "bias": bias}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
