"""Source code, configuration files and subtitles: text with its own layout kept.

    >>> extract_code_file(Path("query.py"), data).text      # indentation kept, one blank line
    >>> extract_subtitles(Path("film.srt"), data).text      # the lines spoken, no timings

Code keeps its indentation (the preview shows it as written) and gets a blank line
before every top-level definition that lacks one: passages end at blank lines
(engine.segment), so each function or class becomes its own passages and its
identifiers land beside the code that uses them. Subtitle files lose their cue
numbers, timings and styling, which nobody searches for; each cue is one line.
"""

from __future__ import annotations

import re
from pathlib import Path

from engine.extract.base import ExtractedText, normalise_whitespace
from engine.extract.text_file import decode_text

CODE_EXTENSIONS = frozenset(
    ".py .pyw .pyi .js .mjs .cjs .jsx .ts .tsx .c .h .cc .cpp .cxx .hpp .hh .hxx .java .kt .kts "
    ".scala .go .rs .rb .php .pl .pm .lua .r .jl .swift .m .mm .cs .fs .vb .dart .groovy .gradle "
    ".sh .bash .zsh .fish .ps1 .bat .cmd .sql .json .jsonl .yaml .yml .toml .ini .cfg .conf "
    ".properties .xml .xsd .xsl .tex .bib .sty .cls .css .scss .less .vue .svelte .el .lisp .clj "
    ".hs .ml .mli .erl .ex .exs .cmake .mk .nix .proto .graphql .diff .patch .asm .s .f90 .pas "
    ".tcl .awk .sed .vim .lock .ipynb .desktop .service .y .l".split()
)
SUBTITLE_EXTENSIONS = frozenset({".srt", ".vtt", ".sub", ".sbv"})
# A line that starts a top-level definition in the common languages (no indentation).
_TOP_LEVEL = re.compile(
    r"^(?:(?:export\s+(?:default\s+)?)?(?:async\s+)?(?:def|class|function)"
    r"|func|fn|pub(?:\(crate\))?\s+(?:fn|struct|enum|trait|mod)|impl|struct|enum|trait|interface"
    r"|CREATE\s+(?:TABLE|VIEW|INDEX|FUNCTION))\b"
)
_MAX_LINE_CHARS = 2000  # a minified bundle is one line; cut it so a passage can hold it
_TABS = 4


def normalise_code(text: str) -> str:
    """Line endings unified, trailing blanks and runs of blank lines removed, indentation kept.

    Example: normalise_code("def a():\\r\\n\\treturn 1\\n\\n\\n\\ndef b(): pass") ==
        "def a():\\n    return 1\\n\\ndef b(): pass"
    """
    lines = normalise_whitespace_keeping_indent(text)
    out: list[str] = []
    for line in lines:
        if not line:
            if out and out[-1]:
                out.append("")
            continue
        if out and out[-1] and _TOP_LEVEL.match(line):
            out.append("")  # a definition starts a passage of its own
        out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)


def normalise_whitespace_keeping_indent(text: str) -> list[str]:
    """Each line's leading indentation as spaces, the rest collapsed like any text."""
    lines = []
    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        raw = raw[:_MAX_LINE_CHARS]
        stripped = raw.lstrip(" \t")
        indent = raw[: len(raw) - len(stripped)].replace("\t", " " * _TABS)
        body = normalise_whitespace(stripped)
        lines.append(indent + body.replace("\n", " ") if body else "")
    return lines


def extract_code_file(path: Path, data: bytes) -> ExtractedText:
    """Text of a source or configuration file."""
    return ExtractedText(text=normalise_code(decode_text(data, path)), format="code")


_CUE_NUMBER = re.compile(r"^\d+$")
_TIMING = re.compile(r"^\s*(?:\d{1,2}:)?\d{1,2}:\d{2}[.,]\d{1,3}\s*-->|^\{\d+\}\{\d+\}|^\d+:\d{2}:\d{2}\.\d+,\d+:")
_SUB_TAGS = re.compile(r"<[^<>\n]{0,200}>|\{\\[^{}\n]{0,200}\}")
_VTT_BLOCKS = ("WEBVTT", "NOTE", "STYLE", "REGION")


def extract_subtitles(path: Path, data: bytes) -> ExtractedText:
    """The spoken lines of an .srt/.vtt/.sub/.sbv file, one cue per line."""
    cues: list[str] = []
    current: list[str] = []
    skipping = False  # inside a WebVTT NOTE/STYLE/REGION block
    for line in decode_text(data, path).splitlines():
        line = line.strip()
        if not line:
            if current:
                cues.append(" ".join(current))
                current = []
            skipping = False
            continue
        if skipping or line.startswith(_VTT_BLOCKS):
            skipping = True
            continue
        if _TIMING.match(line):
            line = re.sub(r"^\{\d+\}\{\d+\}", "", line)  # MicroDVD puts text after its frames
            if not line or _TIMING.match(line):
                continue
        if _CUE_NUMBER.match(line) and not current:
            continue
        text = _SUB_TAGS.sub("", line).replace("|", " ").strip()
        if text:
            current.append(text)
    if current:
        cues.append(" ".join(current))
    return ExtractedText(text=normalise_whitespace("\n".join(cues)), format="subtitles")
