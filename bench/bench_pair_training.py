"""Does training on translation pairs teach the default model the user's languages?

    OMP_NUM_THREADS=2 python bench/bench_pair_training.py --steps 150 --tatoeba-limit 1000

multilingual-e5-small is trained on PUD pairs (ten languages -> English; Tatoeba never
in training) twice with the same pairs, steps and seed: MixCSE (lambda 0.2, mixed
negatives from the translations) and plain in-batch contrastive (lambda none). The base
model and both results are then scored on:

* Tatoeba error for the PUD languages and for every other Tatoeba language (unseen in
  training), the first `--tatoeba-limit` pairs of each;
* STS-B test (English) and STS 2017 cross-lingual tracks (ar-en, es-en a/b);
* the same-language bias of bench_language_bias: English queries, their translations
  among as many unrelated English sentences, top-1 with the distractors (10 languages).

Trained checkpoints stay in bench/out/pair-training/ (re-used when present); the table
goes to stdout and the numbers to bench/out/pair-training/results.json.
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

DATA = REPO.parent / "shared" / "data"
TATOEBA = DATA / "tatoeba" / "v1"
PUD = DATA / "corpus" / "pud-parallel"
STS2017 = DATA / "multilingual-sts" / "STS2017"
OUT = REPO / "bench" / "out" / "pair-training"  # default of --out
# PUD language -> its Tatoeba code
PUD_TATOEBA = {"ar": "ara", "de": "deu", "es": "spa", "fr": "fra", "hi": "hin", "it": "ita",
               "pt": "por", "ru": "rus", "tr": "tur", "zh": "cmn"}
# STS 2017's cross-lingual tracks; tr-en is left out: its input has 500 lines for 250 scores
CROSS_TRACKS = {"ar-en": "track2.ar-en", "es-en a": "track4a.es-en", "es-en b": "track4b.es-en"}


class TorchEncoder:
    """The Encoder interface over a trained checkpoint (or the base) in torch."""

    def __init__(self, folder: Path, name: str):
        from trainer.model import SentenceModel, torch_encode

        self.name, self.dim = name, 384
        self._encode = torch_encode(SentenceModel.load(folder, "mean"), "query: ", max_len=128)

    def encode(self, texts, kind="query"):
        return np.asarray(self._encode(list(texts)), dtype=np.float32)


def pud_pairs_file(out: Path) -> Path:
    """Every PUD language paired with English, as the finder's TSV."""
    from engine.mining.bitext_io import write_pairs

    english = _pud("en")
    rows = [(1.0, text, english[i]) for lang in PUD_TATOEBA for i, text in enumerate(_pud(lang))]
    out.mkdir(parents=True, exist_ok=True)
    return write_pairs(out / "pud-pairs.tsv", rows)


def _pud(lang: str) -> list[str]:
    lines = (PUD / f"pud.{lang}.tsv").read_text(encoding="utf-8").splitlines()
    return [line.split("\t", 1)[1] for line in lines if "\t" in line]


def trained(name: str, lam, args) -> Path:
    """The best checkpoint of one training run (trained now unless already there)."""
    from trainer.config import TrainConfig
    from trainer.train import TrainEval, TrainFinished, train

    run_dir = args.out / name
    best = run_dir / "best" / "model"
    if best.is_dir():
        return best
    config = TrainConfig(base="multilingual-e5-small", pairs=(str(pud_pairs_file(args.out)),),
                         out_dir=run_dir, lam=lam, batch_size=args.batch_size, max_len=args.max_len,
                         max_steps=args.steps, eval_steps=args.eval_steps, lr=args.lr,
                         pair_holdout=0.05, device="cpu", seed=42)
    started = time.monotonic()
    for event in train(config):
        if isinstance(event, TrainEval):
            print(f"  {name} step {event.step}: held-out retrieval {event.score:.2f}", file=sys.stderr)
        elif isinstance(event, TrainFinished):
            print(f"  {name}: {event.steps} steps in {time.monotonic() - started:.0f} s",
                  file=sys.stderr)
    return best


