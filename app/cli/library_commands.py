"""`babelfind index | search | status | forget | reindex`: thin calls into engine.library."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from engine.events import IndexFinished, IndexProgress, IndexSummary


def register(subparsers) -> None:
    index = subparsers.add_parser("index", help="index files and folders")
    index.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    index.add_argument("--json", action="store_true", help="print the summary as JSON")
    index.set_defaults(run=run_index)

    from engine.query import QUERY_HELP
    from engine.search import MODES

    search = subparsers.add_parser("search", help="search indexed documents by meaning and by keywords",
                                   epilog=QUERY_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    search.add_argument("query", help='what to look for, in the query syntax below (quote it in the shell)')
    search.add_argument("--mode", choices=MODES, default="fused",
                        help="fused: meaning and keywords (default); dense: meaning only; keyword: words only")
    search.add_argument("-k", type=int, default=10, help="number of documents (default 10)")
    search.add_argument("--lang", action="append", help="only passages in this language (ISO 639-1); repeatable")
    search.add_argument("--path", help="only documents under this folder")
    search.add_argument("--type", action="append", dest="file_types", help="only this file type (pdf, docx, ...); repeatable")
    search.add_argument("--json", action="store_true", help="print results as JSON")
    search.set_defaults(run=run_search)

    status = subparsers.add_parser("status", help="what is indexed, with which model")
    status.add_argument("--json", action="store_true")
    status.set_defaults(run=run_status)

    forget = subparsers.add_parser("forget", help="remove a folder or file from the index")
    forget.add_argument("path", type=Path)
    forget.set_defaults(run=run_forget)

    reindex = subparsers.add_parser("reindex", help="bring every indexed folder up to date")
    reindex.add_argument("--json", action="store_true")
    reindex.set_defaults(run=run_reindex)


def open_library(args: argparse.Namespace):
    """The library in BABELFIND_HOME, installing the bundled models on first use."""
    from engine.config import data_paths
    from engine.library import Library
    from trainer.default_models import ensure_default_models

    paths = data_paths()
    ensure_default_models(paths, progress=_first_run_progress())
    return Library.open(paths, db_url=args.db)


def _first_run_progress():
    """A callback that shows first-run model installation on stderr."""
    from tqdm import tqdm

    bar = None

    def progress(fraction: float, message: str) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=100, desc="installing models", unit="%", file=sys.stderr, leave=False)
        bar.set_postfix_str(message[:40])
        bar.n = round(fraction * 100)
        bar.refresh()
        if fraction >= 1:
            bar.close()

    return progress


def drive(events, show_progress: bool = True) -> IndexSummary:
    """Runs an indexing generator with a progress bar; returns its summary."""
    from tqdm import tqdm

    bar = None
    summary = IndexSummary()
    try:
        for event in events:
            if isinstance(event, IndexProgress) and show_progress:
                if bar is None:
                    bar = tqdm(total=event.files_total, unit="file", file=sys.stderr, leave=False)
                bar.total = event.files_total
                bar.n = event.files_done
                bar.set_postfix(passages=event.passages)
                bar.refresh()
            elif isinstance(event, IndexFinished):
                summary = event.summary
    finally:
        if bar is not None:
            bar.close()
    return summary


def _print_summary(summary: IndexSummary, as_json: bool) -> None:
    if as_json:
        print(json.dumps(asdict(summary), indent=2, ensure_ascii=False))
        return
    print(
        f"indexed {summary.indexed}, unchanged {summary.unchanged}, removed {summary.removed}, "
        f"skipped {len(summary.skipped)} ({summary.passages} passages written)"
    )
    for skipped in summary.skipped:
        print(f"  skipped {skipped.path}: {skipped.reason}")


def run_index(args) -> int:
    return _index_with(args, lambda library: library.index_paths(args.paths))


def run_reindex(args) -> int:
    return _index_with(args, lambda library: library.reindex())


def _index_with(args, start) -> int:
    """Opens the library, drives `start(library)`'s events, prints the summary."""
    library = open_library(args)
    try:
        summary = drive(start(library), show_progress=sys.stderr.isatty())
    finally:
        library.close()
    _print_summary(summary, args.json)
    return 0


def run_search(args) -> int:
    library = open_library(args)
    try:
        results = library.search_results(
            args.query, k=args.k, languages=args.lang,
            path_prefix=str(Path(args.path).expanduser().absolute()) if args.path else None,
            file_types=args.file_types, mode=getattr(args, "mode", "fused"))
    finally:
        library.close()
    hits = results.hits
    if args.json:
        print(json.dumps([_hit_json(h) for h in hits], indent=2, ensure_ascii=False))
        return 0
    if not hits:
        print("no results")
        return 0
    terms = highlight_terms(args.query)
    for rank, hit in enumerate(hits, 1):
        page = f", page {hit.best.page}" if hit.best.page else ""
        print(f"{rank:2d}. {hit.score:.3f}  [{hit.language or '??'}]  ({_MATCHED[hit.matched_by]})  {hit.path}{page}")
        print(f"      {_marked(hit.best.snippet, terms)}")
    at_least = "" if results.complete else "at least "
    print(f"{at_least}{results.total} matching documents" + (f", {len(hits)} shown" if results.total > len(hits) else ""))
    return 0


_MATCHED = {"keywords": "keywords", "meaning": "meaning", "both": "keywords+meaning"}


def _marked(snippet: str, terms) -> str:
    """The snippet with matched words in [brackets] (plain text: pipes and files stay clean)."""
    from engine.highlight import match_spans

    out, at = [], 0
    for start, end in match_spans(snippet, terms):
        out += [snippet[at:start], "[", snippet[start:end], "]"]
        at = end
    return "".join(out + [snippet[at:]])


def highlight_terms(query: str):
    from engine.highlight import query_terms

    return query_terms(query)


def _hit_json(hit) -> dict:
    best = hit.best
    return {
        "path": hit.path,
        "score": round(hit.score, 6),
        "language": hit.language,
        "file_type": hit.file_type,
        "snippet": best.snippet,
        "start": best.start,
        "end": best.end,
        "page": best.page,
        "matched_by": hit.matched_by,
        "passages": [
            {"score": round(p.score, 6), "start": p.start, "end": p.end, "page": p.page,
             "language": p.language, "snippet": p.snippet, "matched_by": p.matched_by,
             "cosine": None if p.cosine is None else round(p.cosine, 6),
             "keyword_score": round(p.keyword_score, 6)}
            for p in hit.passages
        ],
    }


def run_status(args) -> int:
    library = open_library(args)
    try:
        status = library.status()
        roots = library.roots()
    finally:
        library.close()
    if args.json:
        print(json.dumps(asdict(status) | {"roots": [asdict(r) for r in roots]}, indent=2))
        return 0
    print(f"model      {status.model} ({status.dim}-d, {status.index_kind} index)")
    if status.pending_model:
        print(f"           the active model is now {status.pending_model}: run 'babelfind reindex'")
    print(f"documents  {status.documents} indexed, {status.failed} skipped, {status.passages} passages")
    langs = ", ".join(f"{k} {v}" for k, v in sorted(status.languages.items(), key=lambda kv: -kv[1]))
    print(f"languages  {langs or '-'}")
    print(f"database   {status.db_url}")
    for root in roots:
        print(f"  {root.path}: {root.documents} documents, {root.passages} passages, {root.failed} skipped")
    return 0


def run_forget(args) -> int:
    library = open_library(args)
    try:
        removed = library.forget(args.path)
    finally:
        library.close()
    print(f"removed {removed} documents under {args.path}")
    return 0
