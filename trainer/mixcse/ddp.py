"""Multi-GPU MixCSE training under torchrun: one process per GPU, negatives from all of them.

    torchrun --nproc-per-node 4 -m trainer.mixcse.ddp --config run.json [--resume]

`run.json` is a `TrainConfig` as JSON (`TrainConfig(...).to_json()`); `batch_size` is per
GPU, so the contrastive batch is `batch_size * GPUs` (see `trainer.mixcse.distributed`). Rank 0
evaluates, writes checkpoints and prints progress; export the result afterwards with
`trainer.mixcse.finish.finish_training` or `babelfind train --resume` on one process.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from trainer.config import TrainConfig
from trainer.mixcse.distributed import init_from_env, world


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, required=True, help="TrainConfig JSON file")
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args(argv)
    config = TrainConfig.from_json(args.config.read_text(encoding="utf-8"))
    init_from_env()
    from trainer.mixcse.train import TrainEval, TrainFinished, TrainStep, train

    rank = world()[0]
    for event in train(config, resume=args.resume):
        if rank != 0:
            continue
        if isinstance(event, TrainStep) and (event.step % 50 == 0 or event.step == event.total):
            print(f"step {event.step}/{event.total} loss {event.loss:.4f} eta {event.eta_s:.0f}s", flush=True)
        elif isinstance(event, TrainEval):
            print(f"step {event.step}: {event.metric} {event.score:.2f}", flush=True)
        elif isinstance(event, TrainFinished):
            print(f"best checkpoint: {event.best_checkpoint} (step {event.best_step})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