def tatoeba(encoder, limit: int) -> dict:
    from engine.eval_tatoeba import available_languages, load_pair, nearest_neighbour_error

    errors = {}
    for lang in available_languages(TATOEBA):
        other, english = (side[:limit] for side in load_pair(TATOEBA, lang))
        to_eng, from_eng = nearest_neighbour_error(encoder.encode(other), encoder.encode(english))
        errors[lang] = (to_eng + from_eng) / 2
    seen = set(PUD_TATOEBA.values())
    return {"pud": float(np.mean([e for lang, e in errors.items() if lang in seen])),
            "unseen": float(np.mean([e for lang, e in errors.items() if lang not in seen])),
            "per_language": errors}


def sts(encoder) -> dict:
    from trainer.evaluate import cosine_scores, load_stsb, spearman, sts_dir_of

    encode = encoder.encode
    stsb = load_stsb(sts_dir_of(DATA / "sts"), "test")
    scores = {"sts-b": 100 * spearman(cosine_scores(encode, stsb), stsb.gold)}
    for name, track in CROSS_TRACKS.items():
        left, right, gold = _sts2017(track)
        a, b = encode(left), encode(right)
        a /= np.linalg.norm(a, axis=1, keepdims=True)
        b /= np.linalg.norm(b, axis=1, keepdims=True)
        scores[name] = 100 * spearman((a * b).sum(1), gold)
    scores["sts2017-cross"] = float(np.mean([scores[name] for name in CROSS_TRACKS]))
    return scores


def _sts2017(track: str):
    lines = (STS2017 / "STS2017.eval.v1.1" / f"STS.input.{track}.txt").read_text(encoding="utf-8").splitlines()
    gold = (STS2017 / "STS2017.gs" / f"STS.gs.{track}.txt").read_text(encoding="utf-8").split()
    pairs = [line.split("\t")[:2] for line in lines[:len(gold)]]
    return [p[0] for p in pairs], [p[1] for p in pairs], np.array([float(g) for g in gold])


def bias(encoder, n: int) -> float:
    from engine.eval_tatoeba import load_pair

    _, english = load_pair(TATOEBA, DISTRACTOR_FILE)
    distractors = encoder.encode(english[-n:], kind="passage")
    return float(np.mean([readings(encoder, lang, distractors, n)["with_english"]
                          for lang in BIAS_LANGUAGES]))


def score(encoder, args) -> dict:
    started = time.monotonic()
    result = {"tatoeba": tatoeba(encoder, args.tatoeba_limit), "sts": sts(encoder),
              "bias_top1": bias(encoder, args.bias_sentences)}
    print(f"  scored {encoder.name} in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-len", type=int, default=48)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--eval-steps", type=int, default=50)
    parser.add_argument("--tatoeba-limit", type=int, default=1000)
    parser.add_argument("--bias-sentences", type=int, default=300)
    parser.add_argument("--out", type=Path, default=OUT, help="checkpoints and results.json")
    args = parser.parse_args(argv)
    from engine.config import data_paths
    from trainer.model import resolve_base_model

    models = {"base": resolve_base_model("multilingual-e5-small", data_paths()).path,
              "mixcse": trained("mixcse", 0.2, args), "in-batch": trained("in-batch", None, args)}
    results = {name: score(TorchEncoder(folder, name), args) for name, folder in models.items()}
    (args.out / "results.json").write_text(json.dumps({"args": vars(args) | {"out": str(args.out)},
                                                       "results": results}, indent=2))
    print("| model | Tatoeba err PUD langs | Tatoeba err other langs | STS-B | STS2017 cross | "
          "bias top-1 (with English) |")
    print("|---|---|---|---|---|---|")
    for name, r in results.items():
        print(f"| {name} | {r['tatoeba']['pud']:.2f} | {r['tatoeba']['unseen']:.2f} | "
              f"{r['sts']['sts-b']:.2f} | {r['sts']['sts2017-cross']:.2f} | {100 * r['bias_top1']:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
