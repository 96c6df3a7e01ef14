"""Every command, every argument, given bytes that are not UTF-8 (as a shell passes
$'walrus \\xff puffin'): one line and an exit code, never a traceback (issue 24: a query
with \\xff ended in `TypeError: TextEncodeInput`)."""

from __future__ import annotations

import argparse

import pytest

from app.cli import build_parser, main

BAD = "walrus \udcff puffin"  # what Python makes of the byte 0xff in argv (surrogateescape)
# Commands that would start long work when their other arguments are valid: they get the
# bad value alone.
ALONE = {"train", "train-laser", "eval", "models download", "doctor"}


def commands(parser: argparse.ArgumentParser, prefix=()):
    """(command words, its parser) for every command, `models use` included."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, (*prefix, name))
            return
    yield prefix, parser


def good_value(action: argparse.Action, tmp_path) -> str:
    kind = getattr(action.type, "__name__", "")
    if kind in ("existing_file", "existing_path"):
        return str(tmp_path / "good.txt")
    if kind == "existing_folder":
        return str(tmp_path)
    if kind in ("output_file", "Path"):
        return str(tmp_path / "out.bin")
    if action.dest == "query":
        return "walrus"
    return "tiny"


def cases(tmp_path):
    """(id, argv): each positional bad in turn (the others good), then each option bad;
    the options before the command (--db, --wait) with `status` and `search`."""
    top = build_parser()
    for action in top._actions:
        if action.option_strings and action.nargs != 0 and not isinstance(action, argparse._HelpAction):
            for command in (["status"], ["search", "walrus"]):
                yield f"{action.option_strings[-1]} {command[0]}", [action.option_strings[-1], BAD, *command]
    for words, parser in commands(top):
        name = " ".join(words)
        positionals = [a for a in parser._actions if not a.option_strings]
        options = [a for a in parser._actions if a.option_strings and a.nargs != 0
                   and not isinstance(a, argparse._HelpAction)]
        good = [good_value(a, tmp_path) for a in positionals]
        for i, action in enumerate(positionals):
            yield f"{name} {action.dest}", [*words, *good[:i], BAD, *good[i + 1:]]
        for action in options:
            rest = [] if name in ALONE else good
            yield f"{name} {action.option_strings[-1]}", [*words, action.option_strings[-1], BAD, *rest]


@pytest.fixture
def indexed_home(home_with_tiny, tmp_path):
    (tmp_path / "good.txt").write_text("The walrus sleeps.\nThe puffin flies.\n", encoding="utf-8")
    assert main(["index", str(tmp_path / "good.txt")]) == 0
    return home_with_tiny


@pytest.mark.timeout(600)
def test_every_argument_of_every_command_takes_invalid_utf8(indexed_home, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a bad output name is a valid file name: `embed -o` writes it here
    failures = []
    for case, argv in cases(tmp_path):
        capsys.readouterr()
        try:
            code = main(argv)
        except BaseException as e:  # noqa: BLE001 -- any escape is the failure we look for
            failures.append(f"{case}: raised {type(e).__name__}: {e}")
            continue
        out, err = capsys.readouterr()
        if "Traceback" in out + err or code not in (0, 1, 2):
            failures.append(f"{case}: exit {code}: {err.strip()[-300:]}")
        elif code and not err.strip().splitlines()[-1].startswith("babelfind"):
            failures.append(f"{case}: exit {code} without a 'babelfind' error line: {err!r}")
    assert not failures, "\n".join(failures)


def test_a_query_that_is_not_utf8_is_refused_in_one_line(indexed_home, capsys):
    capsys.readouterr()
    assert main(["search", BAD]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not valid UTF-8" in err and "0xff" in err, err
