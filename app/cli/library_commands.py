"""`babelfind index | search | status | forget | reindex | unpack`: thin calls into engine.library.

On a fresh home: `index` installs the bundled models (once) and indexes; `search` and
`reindex` say that nothing is indexed yet, without installing anything; `status`,
`forget` and `unpack` never load a model at all (they only read the database).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from dataclasses import asdict
from pathlib import Path

from app.cli.arguments import at_least_one, existing_path, language_code, query_words, user_folder_path, utf8_text
from app.cli.model_setup import ACTIVE_MODEL
from app.printable import printable
from engine.events import IndexFinished, IndexProgress, IndexSummary
from engine.extract.base import page_name

NOTHING_INDEXED = "nothing is indexed yet; run 'babelfind index FOLDER' first"


def register(subparsers) -> None:
    index = subparsers.add_parser("index", help="index files and folders")
    index.add_argument("paths", nargs="+", type=existing_path, metavar="PATH")
    index.add_argument("--json", action="store_true", help="print the summary as JSON")
    index.add_argument("--no-ocr", action="store_true",
                       help="skip images and leave scanned pages without text this time (no OCR)")
    _priority_argument(index)
    index.set_defaults(run=run_index, uses_model=ACTIVE_MODEL)

    from engine.query import QUERY_HELP
    from engine.search import MODES

    search = query_words(subparsers, "search", help="search indexed documents by meaning and by keywords",
                         epilog=QUERY_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    search.add_argument("query", nargs="+", type=utf8_text,
                        help="what to look for, in the query syntax below (a word may start with -; one starting with -- goes after --)")
    search.add_argument("--mode", choices=MODES, default="fused",
                        help="fused: meaning and keywords (default); dense: meaning only; keyword: words only")
    search.add_argument("-k", type=at_least_one, default=10, help="number of documents (default 10)")
    search.add_argument("--lang", action="append", type=language_code,
                        help="only passages in this language (ISO 639-1, e.g. de); repeatable")
    search.add_argument("--path", type=user_folder_path, help="only documents under this folder")
    search.add_argument("--type", action="append", dest="file_types", help="only this file type (pdf, docx, ...); repeatable")
    search.add_argument("--json", action="store_true", help="print results as JSON")
    search.add_argument("--explain", action="store_true",
                        help="show why each result stands where it does: its cosine (as encoded and with "
                             "each language's mean taken out), the hubness penalty, the keyword share and "
                             "the fused score")
    search.set_defaults(run=run_search, uses_model=active_model_if_indexed)

    status = subparsers.add_parser("status", help="what is indexed, with which model")
    status.add_argument("--json", action="store_true")
    status.set_defaults(run=run_status)

    forget = subparsers.add_parser("forget", help="remove a folder or file from the index")
    forget.add_argument("path", type=user_folder_path)
    forget.set_defaults(run=run_forget)

    reindex = subparsers.add_parser("reindex", help="bring every indexed folder up to date")
    reindex.add_argument("--json", action="store_true")
    reindex.add_argument("--no-ocr", action="store_true", help="no OCR this time")
    _priority_argument(reindex)
    reindex.set_defaults(run=run_reindex, uses_model=active_model_if_indexed)

    unpack = subparsers.add_parser(
        "unpack", help="copy an indexed archive member or e-mail attachment out to a folder",
        description="PATH is a result's path, e.g. ~/mail/Inbox/message-3.eml/offer.pdf")
    unpack.add_argument("path", type=user_folder_path)
    unpack.add_argument("--to", type=user_folder_path, default=Path("."), help="folder to write it to (default: here)")
    unpack.set_defaults(run=run_unpack)


def _priority_argument(parser) -> None:
    parser.add_argument("--priority", choices=["low", "normal"],
                        help="CPU priority of the work: low (nice +10, the default, or the settings' "
                             "index_priority) keeps the desktop responsive and costs nothing on an "
                             "idle machine; normal competes with other programs")


def active_model_if_indexed(args: argparse.Namespace) -> str | None:
    """search and reindex need a model only when there is something to search or re-read;
    on a fresh home they say so at once instead of installing models first."""
    return ACTIVE_MODEL if library_exists(args) else None


def library_exists(args: argparse.Namespace) -> bool:
    """False only when the default SQLite library was never created (a fresh home).

    Another database (--db, settings) is assumed to exist; opening it tells. A database
    that is gone while vector indexes of documents remain is damage, not a fresh home:
    LibraryDamagedError, as `index` says (it must not read as "nothing indexed yet").
    """
    from engine.config import data_paths
    from engine.integrity import refuse_lost_database
    from engine.store.urls import sqlite_file

    paths = data_paths()
    url = args.db or paths.db_url
    refuse_lost_database(url, paths.indexes)
    return not url.startswith("sqlite:///") or sqlite_file(url).exists()


def open_library(args: argparse.Namespace):
    """The library in BABELFIND_HOME with its model (main() has installed the models)."""
    from engine.config import data_paths
    from engine.library import Library, indexer_config

    paths = data_paths()
    config = indexer_config(paths, getattr(args, "priority", None))
    return Library.open(paths, db_url=args.db, config=config, **lock_options(args))


def lock_options(args) -> dict:
    """How long to wait for another process writing to the library, and how to say so."""
    return {"lock_timeout": getattr(args, "lock_timeout", None), "on_busy": tell_waiting}


def tell_waiting(holder) -> None:
    from engine.locking import waiting_message

    print(f"babelfind: {printable(waiting_message(holder))}", file=sys.stderr, flush=True)


def open_for_reading(args: argparse.Namespace):
    """The library without loading a model, or None when nothing was ever indexed."""
    from engine.config import data_paths
    from engine.library import open_without_model

    return open_without_model(data_paths(), db_url=args.db, **lock_options(args))


def drive(events, show_progress: bool = True) -> IndexSummary:
    """Runs an indexing generator with a progress bar; returns its summary."""
    from tqdm import tqdm

    bar = None
    summary = IndexSummary()
    told_waiting = False
    try:
        for event in events:
            if isinstance(event, IndexProgress) and event.waiting:
                if not told_waiting:  # once: the wait may be long, the line stays true
                    print(f"babelfind: {printable(event.waiting)}", file=sys.stderr, flush=True)
                    told_waiting = True
            elif isinstance(event, IndexProgress) and show_progress:
                if bar is None:
                    # tqdm's own rate and time left would count files; the engine's count the work
                    bar = tqdm(total=event.files_total, unit=event.unit.rstrip("s"), file=sys.stderr, leave=False,
                               bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} " + event.unit + " [{elapsed}{postfix}]")
                bar.total = event.files_total
                bar.n = event.files_done
                bar.set_postfix_str(_pace_text(event), refresh=False)
                bar.refresh()
            elif isinstance(event, IndexFinished):
                summary = event.summary
    finally:
        if bar is not None:
            bar.close()
    return summary


def _pace_text(event: IndexProgress) -> str:
    """Example: "5,120 passages, 41 passages/s, 3:20 left" (the engine's rate and time left)."""
    from tqdm import tqdm

    parts = [f"{max(event.encoded, event.passages):,} passages"]
    if event.rate > 0:
        parts.append(f"{event.rate:,.0f} passages/s")
    if event.eta_s is not None and event.files_done < event.files_total:
        parts.append(f"{tqdm.format_interval(event.eta_s)} left")
    return ", ".join(parts)


def _print_summary(summary: IndexSummary, as_json: bool) -> None:
    if as_json:
        print(json.dumps(asdict(summary), indent=2, ensure_ascii=False))
        return
    print(
        f"indexed {summary.indexed}, unchanged {summary.unchanged}, removed {summary.removed}, "
        f"skipped {len(summary.skipped)} ({summary.passages} passages written)"
    )
    for skipped in summary.skipped:
        print(f"  skipped {printable(skipped.path)}: {printable(skipped.reason)}")


def run_index(args) -> int:
    return _index_with(args, lambda library: library.index_paths(args.paths))


def run_reindex(args) -> int:
    if not library_exists(args):
        print(f"babelfind: {NOTHING_INDEXED}", file=sys.stderr)
        _print_summary(IndexSummary(), args.json)
        return 0
    return _index_with(args, lambda library: library.reindex())


def _index_with(args, start) -> int:
    """Opens the library, drives `start(library)`'s events, prints the summary."""
    library = open_library(args)
    if getattr(args, "no_ocr", False):
        limits = dataclasses.replace(library.config.limits, ocr=False)
        library.config = dataclasses.replace(library.config, limits=limits)
    try:
        summary = drive(start(library), show_progress=sys.stderr.isatty())
    finally:
        library.close()
    _print_summary(summary, args.json)
    return 0


def run_search(args) -> int:
    if not library_exists(args):
        print("[]" if args.json else f"no results: {NOTHING_INDEXED}")
        return 0
    library = open_library(args)
    try:
        results = library.search_results(
            args.query, k=args.k, languages=args.lang,
            path_prefix=str(args.path.absolute()) if args.path else None,
            file_types=args.file_types, mode=getattr(args, "mode", "fused"),
            explain=getattr(args, "explain", False))
    finally:
        library.close()
    hits = results.hits
    if args.json:
        print(json.dumps([_hit_json(h) for h in hits], indent=2, ensure_ascii=False))
        return 0
    if not hits:
        print("no results")
        _print_left_out(results)
        return 0
    terms = results.query.highlight.stemmed(results.language)
    strong, weak = [h for h in hits if not h.weak], [h for h in hits if h.weak]
    for rank, hit in enumerate(strong + weak, 1):
        if hit.weak and rank == len(strong) + 1:  # one heading, whatever order the engine used
            print("Weaker matches" if strong else f"No strong matches{_unknown_names(results)}. Weaker matches")
        page = f", {page_name(hit.format, hit.best.page)}" if hit.best.page else ""
        title = f"  \u201c{printable(hit.title)}\u201d" if hit.title and hit.format in ("eml", "msg") else ""
        print(f"{rank:2d}. {hit.score:.3f}  [{_languages(hit)}]  ({_MATCHED[hit.matched_by]})  "
              f"{printable(hit.path)}{page}{title}")
        print(f"      {_marked(hit.best.snippet, terms)}")
        if hit.best.explanation is not None:
            print(f"      why: {hit.best.explanation.text()}")
    print(count_line(results))
    _print_left_out(results)
    return 0


def _print_left_out(results) -> None:
    """Example: "Left out: 17 documents holding “kernel”" (nothing when the query excludes nothing)."""
    if results.left_out:
        print("Left out: " + ", ".join(f"{_plural(count, 'document')} holding \u201c{printable(text)}\u201d"
                                       for text, count in results.left_out))


def _unknown_names(results) -> str:
    """Example: ": nothing in the library mentions “WordPress”" ('' when the query names nothing unknown)."""
    if not results.unknown_names:
        return ""
    return ": nothing in the library mentions " + ", ".join(f"\u201c{printable(n)}\u201d" for n in results.unknown_names)


def count_line(results) -> str:
    """Example: "3 matching documents, 2 shown; 5 weaker matches" (the weak ones counted apart)."""
    at_least = "" if results.complete else "at least "
    strong_shown = sum(1 for h in results.hits if not h.weak)
    line = f"{at_least}{_plural(results.total, 'matching document')}"
    if results.total > strong_shown:
        line += f", {strong_shown} shown"
    if results.weak_total:
        weak_shown = len(results.hits) - strong_shown
        line += f"; {_plural(results.weak_total, 'weaker match')}" + (
            f", {weak_shown} shown" if results.weak_total > weak_shown else "")
    return line


def _plural(count: int, noun: str) -> str:
    """Example: _plural(1, "weaker match") == "1 weaker match"; _plural(2, ...) == "2 weaker matches"."""
    if count == 1:
        return f"1 {noun}"
    return f"{count} {noun}{'es' if noun.endswith(('ch', 'sh', 's', 'x')) else 's'}"


def _languages(hit) -> str:
    """Example: "fr"; "fr, document en" for a French passage of a mostly English document."""
    passage, document = hit.best.language or "??", hit.language
    return passage if document in (None, passage) else f"{passage}, document {document}"


_MATCHED = {"keywords": "keywords", "meaning": "meaning", "both": "keywords+meaning"}


def _marked(snippet: str, terms) -> str:
    """The snippet with matched words in [brackets] (plain text: pipes and files stay clean)."""
    from engine.highlight import match_spans

    out, at = [], 0
    for start, end in match_spans(snippet, terms):
        out += [printable(snippet[at:start]), "[", printable(snippet[start:end]), "]"]
        at = end
    return "".join(out + [printable(snippet[at:])])


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
        "page_name": page_name(hit.format, best.page) if best.page else None,
        "title": hit.title,
        "format": hit.format,
        "matched_by": hit.matched_by,
        "weak": hit.weak,
        "passages": [
            {"score": round(p.score, 6), "start": p.start, "end": p.end, "page": p.page,
             "language": p.language, "snippet": p.snippet, "matched_by": p.matched_by,
             "cosine": None if p.cosine is None else round(p.cosine, 6),
             "keyword_score": round(p.keyword_score, 6)}
            | ({"explanation": asdict(p.explanation)} if p.explanation is not None else {})
            for p in hit.passages
        ],
    }


