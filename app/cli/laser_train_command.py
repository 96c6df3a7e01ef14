"""`babelfind train-laser`: distil a fast LASER-architecture encoder from a registered model.

    babelfind train-laser --corpus ~/notes --out notes-laser                 # teacher: the active model
    babelfind train-laser --teacher multilingual-e5-small --corpus ~/notes --pairs de-en.tsv --out x
    babelfind train-laser --out notes-laser --resume                         # after a crash or Ctrl-C

A BiLSTM learns to give the teacher's vectors (trainer.laser.student); the result is a
LASER model (family "laser") that search, index and mine use like any other, several times
faster than a transformer on a CPU. The run folder is BABELFIND_HOME/training/OUT unless
--run-dir; the teacher's vectors are cached there, so --resume does not encode again.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from app.cli.arguments import at_least_one, existing_path, user_folder_path
from app.cli.model_setup import ACTIVE_MODEL
from engine.errors import InputError
from trainer.laser.student_config import DEVICES, StudentConfig as Defaults


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "train-laser", help="distil a fast LASER (BiLSTM) encoder from a model, on your sentences")
    parser.add_argument("--teacher", help="registered model to learn from (default: the active model)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--corpus", nargs="+", type=existing_path, metavar="PATH",
                        help="files or folders of sentences")
    source.add_argument("--collection", metavar="NAME", help="an indexed collection (path or folder name)")
    parser.add_argument("--pairs", nargs="+", type=existing_path, metavar="FILE",
                        help="translation pairs (TSV/TMX): each side also learns its translation's vector")
    parser.add_argument("--out", required=True, metavar="NAME", help="name of the new model")
    parser.add_argument("--steps", type=at_least_one, help="optimiser steps (default: --epochs passes)")
    parser.add_argument("--epochs", type=at_least_one, default=Defaults.epochs)
    parser.add_argument("--minutes", type=float, help="stop training after this long (then export)")
    parser.add_argument("--vocab-size", type=at_least_one, default=Defaults.vocab_size,
                        help="SentencePiece pieces (fewer when the corpus is small)")
    parser.add_argument("--layers", type=at_least_one, default=Defaults.num_layers, help="stacked BiLSTM layers")
    parser.add_argument("--embed-dim", type=at_least_one, default=Defaults.embed_dim)
    parser.add_argument("--random-embeddings", action="store_true",
                        help="start the token embeddings random, not from the teacher's table")
    parser.add_argument("--embedding-lr-scale", type=float, default=Defaults.embedding_lr_scale, metavar="S",
                        help="the embeddings' learning rate as a share of --lr (0: frozen)")
    parser.add_argument("--spans", type=int, default=Defaults.spans_per_sentence, metavar="N",
                        help="also learn N random runs of words of each sentence (0: whole sentences only)")
    parser.add_argument("--batch-size", type=at_least_one, default=Defaults.batch_size)
    parser.add_argument("--lr", type=float, default=Defaults.lr)
    parser.add_argument("--threads", type=at_least_one, help="CPU threads for torch")
    parser.add_argument("--device", choices=DEVICES, default=Defaults.device)
    parser.add_argument("--seed", type=int, default=Defaults.seed)
    parser.add_argument("--lines", action="store_true", help="corpus .txt files: one sentence a line")
    parser.add_argument("--run-dir", type=user_folder_path, help="checkpoint folder (default: BABELFIND_HOME/training/OUT)")
    parser.add_argument("--resume", action="store_true", help="continue the run in the run folder")
    parser.add_argument("--activate", action="store_true", help="make the new model active (re-encodes)")
    parser.add_argument("--replace", action="store_true", help="overwrite an installed model named OUT")
    parser.add_argument("--json", action="store_true", help="machine-readable summary")
    parser.set_defaults(run=run_train_laser, check=check_train_laser,
                        uses_model=lambda args: None if args.resume else (args.teacher or ACTIVE_MODEL))


def check_train_laser(args) -> None:
    """What to learn from, and a free name for the result, before any model loads."""
    from app.training_extra import require_training
    from engine.config import data_paths
    from engine.models import check_name, model_dir

    require_training("babelfind train-laser")
    if not args.resume and not (args.corpus or args.collection or args.pairs):
        raise InputError("give --corpus PATH..., --collection NAME or --pairs FILE... (or --resume)")
    if args.minutes is not None and not args.minutes > 0:
        raise InputError(f"--minutes must be > 0, got {args.minutes}")
    check_name(args.out)
    if model_dir(args.out, data_paths()).exists() and not args.replace:
        raise InputError(f"a model named '{args.out}' is already installed (use --replace)")


def build_config(args, paths):
    from engine.models import active_model_name
    from trainer.laser.student_config import StudentConfig
    from trainer.laser.student_files import saved_config

    run_dir = (args.run_dir or paths.home / "training" / args.out).expanduser().absolute()
    if args.resume:
        return saved_config(run_dir)
    teacher = args.teacher or active_model_name(paths)
    if not teacher:
        raise InputError("no active model to learn from; give --teacher NAME")
    absolute = lambda items: tuple(str(Path(p).expanduser().absolute()) for p in items or ())  # noqa: E731
    return StudentConfig(
        teacher=teacher, corpus=absolute(args.corpus), collection=args.collection,
        one_per_line=True if args.lines else None, pairs=absolute(args.pairs), out_dir=run_dir,
        vocab_size=args.vocab_size, embed_dim=args.embed_dim, num_layers=args.layers,
        batch_size=args.batch_size, lr=args.lr, steps=args.steps, epochs=args.epochs,
        time_limit_s=args.minutes * 60 if args.minutes else None, threads=args.threads,
        device=args.device, seed=args.seed, init_from_teacher=not args.random_embeddings,
        embedding_lr_scale=args.embedding_lr_scale, spans_per_sentence=args.spans)


def run_train_laser(args) -> int:
    from app.cli.train_command import _switch
    from engine.config import data_paths
    from trainer.laser.student import train_student
    from trainer.laser.student_files import finish_student

    paths = data_paths()
    config = build_config(args, paths)
    finished = drive(train_student(config, resume=args.resume, paths=paths))
    if finished is None:
        raise InputError("training ended without a result")
    print(f"exporting the student (step {finished.best_step}) as '{args.out}'", file=sys.stderr)
    manifest = finish_student(finished, args.out, activate=args.activate, paths=paths,
                              replace_existing=args.replace)
    switched = _switch(args, paths) if args.activate else False
    summary = {"model": manifest.name, "family": manifest.family, "dim": manifest.dim,
               "teacher": finished.config.teacher, "steps": finished.steps,
               "best_step": finished.best_step, "held_out_cosine": finished.best_score,
               "run_dir": str(finished.run_dir), "active": bool(args.activate), "reindexed": switched}
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        score = "" if finished.best_score is None else f", held-out cosine to the teacher {finished.best_score:.1f}"
        print(f"registered LASER model '{manifest.name}' (dim {manifest.dim}, step "
              f"{finished.best_step} of {finished.steps}{score})")
    return 0


def drive(events):
    """Stage lines, a progress bar with the loss; returns the StudentFinished event."""
    from app.cli.train_progress import drive_training
    from trainer.laser.student import StudentFinished, StudentStage, StudentStarted

    stage = None

    def show_stage(event) -> None:
        nonlocal stage
        if isinstance(event, StudentStage) and event.stage != stage:
            stage = event.stage
            print(f"{stage}...", file=sys.stderr)

    return drive_training(events, started=StudentStarted, finished=StudentFinished, on_start=_print_start,
                          eval_text=_eval_line, other=show_stage)


def _eval_line(event) -> str:
    when = "start" if event.step == 0 else f"step {event.step}"
    return f"{when}: {event.metric} {event.score:.2f}{' (best)' if event.is_best and event.step else ''}"


def _print_start(event) -> None:
    c = event.config
    parts = []
    if event.corpus is not None:
        parts.append(f"{event.corpus.kept} corpus sentences")
    if event.pairs is not None:
        parts.append(f"{event.pairs.kept} translation pairs")
    print(f"training a LASER student of {c.teacher} on {', '.join(parts)} ({event.items} items, "
          f"{event.vocab_size} pieces, dim {event.dim}): {event.total_steps} steps of "
          f"{c.batch_size} on {event.device}"
          + (f", resuming at step {event.start_step}" if event.start_step else ""), file=sys.stderr)
