"""Light removal of Markdown and reStructuredText syntax, line by line.

Only marks that a reader would not see in rendered text go (heading hashes, emphasis
stars, link targets, fences, adornment lines); words are never dropped. The result is
what gets indexed and previewed, so offsets are taken from it, never from the source.
"""

from __future__ import annotations

import re
from collections import defaultdict, deque

# Every pattern here is linear in the line: a span's body cannot contain its own closing
# delimiter, so a scan from an opener stops at the next delimiter. The earlier `(.+?)`
# forms were quadratic (a 32 KB line of "**a " took 15 s) and the heading's
# `(.*?)[ \t]*#*[ \t]*$` cubic (2,000 spaces: 64 s): a hostile .md never finished.
_MD_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*)$")
_MD_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_MD_RULE = re.compile(r"^ {0,3}([-*_])([ \t]*\1){2,}[ \t]*$")
_MD_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_MD_REF_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s+\S+")
_MD_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*$")
_MD_QUOTE = re.compile(r"^ {0,3}(> ?)+")
_MD_BULLET = re.compile(r"^([ \t]*)[*+][ \t]+")
_MD_IMAGE = re.compile(r"!\[([^\[\]\n]*)\]\([^()\n]*\)")
_MD_LINK = re.compile(r"\[([^\[\]\n]+)\](\([^()\n]*\)|\[[^\[\]\n]*\])")
_MD_AUTOLINK = re.compile(r"<((?:https?|mailto):[^<>\s]+)>")
_MD_STRONG = re.compile(r"\*\*(?=\S)((?:[^*\n]|\*(?!\*))+?)(?<=\S)\*\*|__(?=\S)((?:[^_\n]|_(?!_))+?)(?<=\S)__")
_MD_EMPHASIS_STAR = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_MD_EMPHASIS_UNDERSCORE = re.compile(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])")
_MD_STRIKE = re.compile(r"~~(?=\S)((?:[^~\n]|~(?!~))+?)(?<=\S)~~")
_BACKTICKS = re.compile(r"`+")


def _without_closing_hashes(text: str) -> str:
    """Example: _without_closing_hashes("Bees ##  ") == "Bees"."""
    return text.rstrip(" \t").rstrip("#").rstrip(" \t")


def _strip_code_spans(line: str) -> str:
    """`code` and ``co`de`` spans lose their backticks; a run is closed by the next run
    of the same length (CommonMark), found in one pass with a queue per run length."""
    if "`" not in line:
        return line
    runs = list(_BACKTICKS.finditer(line))
    later: dict[int, deque[int]] = defaultdict(deque)
    for index, run in enumerate(runs):
        later[len(run.group())].append(index)
    out, done, i = [], 0, 0
    while i < len(runs):
        queue = later[len(runs[i].group())]
        while queue and queue[0] <= i:
            queue.popleft()
        if not queue:  # no closing run: the backticks are text
            i += 1
            continue
        j = queue.popleft()
        out += [line[done:runs[i].start()], line[runs[i].end():runs[j].start()].strip()]
        done, i = runs[j].end(), j + 1
    out.append(line[done:])
    return "".join(out)


def _markdown_inline(line: str) -> str:
    line = _MD_IMAGE.sub(r"\1", line)
    line = _MD_LINK.sub(r"\1", line)
    line = _MD_AUTOLINK.sub(r"\1", line)
    line = _strip_code_spans(line)
    line = _MD_STRONG.sub(lambda m: m.group(1) or m.group(2), line)
    line = _MD_EMPHASIS_STAR.sub(r"\1", line)
    line = _MD_EMPHASIS_UNDERSCORE.sub(r"\1", line)
    return _MD_STRIKE.sub(r"\1", line)


def strip_markdown(source: str, heading_mark: str = "") -> tuple[str, str | None]:
    """Readable text of a Markdown document and its first heading; each heading's line
    starts with `heading_mark` (engine.extract.base.take_heading_marks finds them).

    Example: strip_markdown("# Bees\\n\\n**Honey** is [made](x.html).") ==
        ("Bees\\n\\nHoney is made.", "Bees")
    """
    out: list[str] = []
    title = None
    in_fence = False
    for line in source.splitlines():
        if _MD_FENCE.match(line):
            in_fence = not in_fence
            out.append("")
            continue
        if in_fence:
            out.append(line)  # code stays verbatim
            continue
        if heading := _MD_HEADING.match(line):
            line = _without_closing_hashes(heading.group(2))
            title = title or _markdown_inline(line).strip() or None
            out.extend(("", heading_mark + _markdown_inline(line), ""))
            continue
        if _MD_SETEXT_UNDERLINE.match(line) and out and out[-1].strip():
            title = title or out[-1].strip()
            out[-1] = heading_mark + out[-1]
            out.append("")
            continue
        if _MD_RULE.match(line) or _MD_REF_DEFINITION.match(line) or _MD_TABLE_RULE.match(line):
            out.append("")
            continue
        line = _MD_QUOTE.sub("", line)
        line = _MD_BULLET.sub(r"\1- ", line)
        out.append(_markdown_inline(line))
    return "\n".join(out), title


# A line made of one repeated punctuation character (reST section adornment).
_RST_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}[ \t]*$")
_RST_ROLE = re.compile(r":[\w-]+:`([^`]+)`")
_RST_LINK = re.compile(r"`([^`<]*[^`<\s])\s*<[^<>`]+>`_{1,2}")
_RST_LITERAL = re.compile(r"``(.+?)``")
_RST_INTERPRETED = re.compile(r"`([^`]+)`_{0,2}")
_RST_STRONG = re.compile(r"\*\*(?=\S)((?:[^*]|\*(?!\*))+?)(?<=\S)\*\*")
_RST_EMPHASIS = re.compile(r"(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])")
_RST_DIRECTIVE_OR_COMMENT = re.compile(r"^\.\.(\s|$)")


def _rst_inline(line: str) -> str:
    line = _RST_ROLE.sub(r"\1", line)
    line = _RST_LINK.sub(r"\1", line)
    line = _RST_LITERAL.sub(r"\1", line)
    line = _RST_INTERPRETED.sub(r"\1", line)
    line = _RST_STRONG.sub(r"\1", line)
    line = _RST_EMPHASIS.sub(r"\1", line)
    if line.rstrip().endswith("::"):
        line = line.rstrip()[:-1]  # "Example::" renders as "Example:"
    return line


def strip_rst(source: str, heading_mark: str = "") -> tuple[str, str | None]:
    """Readable text of a reStructuredText document and its first section title; each
    section title's line starts with `heading_mark`.

    Example: strip_rst("Bees\\n====\\n\\n**Honey** is sweet.") == ("Bees\\n\\nHoney is sweet.", "Bees")
    """
    out: list[str] = []
    title = None
    for line in source.splitlines():
        if _RST_ADORNMENT.match(line):
            if out and out[-1].strip():
                title = title or out[-1].strip()
                out[-1] = heading_mark + out[-1]
            out.append("")
            continue
        if _RST_DIRECTIVE_OR_COMMENT.match(line):
            out.append("")  # directives and comments are markup, not prose
            continue
        out.append(_rst_inline(line))
    return "\n".join(out), title
