"""Does training on translation pairs teach the default model the user's languages?

    OMP_NUM_THREADS=2 python bench/bench_pair_training.py --steps 150 --tatoeba-limit 1000

multilingual-e5-small is trained on PUD pairs (ten languages -> English, 900 meanings in
each; 100 meanings held out; Tatoeba never in training) twice with the same pairs, steps
and seed: MixCSE (lambda 0.2, mixed negatives from the translations) and plain in-batch
contrastive (lambda none). The base model and both results (their last checkpoints) are
then scored on:

* Tatoeba error for the PUD languages (first `--tatoeba-limit` pairs each) and for the
  other Tatoeba languages, unseen in training (`--unseen-languages` of them, evenly spread,
  first `--unseen-limit` pairs each);
* STS-B test (English) and STS 2017 cross-lingual tracks (ar-en, es-en a/b), the first
  `--sts-limit` pairs of each;
* the same-language bias of bench_language_bias: English queries, their translations
  among as many unrelated English sentences, top-1 with the distractors (10 languages).

`--runs mixcse+corpus in-batch+corpus` train English Wikipedia sentences beside the pairs
(dropout views, `--mono-weight`, and the anchor to the base's vectors, `--distill-weight`).
Settings are chosen on dev signals, never on the test sets above: `--dev-only` scores STS-B
dev and its cross-lingual stand-in (bench/pair_training_dev.py), kept in dev-NAME.json.

The defaults score everything in full; on a shared CPU the limits make a run fit (see
docs/benchmarks.md for the command used). Trained checkpoints stay in
bench/out/pair-training/ (one folder per setting, resumed or re-used when present), each
model's scores in scores-NAME.json there (NAME: the run folder's name, or base); the table goes to stdout and the numbers to
bench/out/pair-training/results.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_language_bias import DISTRACTOR_FILE, LANGUAGES as BIAS_LANGUAGES, readings  # noqa: E402

DATA = REPO.parent / "shared" / "data"
TATOEBA = DATA / "tatoeba" / "v1"
PUD = DATA / "corpus" / "pud-parallel"
WIKI = DATA / "corpus" / "wiki-en" / "wiki1m_for_simcse.head.txt"  # monolingual sentences
# run name -> (MixCSE lambda, None for plain in-batch contrastive; whether WIKI trains too)
RUNS = {"mixcse": (0.2, False), "in-batch": (None, False), "mixcse+corpus": (0.2, True),
        "in-batch+corpus": (None, True)}
STS2017 = DATA / "multilingual-sts" / "STS2017"
OUT = REPO / "bench" / "out" / "pair-training"  # default of --out
# PUD language -> its Tatoeba code
PUD_TATOEBA = {"ar": "ara", "de": "deu", "es": "spa", "fr": "fra", "hi": "hin", "it": "ita",
               "pt": "por", "ru": "rus", "tr": "tur", "zh": "cmn"}
# STS 2017's cross-lingual tracks; tr-en is left out: its input has 500 lines for 250 scores
CROSS_TRACKS = {"ar-en": "track2.ar-en", "es-en a": "track4a.es-en", "es-en b": "track4b.es-en"}


class TorchEncoder:
    """The Encoder interface over a trained checkpoint (or the base) in torch.

    Sentences are encoded sorted by length so that a batch pads to similar lengths (the
    vectors come back in the caller's order): on a shared CPU this halves scoring time.
    """

    def __init__(self, folder: Path, name: str):
        from trainer.mixcse.model import SentenceModel, torch_encode

        self.name, self.dim = name, 384
        self._encode = torch_encode(SentenceModel.load(folder, "mean"), "query: ", max_len=128)

    def encode(self, texts, kind="query"):
        texts = list(texts)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors = np.asarray(self._encode([texts[i] for i in order]), dtype=np.float32)
        out = np.empty_like(vectors)
        out[order] = vectors
        return out


def pud_pairs(out: Path) -> Path:
    """The pairs file the runs train on: every PUD language paired with English, as
    `babelfind train --pairs` would read it.

    PUD is 1000 meanings in 11 languages, so ten languages -> English repeat each English
    sentence ten times. `trainer.pairs.load_pairs` (the command's loader) keeps every pair,
    holds 10% of the meanings out in every language (100), scores one pair of each (round
    robin over the languages) and trains on the 9,000 pairs of the others, in batches
    where no two pairs share a sentence.
    """
    from engine.mining.bitext_io import write_pairs

    english = _pud("en")
    rows = [(1.0, sentence, english[i]) for lang in PUD_TATOEBA for i, sentence in enumerate(_pud(lang))]
    out.mkdir(parents=True, exist_ok=True)
    return write_pairs(out / "pud-pairs.tsv", rows)


def _pud(lang: str) -> list[str]:
    lines = (PUD / f"pud.{lang}.tsv").read_text(encoding="utf-8").splitlines()
    return [line.split("\t", 1)[1] for line in lines if "\t" in line]


def trained(name: str, lam, args, corpus: bool = False) -> tuple[Path, dict]:
    """(model folder, held-out pair scores) of one run after `--steps` steps, trained now
    unless a finished run is already there (an interrupted one is resumed).

    The last checkpoint is scored, not the run's "best": both runs are compared after the
    same number of steps, and 100 held-out pairs are too few to choose between checkpoints
    (the base model already finds nearly all of them). `corpus`: the English Wikipedia
    sentences' dropout views train beside the pairs (TrainConfig.mono_weight 1).
    """
    from trainer import checkpoint as ckpt
    from trainer.config import TrainConfig
    from trainer.mixcse.train import TrainEval, TrainFinished, TrainStep, pairs_for, train

    run_dir = args.out / run_name(name, args, corpus)
    last = ckpt.latest_checkpoint(run_dir)
    held_file = run_dir / "bench_held_out.json"
    if last is not None and held_file.is_file() and last.name == f"step-{args.steps:08d}":
        return last / "model", json.loads(held_file.read_text())
    config = TrainConfig(base="multilingual-e5-small", pairs=(str(pud_pairs(args.out)),), out_dir=run_dir,
                         corpus=(str(WIKI),) if corpus else (),
                         lam=lam, batch_size=args.batch_size, max_len=args.max_len,
                         max_steps=args.steps, eval_steps=args.eval_steps, pair_holdout=0.1,
                         lr=args.lr, device="cpu", seed=42, **loss_settings(args, corpus))
    # pairs per epoch / batch: steps beyond one epoch need more epochs
    epochs = -(-args.steps // (pairs_for(config).stats.trained // args.batch_size))
    started, held = time.monotonic(), {}
    for event in train(replace(config, epochs=epochs), resume=last is not None):
        if isinstance(event, TrainEval):
            held["base" if event.step == 0 else "last"] = event.pairs | {"step": event.step}
            print(f"  {name} step {event.step}: held-out retrieval {event.score:.2f}, same-language "
                  f"bias {event.pairs['same_language_bias']:.1f}", file=sys.stderr, flush=True)
        elif isinstance(event, TrainStep) and event.step % 10 == 0:
            print(f"  {name} step {event.step}/{event.total}: loss {event.loss:.3f}, "
                  f"{time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
        elif isinstance(event, TrainFinished):
            print(f"  {name}: {event.steps} steps in {time.monotonic() - started:.0f} s",
                  file=sys.stderr, flush=True)
    held_file.write_text(json.dumps(held, indent=2))
    return ckpt.latest_checkpoint(run_dir) / "model", held


def loss_settings(args, corpus: bool) -> dict:
    """The TrainConfig fields the command line sets beyond the defaults (tau, and with the
    corpus its weights)."""
    settings = {} if args.tau is None else {"tau": args.tau}
    if corpus:
        settings["mono_weight"] = args.mono_weight
        if args.distill_weight is not None:
            settings["distill_weight"] = args.distill_weight
    return settings


def distill_weight(args, corpus: bool) -> float:
    """The distillation weight a run trains with: --distill-weight, or TrainConfig's default."""
    from trainer.config import TrainConfig

    if not corpus:
        return 0.0
    return TrainConfig(pairs=("pairs",), corpus=("corpus",), **loss_settings(args, corpus)).distill


def run_name(name: str, args, corpus: bool) -> str:
    """One folder per setting, so a rerun with other settings neither reuses nor resumes it."""
    parts = [name, f"steps{args.steps}", f"batch{args.batch_size}", f"len{args.max_len}", f"lr{args.lr:g}"]
    settings = loss_settings(args, corpus)
    if "tau" in settings:
        parts.append(f"tau{settings['tau']:g}")
    if corpus:
        parts.append("wiki")
        if settings["mono_weight"] != 1:
            parts.append(f"mono{settings['mono_weight']:g}")
        if distill_weight(args, corpus):
            parts.append(f"distill{distill_weight(args, corpus):g}")
    return "-".join(parts)


def tatoeba_languages(unseen: int | None) -> list[str]:
    """The PUD languages, and `unseen` other languages spread evenly over the sorted rest
    (None: all of them)."""
    from engine.eval_tatoeba import available_languages

    every = sorted(available_languages(TATOEBA))
    seen = [lang for lang in every if lang in set(PUD_TATOEBA.values())]
    rest = [lang for lang in every if lang not in seen]
    if unseen is not None and unseen < len(rest):
        rest = [rest[int(i * len(rest) / unseen)] for i in range(unseen)]
    return seen + rest


def tatoeba(encoder, limit: int, unseen_limit: int, unseen: int | None) -> dict:
    """Mean error (to and from English, percent) over the PUD languages (their first
    `limit` pairs) and over the other languages (their first `unseen_limit`)."""
    from engine.eval_tatoeba import load_pair, nearest_neighbour_error

    seen, errors = set(PUD_TATOEBA.values()), {}
    for lang in tatoeba_languages(unseen):
        n = limit if lang in seen else unseen_limit
        other, english = (side[:n] for side in load_pair(TATOEBA, lang))
        to_eng, from_eng = nearest_neighbour_error(encoder.encode(other), encoder.encode(english))
        errors[lang] = (to_eng + from_eng) / 2
    return {"pud": float(np.mean([e for lang, e in errors.items() if lang in seen])),
            "unseen": float(np.mean([e for lang, e in errors.items() if lang not in seen])),
            "per_language": errors}


def sts(encoder, limit: int | None) -> dict:
    """Spearman x 100 on STS-B test and the STS 2017 cross-lingual tracks (their first
    `limit` pairs each; None: all)."""
    from dataclasses import replace

    from trainer.evaluate import cosine_scores, load_stsb, spearman, sts_dir_of

    encode = encoder.encode
    stsb = load_stsb(sts_dir_of(DATA / "sts"), "test")
    if limit is not None:
        stsb = replace(stsb, left=stsb.left[:limit], right=stsb.right[:limit], gold=stsb.gold[:limit])
    scores = {"sts-b": 100 * spearman(cosine_scores(encode, stsb), stsb.gold)}
    for name, track in CROSS_TRACKS.items():
        left, right, gold = (side[:limit] for side in _sts2017(track))
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
    from engine.index.language_means import LanguageMeans

    _, english = load_pair(TATOEBA, DISTRACTOR_FILE)
    distractors = encoder.encode(english[-n:], kind="passage")
    means = LanguageMeans(encoder.dim)
    return float(np.mean([readings(encoder, lang, distractors, n, means)["with_english"]
                          for lang in BIAS_LANGUAGES]))


def dev(name: str, folder: Path, args) -> dict:
    """STS-B dev and its cross-lingual stand-in (bench/pair_training_dev.py): what chooses
    the settings. Kept in OUT/dev-NAME.json like the test scores."""
    from pair_training_dev import dev_scores

    return _cached(args.out / f"dev-{name}.json", {"model": str(folder), "stride": args.dev_stride},
                   lambda: dev_scores(TorchEncoder(folder, name), args.dev_stride))


def _cached(path: Path, settings: dict, compute) -> dict:
    if path.is_file():
        saved = json.loads(path.read_text())
        if saved.get("settings") == settings:
            return saved["result"]
    result = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"settings": settings, "result": result}, indent=2))
    return result


