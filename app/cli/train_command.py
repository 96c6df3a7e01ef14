"""`babelfind train`: adapt an encoder to your own sentences with MixCSE, then register it.

    babelfind train --corpus ~/notes --base multilingual-e5-small --out notes-e5 --max-steps 500
    babelfind train --collection notes --base all-minilm-l6-v2 --out notes-mini --activate
    babelfind train --pairs de-en.tsv fr-en.tmx --corpus ~/notes --out notes-xx   # across languages
    babelfind train --out notes-e5 --resume          # after a crash or Ctrl-C

The run folder (checkpoints, best model) is BABELFIND_HOME/training/OUT unless --run-dir.
Training needs no installed model, so a fresh home installs nothing first: a bundled
--base is read from its Python package (trainer.mixcse.model.resolve_base_model) and the new
model is registered on its own.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from app.cli.arguments import at_least_one, existing_folder, existing_path, non_negative, user_folder_path
from engine.errors import InputError

LAM_NONE = ("none", "simcse")


def register(subparsers) -> None:
    from trainer.config import PAIR_ROLES, TRAINABLE  # no torch: the settings object only

    parser = subparsers.add_parser(
        "train", help="fine-tune an encoder on your sentences and/or translation pairs (MixCSE)")
    parser.add_argument("--pairs", nargs="+", metavar="FILE", type=existing_path,
                        help="translation pairs (TSV score/source/target or TMX, e.g. from "
                             "'babelfind mine'): teaches the model your languages")
    parser.add_argument("--pair-min-score", type=float,
                        help="drop pairs the finder scored below this margin")
    parser.add_argument("--holdout", type=float, default=0.1,
                        help="share of the pairs kept apart to score the model (default 0.1)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--corpus", nargs="+", type=existing_path, metavar="PATH",
                        help="files or folders to learn from")
    source.add_argument("--collection", metavar="NAME",
                        help="an indexed collection (path or folder name); '*' for every indexed document")
    parser.add_argument("--base", default="multilingual-e5-small",
                        help="registry model or transformers folder to start from")
    parser.add_argument("--out", required=True, metavar="NAME", help="name of the new model")
    parser.add_argument("--mono-weight", type=non_negative, default=1.0,
                        help="with --pairs and a corpus: weight of the corpus's dropout-view loss")
    parser.add_argument("--distill-weight", type=non_negative, default=None,
                        help="hold the corpus sentences' vectors near the base model's with this "
                             "weight, so similarity within a language does not drift (0: off; "
                             "default: 5/tau with --pairs and a corpus, else 0)")
    parser.add_argument("--lam", type=_lam, default=0.2, help="MixCSE lambda; 'none' = SimCSE")
    parser.add_argument("--tau", type=float, default=0.05, help="temperature")
    parser.add_argument("--lr", type=float, default=3e-5, help="learning rate (1e-5 for large models)")
    parser.add_argument("--batch-size", type=at_least_one, default=64, help="sentences per contrastive batch")
    parser.add_argument("--max-len", type=at_least_one, default=32, help="tokens per sentence in training")
    parser.add_argument("--epochs", type=at_least_one, default=1)
    parser.add_argument("--max-steps", type=at_least_one, help="stop after this many steps")
    parser.add_argument("--eval-steps", type=at_least_one, default=125, help="STS-B dev evaluation interval")
    parser.add_argument("--trainable", choices=TRAINABLE, default="all",
                        help="which weights change: all, body (all but the word table), bitfit "
                             "(biases and layer norms only)")
    parser.add_argument("--pair-roles", choices=PAIR_ROLES, default="same",
                        help="with --pairs: encode both sides alike (same), or one as a search "
                             "query and the other as a passage, alternating (query-passage)")
    parser.add_argument("--grad-accum", type=at_least_one, default=1, help="micro-batches per step")
    parser.add_argument("--pooling", choices=("auto", "cls_mlp", "cls", "mean"), default="auto")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--lines", action="store_true", help="corpus .txt files: one sentence a line")
    parser.add_argument("--data", type=existing_folder, help="shared data folder with sts/ (default: ../shared/data)")
    parser.add_argument("--run-dir", type=user_folder_path, help="checkpoint folder (default: BABELFIND_HOME/training/OUT)")
    parser.add_argument("--resume", action="store_true", help="continue the run in the run folder")
    parser.add_argument("--activate", action="store_true", help="make the new model active (re-encodes)")
    parser.add_argument("--replace", action="store_true", help="overwrite an installed model named OUT")
    parser.add_argument("--no-sts", action="store_true", help="skip STS scoring before/after")
    parser.add_argument("--json", action="store_true", help="machine-readable summary")
    parser.set_defaults(run=run_train, check=check_train)


def check_train(args) -> None:
    """The checks that need no model: what to learn from, and a free name for the result."""
    from app.training_extra import require_training
    from engine.config import data_paths
    from engine.models import check_name, model_dir

    require_training("babelfind train")
    if not args.resume and not (args.corpus or args.collection or args.pairs):
        raise InputError("give --corpus PATH..., --collection NAME or --pairs FILE... (or --resume)")
    check_name(args.out)
    if model_dir(args.out, data_paths()).exists() and not args.replace:
        raise InputError(f"a model named '{args.out}' is already installed (use --replace)")


def _lam(text: str) -> float | None:
    if text.lower() in LAM_NONE:
        return None
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1) or 'none', got {text!r}")
    return value


def _sts_dir(args) -> Path | None:
    from app.cli.model_commands import _default_data_dir
    from trainer.evaluate import sts_dir_of

    data = args.data or _default_data_dir()
    try:
        return sts_dir_of(data / "sts") if (data / "sts").is_dir() else sts_dir_of(data)
    except InputError:
        return None


def build_config(args, paths):
    from trainer.config import TrainConfig

    sts_dir = None if args.no_sts else _sts_dir(args)
    run_dir = (args.run_dir or paths.home / "training" / args.out).expanduser().absolute()
    return TrainConfig(
        base=args.base, corpus=tuple(str(Path(p).expanduser().absolute()) for p in args.corpus or ()),
        collection=args.collection, one_per_line=True if args.lines else None, out_dir=run_dir,
        pairs=tuple(str(Path(p).expanduser().absolute()) for p in args.pairs or ()),
        pair_holdout=args.holdout, pair_min_score=args.pair_min_score,
        mono_weight=args.mono_weight, distill_weight=args.distill_weight,
        lam=args.lam, tau=args.tau, lr=args.lr, batch_size=args.batch_size, max_len=args.max_len,
        epochs=args.epochs, max_steps=args.max_steps, eval_steps=args.eval_steps,
        grad_accum=args.grad_accum, trainable=args.trainable, pair_roles=args.pair_roles,
        pooling=args.pooling,
        device=args.device, seed=args.seed, sts_dir=str(sts_dir) if sts_dir else None)


def run_train(args) -> int:
    from app.logging_setup import route_transformers_logs
    from engine.config import data_paths
    from trainer.mixcse.train import TrainFinished, train

    paths = data_paths()
    route_transformers_logs()  # its load report and weight bars go to the log
    config = build_config(args, paths)
    finished = _drive(train(config, resume=args.resume, paths=paths))
    if not isinstance(finished, TrainFinished):
        raise InputError("training ended without a result")
    sts_dir = Path(finished.config.sts_dir) if finished.config.sts_dir and not args.no_sts else None
    _err(f"exporting the best checkpoint (step {finished.best_step}) as '{args.out}'")
    from trainer.mixcse.finish import finish_training

    manifest = finish_training(finished, args.out, sts_dir=sts_dir, activate=args.activate,
                               paths=paths, replace_existing=args.replace)
    switched = _switch(args, paths) if args.activate else False
    _summary(args, manifest, finished, switched)
    return 0


def _err(message: str) -> None:
    print(message, file=sys.stderr)


def _drive(events):
    """Prints corpus counts, shows a progress bar with the loss; returns TrainFinished."""
    from app.cli.train_progress import drive_training
    from trainer.events import TrainFinished, TrainPreparing, TrainStarted

    def stage(event) -> None:  # what the run does before its first step, from the first second
        if isinstance(event, TrainPreparing):
            _err(f"{event.stage}...")

    return drive_training(events, started=TrainStarted, finished=TrainFinished, on_start=_print_start,
                          eval_text=eval_line, other=stage,
                          postfix=lambda step: {"loss": f"{step.loss:.4f}", "lr": f"{step.lr:.2e}"})


def eval_line(event) -> str:
    """One line per evaluation: the selection score, and the held-out pairs' details."""
    when = "base model" if event.step == 0 else f"step {event.step}"
    line = f"{when}: {event.metric} {event.score:.2f}{' (best)' if event.is_best else ''}"
    if event.pairs:
        p = event.pairs
        line += (f" [retrieval {p['source_to_target']:.1f}/{p['target_to_source']:.1f}%, "
                 f"same-language bias {p['same_language_bias']:.1f}% of {p['bias_queries']}]")
    return line


