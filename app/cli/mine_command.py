"""`babelfind mine A B`: find the sentence pairs that translate each other in two documents."""

from __future__ import annotations

import argparse
import json
import sys

from app.cli.arguments import at_least_one, existing_file, language_code, output_file
from app.cli.model_setup import ACTIVE_MODEL


def register(subparsers) -> None:
    mine = subparsers.add_parser(
        "mine",
        help="find sentence pairs that translate each other in two documents",
        description="Mine parallel sentences from two documents (any format Babelfind reads, "
        "or plain-text files with one sentence per line: .txt, .tsv, Moses-style corpus.de, "
        "train.src) with margin-based scoring.",
    )
    mine.add_argument("source", type=existing_file, metavar="A", help="source document")
    mine.add_argument("target", type=existing_file, metavar="B", help="target document")
    mine.add_argument("-o", "--output", type=output_file, help="write pairs to a .tsv or .tmx file (default: TSV on stdout)")
    mine.add_argument("--mode", choices=("max", "intersect", "forward", "backward"), default="max",
                      help="which candidates to keep (LASER retrieval modes; default max)")
    mine.add_argument("--margin", choices=("ratio", "distance", "absolute"), default="ratio",
                      help="score: ratio margin, distance margin or plain cosine (default ratio)")
    mine.add_argument("--threshold", type=float, help="keep pairs scoring above this (default per margin)")
    mine.add_argument("--space", choices=("neutral", "plain"), default="neutral",
                      help="compare vectors with each side's language mean taken out (neutral, "
                      "the default) or as encoded (plain); thresholds are per space")
    mine.add_argument("--k", type=at_least_one, default=4, help="neighbours in the margin (default 4)")
    mine.add_argument("--align", choices=("auto", "on", "off"), default="auto",
                      help="ordered alignment for documents that translate each other (default auto)")
    mine.add_argument("--model", help="registered model to encode with (default: the active model)")
    mine.add_argument("--lines", action="store_true", help="read plain-text files as one sentence per line")
    mine.add_argument("--src-lang", type=language_code, help="language of A (ISO 639-1); default: detected")
    mine.add_argument("--tgt-lang", type=language_code, help="language of B (ISO 639-1); default: detected")
    mine.add_argument("--same-language", action="store_true", help="allow both documents in one language")
    mine.add_argument("--json", action="store_true", help="print the result as JSON")
    # On a fresh home the bundled models install first (once): mining always encodes.
    mine.set_defaults(run=run_mine, check=check_mine, uses_model=lambda args: args.model or ACTIVE_MODEL)


def check_mine(args: argparse.Namespace) -> None:
    """Bad options or a bad output extension fail now, not after the models load and encode."""
    from engine.mining.bitext_io import format_for

    options_from(args)  # MiningOptions checks its values
    if args.output is not None:
        format_for(args.output)


def get_encoder(model: str | None):
    """The encoder to mine with (main() has installed the bundled models)."""
    from engine.models import load_encoder

    return load_encoder(model)


def options_from(args: argparse.Namespace):
    from engine.mining.bitext import MiningOptions

    return MiningOptions(
        k=args.k,
        margin=args.margin,
        mode=args.mode,
        threshold=args.threshold,
        align=args.align,
        lines=True if args.lines else None,
        src_lang=args.src_lang,
        tgt_lang=args.tgt_lang,
        allow_same_language=args.same_language,
        space=args.space,
    )


def run_mine(args: argparse.Namespace) -> int:
    from engine.mining.bitext import iter_mine_documents, result_rows
    from engine.mining.bitext_io import tsv_text, write_pairs

    options = options_from(args)
    encoder = get_encoder(args.model)
    result = _run_with_progress(iter_mine_documents(args.source, args.target, encoder, options))
    rows = result_rows(result)
    if args.output is not None:
        write_pairs(args.output, rows, src_lang=result.src_lang, tgt_lang=result.tgt_lang)
    if args.json:
        print(json.dumps(result_json(result), ensure_ascii=False, indent=2))
    elif args.output is None:
        sys.stdout.write(tsv_text(rows))
    how = "aligned" if result.aligned else f"mined ({args.mode}, {args.margin} > {result.threshold:g}, {result.space} vectors)"
    where = f" into {args.output}" if args.output is not None else ""
    print(
        f"{len(rows)} pairs {how}, {result.src_lang or '?'} -> {result.tgt_lang or '?'}, "
        f"from {result.sentences_text()}{where}",
        file=sys.stderr,
    )
    return 0


def _run_with_progress(events):
    """Drives the mining generator with one tqdm bar per stage on stderr; returns the result."""
    from tqdm import tqdm

    from engine.mining.bitext import MiningFinished, stage_label

    bar, stage = None, None
    try:
        for event in events:
            if isinstance(event, MiningFinished):
                return event.result
            if event.stage != stage:
                if bar is not None:
                    bar.close()
                stage = event.stage
                bar = tqdm(total=event.total, desc=stage_label(stage), file=sys.stderr, leave=False, disable=None)
            bar.n = event.done
            bar.refresh()
    finally:
        if bar is not None:
            bar.close()
    raise RuntimeError("mining ended without a result")


def result_json(result) -> dict:
    return {
        "src_lang": result.src_lang,
        "tgt_lang": result.tgt_lang,
        "n_src": result.n_src,
        "n_tgt": result.n_tgt,
        "aligned": result.aligned,
        "space": result.space,
        "increasing": round(result.increasing, 4),
        "threshold": result.threshold if result.threshold != float("-inf") else None,
        "pairs": [
            {
                "score": round(p.score, 4),
                "source": p.src_text,
                "target": p.tgt_text,
                "src_indices": list(p.src_indices),
                "tgt_indices": list(p.tgt_indices),
            }
            for p in result.pairs
        ],
    }
