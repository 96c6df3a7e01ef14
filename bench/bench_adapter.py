"""The cross-lingual adapter, measured: base vs adapted default model, side by side.

    BABELFIND_HOME=<home with both models> OMP_NUM_THREADS=2 \\
        python bench/bench_adapter.py --models multilingual-e5-small multilingual-e5-small-aligned

Each model as installed (the served 4-bit files: `babelfind models info` names the variant)
is scored on:
* Tatoeba similarity-search error, every one of the 112 languages (the first `--tatoeba-limit`
  pairs of each; LASER's measure, both directions averaged), the mean and, against the
  first model, the languages more than 1 point worse;
* STS-B test (English) and the STS 2017 cross-lingual tracks (ar-en, es-en a/b), Spearman x 100;
* the same-language bias of bench/bench_language_bias.py (English queries, their translation
  among as many unrelated English sentences; X alone minus X + English, top-1), as encoded
  and in the language-neutral space search ranks by.
Scores are cached per model and settings in `--out` (a rerun scores only what is new); the
table goes to stdout, the numbers to OUT/results.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_language_bias import DISTRACTOR_FILE, LANGUAGES as BIAS_LANGUAGES, readings  # noqa: E402
from bench_pair_training import TATOEBA, _cached, sts  # noqa: E402
from engine.eval_tatoeba import evaluate_encoder, load_pair  # noqa: E402
from engine.index.language_means import LanguageMeans  # noqa: E402
from engine.models import load_encoder  # noqa: E402

WORSE_BY = 1.0  # points of Tatoeba error that count a language as hurt


def tatoeba(encoder, limit: int | None) -> dict[str, float]:
    """Error (percent, both directions averaged) per language, first `limit` pairs each."""
    report = evaluate_encoder(encoder, TATOEBA, kind="query", limit=limit)
    return {r.lang: r.error for r in report.results}


def bias(encoder, n: int) -> dict[str, float]:
    """X alone minus X + English (top-1), as encoded and language-neutral, over the bias languages."""
    _, english = load_pair(TATOEBA, DISTRACTOR_FILE)
    distractors = encoder.encode(english[-n:], kind="passage")
    means = LanguageMeans(encoder.dim)
    runs = [readings(encoder, lang, distractors, n, means) for lang in BIAS_LANGUAGES]
    mean = {key: float(np.mean([r[key] for r in runs])) for key in runs[0]}
    return {"plain": mean["alone"] - mean["with_english"], "neutral": mean["alone"] - mean["neutral"],
            "alone": mean["alone"]}


def score(name: str, args) -> dict:
    """One model's scores, kept in OUT/scores-NAME.json for a rerun with the same settings."""
    settings = {"model": name, "tatoeba_limit": args.tatoeba_limit, "sts_limit": args.sts_limit,
                "bias_sentences": args.bias_sentences}
    return _cached(args.out / f"scores-{name}.json", settings, lambda: _measure(name, args))


def _measure(name: str, args) -> dict:
    started, encoder = time.monotonic(), load_encoder(name)
    result = {"variant": encoder.variant, "tatoeba": tatoeba(encoder, args.tatoeba_limit)}
    print(f"  {name}: Tatoeba in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    result |= {"sts": sts(encoder, args.sts_limit), "bias": bias(encoder, args.bias_sentences)}
    print(f"  {name}: scored in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    return result


def summary(results: dict[str, dict]) -> dict[str, dict]:
    """Per model: Tatoeba mean, languages worse than the first model, STS, bias."""
    first = next(iter(results.values()))["tatoeba"]
    out = {}
    for name, r in results.items():
        errors = r["tatoeba"]
        worse = {lang: round(errors[lang] - first[lang], 2) for lang in errors
                 if errors[lang] - first[lang] > WORSE_BY}
        out[name] = {"variant": r["variant"], "tatoeba_mean": float(np.mean(list(errors.values()))),
                     "languages": len(errors), "worse_than_first": worse, "sts": r["sts"], "bias": r["bias"]}
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", required=True, help="registered models; the first is the baseline")
    parser.add_argument("--tatoeba-limit", type=int, default=None, help="pairs per language (default: all)")
    parser.add_argument("--sts-limit", type=int, default=None, help="pairs per STS set (default: all)")
    parser.add_argument("--bias-sentences", type=int, default=300)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "adapter")
    args = parser.parse_args(argv)
    results = summary({name: score(name, args) for name in args.models})
    print("| model | variant | Tatoeba mean error (112) | languages > 1 pt worse | STS-B test | STS 2017 cross | "
          "bias as encoded | bias language-neutral |")
    print("|---|---|---|---|---|---|---|---|")
    for name, r in results.items():
        worse = ", ".join(f"{k} {v:+.1f}" for k, v in sorted(r["worse_than_first"].items(), key=lambda kv: -kv[1]))
        print(f"| {name} | {r['variant']} | {r['tatoeba_mean']:.2f}% | {len(r['worse_than_first'])}"
              f"{' (' + worse + ')' if worse else ''} | {r['sts']['sts-b']:.2f} | {r['sts']['sts2017-cross']:.2f} | "
              f"{100 * r['bias']['plain']:.1f} pts | {100 * r['bias']['neutral']:.1f} pts |")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
