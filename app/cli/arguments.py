"""Argument checks that run while the command line is parsed, before any model loads.

    >>> search.add_argument("-k", type=at_least_one, default=10)

Each check is an argparse `type`: a bad value stops the command at once with one line,
`babelfind search: error: argument -k: must be at least 1, got 0`, and exit code 2
(argparse's code for a wrong command line; 1 stays for errors met while working).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from engine.errors import InputError
from engine.languages import check_language

# argparse's own messages about the command line's shape; these get a pointer to --help.
_SYNTAX_MESSAGES = ("the following arguments are required", "unrecognized arguments",
                    "invalid choice", "expected one argument", "not allowed with argument")


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr (no usage block), exit code 2."""

    def error(self, message: str):
        hint = f"; see '{self.prog} --help'" if any(m in message for m in _SYNTAX_MESSAGES) else ""
        self.exit(2, f"{self.prog}: error: {message}{hint}\n")


def query_text(text: str) -> str:
    """A search query with something to look for, in the query syntax (engine.query):
    query_text("  glaciers lang:de ") == "glaciers lang:de"; `lang:german` or `lang:de`
    alone is a wrong command line (exit 2), with what to write instead."""
    from engine.errors import QuerySyntaxError
    from engine.query import parse_query

    text = text.strip()
    if not text:
        raise argparse.ArgumentTypeError("the query is empty; type what you are looking for")
    try:
        parsed = parse_query(text)
    except QuerySyntaxError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if parsed.is_empty:
        raise argparse.ArgumentTypeError(
            f"'{text}' has nothing to look for: filters and -exclusions narrow a search but find "
            f"nothing alone; add words, e.g. 'manual {text}'")
    return text


def at_least_one(text: str) -> int:
    """A whole number >= 1 (result counts, steps, batch sizes): at_least_one("5") == 5."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def non_negative(text: str) -> float:
    """A number >= 0 (loss weights): non_negative("0.5") == 0.5."""
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not value >= 0:
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got {text!r}")
    return value


def language_code(text: str) -> str:
    """An ISO 639-1 code Babelfind detects, lower case; names get a suggestion."""
    if "," in text:
        raise argparse.ArgumentTypeError(
            f"one language code per option, not {text!r}; repeat the option for more")
    try:
        return check_language(text)
    except InputError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def existing_file(text: str) -> Path:
    """A path to a file that exists (not a folder)."""
    path = _path(text)
    if not path.exists():
        raise argparse.ArgumentTypeError(f"no such file: {path}")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{path} is a folder, not a file")
    if not path.is_file():  # a FIFO, socket or device (also behind a link): reading could block
        raise argparse.ArgumentTypeError(f"{path} is not a regular file")
    return path


def existing_path(text: str) -> Path:
    """A path to a file or folder that exists."""
    path = _path(text)
    if not path.exists():
        raise argparse.ArgumentTypeError(f"no such file or folder: {path}")
    return path


def existing_folder(text: str) -> Path:
    """A path to a folder that exists."""
    path = _path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(
            f"{path} is a file, not a folder" if path.exists() else f"no such folder: {path}")
    return path


def output_file(text: str) -> Path:
    """A file to write: its folder must exist (it is not created behind the user's back)."""
    path = _path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{path} is a folder; name the file to write")
    if not path.parent.is_dir():
        raise argparse.ArgumentTypeError(
            f"the folder {path.parent} does not exist; create it first or choose another")
    return path


def _path(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError("the path is empty")
    return Path(text).expanduser()
