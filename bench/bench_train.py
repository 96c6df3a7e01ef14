"""Benchmark (b): SimCSE vs MixCSE from the same start, same steps and seed, on CPU.

    python bench/bench_train.py --steps 200 --out bench/out/train_b.json

For each base model (all-MiniLM-L6-v2 and the multilingual default), the STS tasks are
scored before training, then after SimCSE (lambda None) and after MixCSE (lambda 0.2) runs
on the 12k Wikipedia sentences of ../shared/data/corpus/wiki-en with identical settings:
same corpus order, same seed (so the same dropout masks at step 1), same steps. The model
scored after training is the last step (no dev-set selection, so both runs are judged
at the same point). Prints a markdown table and writes the numbers as JSON.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

DATA = REPO.parent / "shared" / "data"
WIKI = DATA / "corpus" / "wiki-en" / "wiki1m_for_simcse.head.txt"
BASES = ("all-minilm-l6-v2", "multilingual-e5-small")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-len", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--bases", nargs="+", default=list(BASES))
    parser.add_argument("--tasks", nargs="+", help="STS tasks to score (default: all seven)")
    parser.add_argument("--work", type=Path, default=REPO / "bench" / "out" / "train_runs")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "train_b.json")
    return parser.parse_args(argv)


def score(folder: Path, pooling: str, prefix: str, tasks) -> dict:
    from trainer.evaluate import TASKS, evaluate_sts
    from trainer.mixcse.model import SentenceModel, torch_encode

    model = SentenceModel.load(folder, pooling).eval()
    started = time.monotonic()
    report = evaluate_sts(torch_encode(model, prefix, max_len=256), DATA / "sts", tasks or TASKS)
    return report.to_dict() | {"seconds": time.monotonic() - started}


def run_one(base: str, lam, args, corpus) -> dict:
    from trainer.config import TrainConfig
    from trainer.mixcse.train import TrainFinished, TrainStep, train

    name = "simcse" if lam is None else "mixcse"
    config = TrainConfig(base=base, out_dir=args.work / f"{base}-{name}", lam=lam, lr=args.lr,
                         batch_size=args.batch_size, max_len=args.max_len, max_steps=args.steps,
                         eval_steps=args.steps, seed=args.seed, device="cpu")
    losses, started, finished = [], time.monotonic(), None
    for event in train(config, corpus=corpus):
        if isinstance(event, TrainStep):
            losses.append(event.loss)
            if event.step % 10 == 0:
                logging.info("%s %s step %d/%d loss %.4f", base, name, event.step, event.total, event.loss)
        elif isinstance(event, TrainFinished):
            finished = event
    seconds = time.monotonic() - started
    result = score(finished.best_checkpoint / "model", finished.config.pooling,
                   finished.config.text_prefix, args.tasks)
    return {"method": name, "lam": lam, "train_seconds": seconds, "losses": losses,
            "pooling": finished.config.pooling, "sts": result}


def main(argv=None) -> int:
    import torch

    from trainer.corpus import CorpusFilter, CorpusSource, load_corpus
    from trainer.mixcse.model import resolve_base_model

    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    torch.set_num_threads(args.threads)
    corpus = load_corpus(CorpusSource(paths=(str(WIKI),), one_per_line=True), CorpusFilter(),
                         seed=args.seed, min_sentences=2 * args.batch_size)
    logging.info("corpus: %s", corpus.stats)
    results = {"args": {k: str(v) for k, v in vars(args).items()},
               "corpus": corpus.stats.__dict__ | {"failures": []}, "bases": {}}
    for base in args.bases:
        info = resolve_base_model(base)
        logging.info("%s: scoring the base model", base)
        before = score(info.path, info.pooling, info.query_prefix, args.tasks)
        runs = [run_one(base, lam, args, corpus) for lam in (None, 0.2)]
        results["bases"][base] = {"before": before, "runs": runs}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2))
    print(markdown(results))
    return 0


def markdown(results: dict) -> str:
    names = {"STSBenchmark": "STS-B", "SICKRelatedness": "SICK-R"}
    lines = []
    for base, data in results["bases"].items():
        tasks = list(data["before"]["scores"])
        lines.append(f"\n**{base}**\n")
        lines.append("| model | " + " | ".join(names.get(t, t) for t in tasks)
                     + " | Avg | align | uniform | train s |")
        lines.append("|---" * (len(tasks) + 5) + "|")
        rows = [("before training", data["before"], None)]
        rows += [(f"{r['method']} ({len(r['losses'])} steps)", r["sts"], r["train_seconds"]) for r in data["runs"]]
        for label, sts, seconds in rows:
            cells = [f"{sts['scores'][t]:.2f}" for t in tasks]
            lines.append(f"| {label} | " + " | ".join(cells) + f" | **{sts['average']:.2f}** | "
                         f"{sts['alignment']:.3f} | {sts['uniformity']:.3f} | "
                         f"{'' if seconds is None else f'{seconds:.0f}'} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
