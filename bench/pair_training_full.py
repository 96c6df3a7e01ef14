"""Full-set scores of pair-trained checkpoints against their base: STS-B test (all 1,379
pairs), STS 2017 cross-lingual, and Tatoeba with 1,000 pairs per PUD language.

    python bench/pair_training_full.py base=FOLDER mixcse=FOLDER in-batch=FOLDER --out full.json

bench_pair_training.py scores subsets to keep its runs short on two cores; this scores the
chosen checkpoints once on the whole sets (about 4 minutes per model here).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_pair_training import TorchEncoder, sts, tatoeba  # noqa: E402

FULL_TATOEBA = 1000  # Tatoeba's pairs per language


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+", metavar="NAME=FOLDER", help="transformers folders to score")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    results = {}
    for item in args.models:
        name, folder = item.split("=", 1)
        started, encoder = time.monotonic(), TorchEncoder(Path(folder), name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # no unseen languages: an empty mean
            pud = tatoeba(encoder, FULL_TATOEBA, 0, 0)
        results[name] = {"tatoeba_pud": pud["pud"], "tatoeba_per_language": pud["per_language"],
                         "sts": sts(encoder, None)}
        print(f"{name}: {time.monotonic() - started:.0f} s, Tatoeba PUD {pud['pud']:.2f}, "
              f"STS-B {results[name]['sts']['sts-b']:.2f}", flush=True)
    args.out.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
