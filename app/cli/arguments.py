"""Argument checks that run while the command line is parsed, before any model loads.

    >>> search.add_argument("-k", type=at_least_one, default=10)

Each check is an argparse `type`: a bad value stops the command at once with one line,
`babelfind search: error: argument -k: must be at least 1, got 0`, and exit code 2
(argparse's code for a wrong command line; 1 stays for errors met while working).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from app.printable import printable
from engine.errors import InputError
from engine.languages import check_language
from engine.scan import user_path

# argparse's own messages about the command line's shape; these get a pointer to --help.
_SYNTAX_MESSAGES = ("the following arguments are required", "unrecognized arguments",
                    "invalid choice", "expected one argument", "not allowed with argument")


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr (no usage block), exit code 2."""

    def error(self, message: str):
        hint = f"; see '{self.prog} --help'" if any(m in message for m in _SYNTAX_MESSAGES) else ""
        self.exit(2, f"{self.prog}: error: {printable(message)}{hint}\n")


def utf8_text(text: str) -> str:
    """Text the user typed (a query, a name), refused when the shell passed bytes that are
    not UTF-8: Python keeps such bytes as lone surrogates, which no tokenizer, database or
    file name accepts. (Paths keep them: a file's name may be any bytes.)

    Example: utf8_text("walrus \udcff") raises "not valid UTF-8 (byte 0xff at 8)"
    """
    for position, char in enumerate(text):
        if "\udc80" <= char <= "\udcff":
            raise argparse.ArgumentTypeError(
                f"not valid UTF-8 (byte 0x{ord(char) - 0xdc00:02x} at {position + 1}); "
                "is the terminal set to UTF-8?")
    return text


class QueryParser(OneLineParser):
    """A command whose words make a query: `babelfind search -walrus puffin` searches for
    "-walrus puffin" rather than failing on an unknown option -walrus.

    Arguments that are this command's options (with their values) are parsed as options
    wherever they stand; every other argument is a word of the query, in order, except an
    unknown `--name`, which is more likely a mistyped option (`--jsno`) and stays an error:
    after `--` it is a word too. The query's own syntax decides what a leading dash means
    (engine.query).
    """

    def parse_known_args(self, args=None, namespace=None):
        words, options = self._split(list(args or []))
        namespace, extras = super().parse_known_args([*options, "--", *words] if words else options, namespace)
        if isinstance(getattr(namespace, "query", None), list):
            try:
                namespace.query = parsed_query(" ".join(namespace.query))
            except argparse.ArgumentTypeError as e:
                self.error(str(e))
        return namespace, extras

    def _split(self, args: list[str]) -> tuple[list[str], list[str]]:
        """(query words, option arguments) of `args`, each in order."""
        words, options = [], []
        tokens = iter(args)
        for token in tokens:
            if token == "--":
                words.extend(tokens)
                break
            action, value_attached = self._option(token)
            if action is None and token.startswith("--"):
                options.append(token)  # argparse says it is not an option of this command
                continue
            if action is None:
                words.append(token)
                continue
            options.append(token)
            if action.nargs != 0 and not value_attached and (value := next(tokens, None)) is not None:
                options.append(value)
        return words, options

    def _option(self, token: str) -> tuple[argparse.Action | None, bool]:
        """The option `token` names (exactly, as --long=value, -kVALUE or a unique prefix of
        a long option) and whether its value is attached; (None, False) for a query word."""
        if not token.startswith("-") or token == "-":
            return None, False
        actions = self._option_string_actions
        name, has_value = token.split("=", 1)[0], "=" in token
        if name in actions:
            return actions[name], has_value
        if not token.startswith("--") and token[:2] in actions and actions[token[:2]].nargs != 0:
            return actions[token[:2]], True  # -k5
        if token.startswith("--"):
            matches = [option for option in actions if option.startswith(name) and option.startswith("--")]
            if len({actions[m] for m in matches}) == 1:
                return actions[matches[0]], has_value
        return None, False


def query_words(parent, name: str, **options) -> QueryParser:
    """A subcommand of `parent` (argparse's subparsers) parsed by QueryParser."""
    standard = parent._parser_class
    parent._parser_class = QueryParser  # add_parser takes no parser class of its own
    try:
        return parent.add_parser(name, **options)
    finally:
        parent._parser_class = standard


def parsed_query(text: str):
    """A search query with something to look for, parsed (engine.query.ParsedQuery) once
    for the whole search: parsed_query("  glaciers lang:de ").words == ("glaciers",);
    `lang:german` or `lang:de` alone is a wrong command line (exit 2), with what to write
    instead."""
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
    return parsed


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
    try:
        return user_path(text)
    except InputError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def user_folder_path(text: str) -> Path:
    """A path that need not exist yet (a run folder), with ~ expanded: Path, but checked."""
    return _path(text)
