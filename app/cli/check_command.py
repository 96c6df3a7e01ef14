"""`babelfind check`: is the library whole? Exit 0 when it is, 1 when damage was found."""

from __future__ import annotations

import json
import sys


def register(subparsers) -> None:
    check = subparsers.add_parser(
        "check", help="check the database and compare it with the vector index files")
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.set_defaults(run=run_check)


def run_check(args) -> int:
    from app.cli.library_commands import tell_waiting
    from app.printable import printable
    from engine.config import data_paths
    from engine.integrity import check_home
    from engine.store.urls import mask_url

    paths = data_paths()
    db_url = args.db or paths.db_url
    report = check_home(paths, db_url, lock_timeout=args.lock_timeout, on_busy=tell_waiting)
    if args.json:
        print(json.dumps({"ok": report.ok, "problems": report.problems, "notes": report.notes,
                          "database": mask_url(db_url)}, indent=2))
        return 0 if report.ok else 1
    print(f"database   {printable(mask_url(db_url))}")
    for note in report.notes:
        print(f"note       {printable(note)}")
    for problem in report.problems:
        print(f"PROBLEM    {printable(problem)}")
    if report.ok:
        print("ok: the database is sound and the vector index matches it")
        return 0
    print(f"babelfind: error: {len(report.problems)} problem(s) found in the library", file=sys.stderr)
    return 1