def score(name: str, folder: Path, args) -> dict:
    """The test scores of one model, kept in OUT/scores-NAME.json for a rerun with the same
    settings (an interrupted benchmark does not score twice). NAME is the run's folder name
    (the settings it was trained with) or "base"."""
    settings = {k: getattr(args, k) for k in ("tatoeba_limit", "unseen_limit", "unseen_languages",
                                              "sts_limit", "bias_sentences")}
    settings["model"] = str(folder)
    if name != "base":  # the base's scores do not depend on the training settings
        settings |= {k: getattr(args, k) for k in ("steps", "batch_size", "max_len", "lr")}
    cache = args.out / f"scores-{name}.json"
    if cache.is_file():
        saved = json.loads(cache.read_text())
        if saved.get("settings") == settings:
            return saved["result"]
    started, encoder = time.monotonic(), TorchEncoder(folder, name)
    result = {"tatoeba": tatoeba(encoder, args.tatoeba_limit, args.unseen_limit, args.unseen_languages)}
    print(f"  {name}: Tatoeba in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    result |= {"sts": sts(encoder, args.sts_limit), "bias_top1": bias(encoder, args.bias_sentences)}
    print(f"  scored {name} in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"settings": settings, "result": result}, indent=2))
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-len", type=int, default=48)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--eval-steps", type=int, default=50)
    parser.add_argument("--tatoeba-limit", type=int, default=1000,
                        help="Tatoeba pairs per PUD language (the languages trained on)")
    parser.add_argument("--unseen-limit", type=int, default=None,
                        help="Tatoeba pairs per other language (default: --tatoeba-limit)")
    parser.add_argument("--unseen-languages", type=int, default=None,
                        help="score this many of the other Tatoeba languages, evenly spread (default: all)")
    parser.add_argument("--sts-limit", type=int, default=None,
                        help="first N pairs of STS-B test and of each STS 2017 track (default: all)")
    parser.add_argument("--bias-sentences", type=int, default=300)
    parser.add_argument("--runs", nargs="+", choices=tuple(RUNS), default=["mixcse", "in-batch"],
                        help="trainings to compare with the base; mixcse+corpus adds English "
                             "Wikipedia sentences, whose dropout views hold monolingual similarity")
    parser.add_argument("--out", type=Path, default=OUT, help="checkpoints and results.json")
    parser.add_argument("--tau", type=float, default=None,
                        help="temperature of the training loss (default: TrainConfig's)")
    parser.add_argument("--mono-weight", type=float, default=1.0,
                        help="mixcse+corpus: weight of the Wikipedia sentences' dropout-view loss")
    parser.add_argument("--distill-weight", type=float, default=None,
                        help="runs with the corpus: weight of the term keeping the Wikipedia "
                             "sentences' vectors near the base model's (default: TrainConfig's, "
                             "5/tau; 0: off)")
    parser.add_argument("--dev-only", action="store_true",
                        help="score the dev signals only (to choose settings), no test set")
    parser.add_argument("--dev-stride", type=int, default=3,
                        help="every Nth pair of STS-B dev (and of stsb-multi-mt dev) for the dev signals")
    args = parser.parse_args(argv)
    args.unseen_limit = args.unseen_limit or args.tatoeba_limit
    from engine.config import data_paths
    from trainer.mixcse.model import resolve_base_model

    # the base is scored first: a scoring problem shows before an hour of training
    base = resolve_base_model("multilingual-e5-small", data_paths()).path
    results = {"base": {"dev": dev("base", base, args)}}
    if not args.dev_only:
        results["base"] |= score("base", base, args)
    for name in args.runs:
        lam, corpus = RUNS[name]
        folder, held = trained(name, lam, args, corpus)
        label = run_name(name, args, corpus)
        results[label] = {"dev": dev(label, folder, args), "held_out": held}
        if not args.dev_only:
            results[label] |= score(label, folder, args)
    (args.out / ("dev-results.json" if args.dev_only else "results.json")).write_text(
        json.dumps({"args": vars(args) | {"out": str(args.out)}, "results": results}, indent=2))
    print_tables(results, args.dev_only)
    return 0


def print_tables(results: dict, dev_only: bool) -> None:
    print("| model | STS-B dev | cross dev, PUD languages | cross dev, unseen | held-out retrieval |")
    print("|---|---|---|---|---|")
    for name, r in results.items():
        held = r.get("held_out", {}).get("last", {}).get("retrieval")
        print(f"| {name} | {r['dev']['sts-b dev']:.2f} | {r['dev']['cross dev seen']:.2f} | "
              f"{r['dev']['cross dev unseen']:.2f} | {'' if held is None else f'{held:.2f}'} |")
    if dev_only:
        return
    print("\n| model | Tatoeba err PUD langs | Tatoeba err other langs | STS-B | STS2017 cross | "
          "bias top-1 (with English) |")
    print("|---|---|---|---|---|---|")
    for name, r in results.items():
        print(f"| {name} | {r['tatoeba']['pud']:.2f} | {r['tatoeba']['unseen']:.2f} | "
              f"{r['sts']['sts-b']:.2f} | {r['sts']['sts2017-cross']:.2f} | {100 * r['bias_top1']:.1f} |")


if __name__ == "__main__":
    sys.exit(main())
