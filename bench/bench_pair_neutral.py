"""Do the trainer's held-out pair scores gain from the language-neutral correction (issue 28)?

    BABELFIND_HOME=<home with the models> python bench/bench_pair_neutral.py \\
        --pairs bench/out/pairs-nogpl/gettext.*-en.tsv --models multilingual-e5-small multilingual-e5-small-aligned

The held-out pairs are the ones `babelfind train --pairs` keeps apart with the same files,
filter and seed (trainer.pairs.load_pairs: 10% of the meanings, at most 2,000 pairs), scored
as the trainer scores them (trainer.mixcse.pair_eval.evaluate_pairs: translation found
first both ways, and the share of queries a sentence of their own language beats), once on
the vectors as encoded and once language-neutral: each sentence's language mean (the
shipped reference sentences, engine/index/language_means.py) taken out, as search does.
No corpus distractors, so the bias counts only the held-out sentences themselves.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from engine.index.language_means import LanguageMeans  # noqa: E402
from engine.langid import detect_languages  # noqa: E402
from engine.models import load_encoder  # noqa: E402
from trainer.mixcse.pair_eval import evaluate_pairs  # noqa: E402
from trainer.config import TrainConfig  # noqa: E402
from trainer.pairs import PairFilter, load_pairs  # noqa: E402


def neutral_encode(encoder):
    """encode(texts) in the language-neutral space search ranks by (query side)."""
    means = LanguageMeans(encoder.dim)

    def encode(texts):
        languages = detect_languages(list(texts))
        means.ensure(encoder, languages, "query")
        return means.neutral(encoder.encode(list(texts), kind="query"), languages, "query")

    return encode


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", nargs="+", required=True, help="the files the run trained on")
    parser.add_argument("--models", nargs="+", required=True)
    parser.add_argument("--seed", type=int, default=42, help="the run's seed (TrainConfig.seed)")
    args = parser.parse_args(argv)
    config = TrainConfig(seed=args.seed)  # the filter and hold-out a run with default settings uses
    held_out = load_pairs(args.pairs, PairFilter.of(config), config.seed, holdout=config.pair_holdout).held_out
    print(f"{len(held_out)} held-out pairs")
    print("| model | space | found first (L->en / en->L) | same-language bias |")
    print("|---|---|---|---|")
    for name in args.models:
        encoder = load_encoder(name)
        for space, encode in (("as encoded", lambda t, e=encoder: e.encode(list(t), kind="query")),
                              ("language-neutral", neutral_encode(encoder))):
            report = evaluate_pairs(encode, held_out)
            print(f"| {name} | {space} | {report.retrieval:.2f}% ({report.source_to_target:.1f} / "
                  f"{report.target_to_source:.1f}) | {report.same_language_bias:.1f}% of {report.bias_queries} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
