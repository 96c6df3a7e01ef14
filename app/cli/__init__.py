"""The `babelfind` command line: one thin module per command group.

Each module in COMMAND_MODULES has `register(subparsers)` that adds its commands with
`parser.set_defaults(run=function)`; `function(args) -> int` returns the exit code.
Typed engine errors become one line on stderr and exit code 1; no tracebacks for
user mistakes.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from sqlalchemy.exc import SQLAlchemyError

from engine.errors import BabelfindError
from engine.store.urls import one_line, scrub

COMMAND_MODULES = (
    "app.cli.library_commands",
    "app.cli.check_command",
    "app.cli.model_commands",
    "app.cli.mine_command",
    "app.cli.train_command",
    "app.cli.doctor_command",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="babelfind", description="Search your own documents by meaning, in any language."
    )
    parser.add_argument("--db", help="SQLAlchemy database URL (default: SQLite in BABELFIND_HOME)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens")
    waiting = parser.add_mutually_exclusive_group()
    waiting.add_argument("--wait", type=float, metavar="SECONDS", dest="lock_timeout",
                         help="while another Babelfind process writes to the library, wait at "
                              "most this long (default: until it finishes)")
    waiting.add_argument("--no-wait", action="store_const", const=0.0, dest="lock_timeout",
                         help="fail at once if another Babelfind process is writing")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name != name:  # a real import error inside the module
                raise
            continue
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    # File names that are not valid UTF-8 must print, not crash the command.
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(errors="backslashreplace")
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    try:
        return int(args.run(args) or 0)
    except BabelfindError as e:
        print(f"babelfind: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # a disk or permission problem, not a bug: one line, no traceback
        print(f"babelfind: error: {e}", file=sys.stderr)
        return 1
    except SQLAlchemyError as e:  # damage found while working: say so, point at the check
        print(f"babelfind: error: database error: {scrub(one_line(e), args.db or '')}; "
              "run 'babelfind check'", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("babelfind: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