def run_status(args) -> int:
    library = open_for_reading(args) if library_exists(args) else None
    if library is None:
        return _print_fresh_status(args)
    try:
        status = library.status()
        roots = library.roots()
        excluded = library.excluded()
    finally:
        library.close()
    if args.json:
        print(json.dumps(asdict(status) | {"roots": [asdict(r) for r in roots], "excluded": excluded}, indent=2))
        return 0
    print(f"model      {status.model} ({status.dim}-d, {status.index_kind} index)")
    if status.pending_model:
        print(f"           the active model is now {status.pending_model}: run 'babelfind reindex'")
    print(f"documents  {status.documents} indexed, {status.failed} skipped, {status.passages} passages")
    langs = ", ".join(f"{k} {v}" for k, v in sorted(status.languages.items(), key=lambda kv: -kv[1]))
    print(f"languages  {langs or '-'}")
    print(f"database   {printable(status.db_url)}")
    for root in roots:
        print(f"  {printable(root.path)}: {root.documents} documents, {root.passages} passages, "
              f"{root.failed} skipped")
    for path in excluded:  # forgotten inside a folder; 'babelfind index PATH' brings it back
        print(f"  forgotten: {printable(path)}")
    return 0


def _print_fresh_status(args) -> int:
    """Status before anything is indexed: the same fields, nothing created or installed."""
    from engine.config import data_paths
    from engine.models import active_model_name

    paths = data_paths()
    active = active_model_name(paths)
    from engine.store.urls import check_sqlite_folder, mask_url

    check_sqlite_folder(args.db or paths.db_url)  # a mistyped --db is an error, not "empty"
    db_url = mask_url(args.db or paths.db_url)  # a password may sit in it, even in the query
    if args.json:
        print(json.dumps({"model": active, "dim": None, "documents": 0, "passages": 0, "failed": 0,
                          "languages": {}, "index_kind": None, "db_url": db_url,
                          "home": str(paths.home), "pending_model": None, "roots": []}, indent=2))
        return 0
    print(f"model      {active or 'none installed yet'} "
          f"({'active' if active else 'the first index installs the bundled models'})")
    print(f"documents  {NOTHING_INDEXED}")
    print(f"database   {db_url}")
    return 0


def run_unpack(args) -> int:
    from engine.errors import NotIndexedError
    from engine.scan import path_key

    library = open_for_reading(args) if library_exists(args) else None
    if library is None:
        raise NotIndexedError(args.path)
    try:
        written = library.open_document(path_key(args.path.expanduser().absolute()), folder=args.to)
    finally:
        library.close()
    print(written)
    return 0


def run_forget(args) -> int:
    from engine.errors import NotIndexedError

    library = open_for_reading(args) if library_exists(args) else None
    if library is None:
        raise NotIndexedError(args.path)
    try:
        removed = library.forget(args.path)
    finally:
        library.close()
    print(f"removed {removed} documents under {printable(args.path)}")
    return 0