def _print_start(event) -> None:
    s = event.corpus
    if s is not None:
        _err(f"corpus: {s.files} files ({s.files_failed} unreadable), {s.read} sentences read, "
             f"{s.duplicates} duplicates, {s.too_short} too short, {s.too_long} too long, "
             f"{s.kept} kept")
    if event.pairs is not None:
        p = event.pairs
        aside = f"; {p.set_aside} more pairs of those sentences set aside" if p.set_aside else ""
        _err(f"pairs: {p.read} read, {p.duplicates} duplicates, {p.filtered} outside the limits, "
             f"{p.kept} kept: {p.trained} to train on, {p.held_out} held out to score the model{aside}")
    c = event.config
    _err(f"training {c.base} ({c.pooling}) on {event.device}: {event.total_steps} steps of "
         f"{c.batch_size}, lambda {c.lam}, tau {c.tau}, lr {c.lr}"
         + (f", resuming at step {event.start_step}" if event.start_step else ""))


def _switch(args, paths) -> bool:
    """Re-encodes an existing library with the new model (None of it when there is no library)."""
    has_library = getattr(args, "db", None) or (paths.home / "babelfind.db").exists()
    if not has_library:
        return False
    from app.cli.library_commands import drive, lock_options
    from engine.library import Library

    library = Library.open(paths, db_url=getattr(args, "db", None), **lock_options(args))
    try:
        drive(library.switch_model(args.out), show_progress=sys.stderr.isatty())
    finally:
        library.close()
    return True


