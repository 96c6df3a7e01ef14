"""Reproduce the paper's unsupervised MixCSE-BERT-base run (STS average 77.66) on a GPU.

    python bench/paper_bert_base.py --bert /models/bert-base-uncased \\
        --wiki /data/wiki1m_for_simcse.txt --sts ../shared/data/sts

The paper's setting (Knowl 9, following SimCSE): 1M English Wikipedia sentences,
bert-base-uncased, [CLS] with an MLP head in training (dropped at test), batch 64, lr 3e-5,
max length 32, tau 0.05, lambda 0.2, one epoch, STS-B dev every 125 steps keeping the best.
The best checkpoint is then scored on STS12-16, STS-B and SICK-R (SimCSE's aggregation) and
compared with the paper's numbers. Nothing is downloaded: the script checks that a GPU, the
weights, the corpus and the STS data are there and says exactly what is missing
(exit code 2) before it starts.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PAPER = {"STS12": 71.71, "STS13": 83.14, "STS14": 75.49, "STS15": 83.64, "STS16": 79.00,
         "STSBenchmark": 78.48, "SICKRelatedness": 72.19, "average": 77.66}
FULL_WIKI_LINES = 1_000_000


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bert", type=Path, default=Path("bert-base-uncased"),
                        help="local bert-base-uncased transformers folder")
    parser.add_argument("--wiki", type=Path, default=REPO.parent / "shared" / "data" / "corpus"
                        / "wiki-en" / "wiki1m_for_simcse.txt", help="SimCSE's wiki1m_for_simcse.txt")
    parser.add_argument("--sts", type=Path, default=REPO.parent / "shared" / "data" / "sts")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "paper_bert_base")
    parser.add_argument("--lam", type=float, default=0.2, help="0 for the SimCSE baseline")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--check", action="store_true", help="only check the prerequisites")
    return parser.parse_args(argv)


def missing_prerequisites(args) -> list[str]:
    """What stops the run, one sentence each (empty when everything is there)."""
    import torch

    from engine.errors import InputError
    from trainer.evaluate import sts_dir_of

    problems = []
    if not torch.cuda.is_available():
        problems.append("no CUDA GPU: torch.cuda.is_available() is False (15,625 steps of "
                        "batch 64 with an STS-B dev evaluation every 125; impractical on a CPU)")
    if not (args.bert / "config.json").is_file():
        problems.append(f"bert-base-uncased weights not found at {args.bert} (need config.json, "
                        "model weights and the tokenizer; pass --bert FOLDER)")
    if not args.wiki.is_file():
        problems.append(f"Wikipedia corpus not found at {args.wiki} (SimCSE's data/download_wiki.sh "
                        "fetches wiki1m_for_simcse.txt; pass --wiki FILE)")
    else:
        with open(args.wiki, "rb") as f:
            lines = sum(block.count(b"\n") for block in iter(lambda: f.read(1 << 24), b""))
        if lines < FULL_WIKI_LINES * 0.99:
            problems.append(f"{args.wiki} has {lines} lines, not the paper's 1M (the shared "
                            "wiki-en file is only the first 11,914 lines)")
    try:
        sts_dir_of(args.sts)
    except InputError as e:
        problems.append(str(e))
    return problems


def main(argv=None) -> int:
    args = parse_args(argv)
    problems = missing_prerequisites(args)
    if problems:
        print("cannot reproduce the paper's BERT-base run:", file=sys.stderr)
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
        return 2
    if args.check:
        print("all prerequisites are present")
        return 0
    from trainer.config import TrainConfig
    from trainer.evaluate import evaluate_sts, format_report, sts_dir_of
    from trainer.mixcse.model import SentenceModel, torch_encode
    from trainer.mixcse.train import TrainEval, TrainFinished, TrainStep, train

    sts_dir = sts_dir_of(args.sts)
    config = TrainConfig(base=str(args.bert), corpus=(str(args.wiki),), one_per_line=True,
                         out_dir=args.out, lam=args.lam or None, tau=0.05, lr=3e-5, batch_size=64,
                         max_len=32, epochs=1, eval_steps=125, checkpoint_steps=1000, pooling="cls_mlp",
                         device="cuda",
                         sts_dir=str(sts_dir), seed=args.seed, min_chars=1, min_words=1,
                         max_chars=10**6, max_words=10**6)  # keep every line, as SimCSE does
    finished = None
    for event in train(config, resume=(args.out / "latest.json").is_file()):
        if isinstance(event, TrainStep) and event.step % 250 == 0:
            print(f"step {event.step}/{event.total} loss {event.loss:.4f} eta {event.eta_s / 60:.0f} min")
        elif isinstance(event, TrainEval):
            print(f"step {event.step}: STS-B dev {event.score:.2f} (best {event.best_score:.2f})")
        elif isinstance(event, TrainFinished):
            finished = event
    model = SentenceModel.load(finished.best_checkpoint / "model", "cls_mlp").cuda().eval()
    report = evaluate_sts(torch_encode(model, "", max_len=256), sts_dir)
    print(format_report(report, f"MixCSE-BERT-base (best step {finished.best_step})"))
    print("paper:", " ".join(f"{k} {v:.2f}" for k, v in PAPER.items()))
    (args.out / "sts.json").write_text(json.dumps(report.to_dict() | {"paper": PAPER}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
