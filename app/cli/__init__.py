"""The `babelfind` command line: one thin module per command group.

Each module in COMMAND_MODULES has `register(subparsers)` that adds its commands with
`parser.set_defaults(run=function)`; `function(args) -> int` returns the exit code.
A command may also set `check=function(args)` (cross-argument checks, run before any
model loads) and `uses_model=` (app.cli.model_setup): then the bundled models are
installed on first use, once, by app.cli.model_setup, before `run`.

Exit codes: 0 done; 1 a typed engine error, printed as one line on stderr (no
tracebacks for user mistakes); 2 a wrong command line (argparse, also one line), or
training asked of an install without torch (the line says how to add it);
130 interrupted. Logs and third-party warnings go to BABELFIND_HOME/logs/babelfind.log;
--verbose (or BABELFIND_VERBOSE=1) shows them on stderr too.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

from sqlalchemy.exc import SQLAlchemyError

from app.cli.arguments import OneLineParser
from app.printable import escaped_stdout, printable
from app.training_extra import TrainingNotInstalled
from engine.errors import BabelfindError
from engine.store.urls import one_line, scrub

log = logging.getLogger(__name__)

COMMAND_MODULES = (
    "app.cli.library_commands",
    "app.cli.check_command",
    "app.cli.model_commands",
    "app.cli.mine_command",
    "app.cli.train_command",
    "app.cli.laser_train_command",
    "app.cli.doctor_command",
)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="babelfind", description="Search your own documents by meaning, in any language."
    )
    parser.add_argument("--db", help="SQLAlchemy database URL (default: SQLite in BABELFIND_HOME)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="show the log on stderr too (it is always in BABELFIND_HOME/logs)")
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
    _accept_verbose_after_the_command(parser)
    return parser


def _accept_verbose_after_the_command(parser: argparse.ArgumentParser) -> None:
    """Lets `babelfind search cats -v` work as well as `babelfind -v search cats`."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in {id(p): p for p in action.choices.values()}.values():
                sub.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                                 help="show the log on stderr too")
                _accept_verbose_after_the_command(sub)


def main(argv: list[str] | None = None) -> int:
    # File names that are not valid UTF-8 must print, not crash the command.
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(errors="backslashreplace")
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:  # --help (0), or a wrong command line already told in one line (2)
        return e.code if isinstance(e.code, int) else 2
    from app.logging_setup import logging_to_file, verbose_requested
    from engine.config import data_paths

    try:
        paths = data_paths()
        with logging_to_file(paths.home, verbose_requested(args.verbose)), escaped_stdout():
            try:
                return _run(args, paths)
            except Exception:
                # The terminal gets one line below; the log keeps the traceback for a bug report.
                log.info("babelfind %s failed", args.command, exc_info=True)
                raise
    except BrokenPipeError:  # the reader went away (`babelfind search ... | head -1`): not an error
        return _reader_gone()
    except TrainingNotInstalled as e:  # an install without the `train` extra: how to add it
        print(f"babelfind: error: {printable(e)}", file=sys.stderr)
        return 2
    except BabelfindError as e:
        print(f"babelfind: error: {printable(e)}", file=sys.stderr)
        return 1
    except OSError as e:  # a disk or permission problem, not a bug: one line, no traceback
        print(f"babelfind: error: {printable(e)}", file=sys.stderr)
        return 1
    except SQLAlchemyError as e:  # damage found while working: say so, point at the check
        print(f"babelfind: error: database error: {printable(scrub(one_line(e), args.db or ''))}; "
              "run 'babelfind check'", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("babelfind: interrupted", file=sys.stderr)
        return 130


def _reader_gone() -> int:
    """Exits as a program killed by SIGPIPE would (128 + 13), silently: what is still
    buffered for stdout goes nowhere instead of failing again at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 128 + 13


def _run(args: argparse.Namespace, paths) -> int:
    """Checks, then the models a command needs, then the command itself."""
    from app.cli.model_setup import model_for, prepare_models

    check = getattr(args, "check", None)
    if check is not None:
        check(args)
    which = model_for(args)
    if which is not None:
        prepare_models(paths, which)
    return int(args.run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