def _summary(args, manifest, finished, switched: bool) -> None:
    training = manifest.training or {}
    data = {"model": manifest.name, "best_step": finished.best_step, "steps": finished.steps,
            "metric": finished.metric, "best_score": finished.best_score,
            "held_out_pairs": finished.held_out, "held_out_sentences": finished.held_out_sentences,
            "run_dir": str(finished.run_dir),
            "sts_before": (training.get("sts_before") or {}).get("average"),
            "sts_after": (training.get("sts_after") or {}).get("average"),
            "active": bool(args.activate), "reindexed": switched}
    if args.json:
        print(json.dumps(data, indent=2))
        return
    print(f"registered model '{manifest.name}' (best step {finished.best_step} of {finished.steps})")
    held = finished.held_out or {}
    if "base" in held and "best" in held:
        before, after = held["base"], held["best"]
        print(f"held-out translations ({after['pairs']} pairs): found first "
              f"{before['retrieval']:.1f}% before -> {after['retrieval']:.1f}% after; "
              f"same-language bias {before['same_language_bias']:.1f}% -> "
              f"{after['same_language_bias']:.1f}%")
    sentences = finished.held_out_sentences
    if sentences:
        before, after = sentences["base"], sentences["best"]
        print(f"held-out sentences ({after['sentences']}): separation {before['separation']:.1f}% "
              f"before -> {after['separation']:.1f}% after; {after['neighbours_kept']:.0f}% of "
              "their nearest neighbours kept")
    if data["sts_before"] is not None:
        print(f"STS average: {data['sts_before']:.2f} before -> {data['sts_after']:.2f} after")
    if args.activate:
        print(f"active model: {manifest.name}" + (" (index re-encoded)" if switched else ""))
