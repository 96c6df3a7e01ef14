"""Manual pages: the text of roff source written with the man or mdoc macros.

    >>> extract_man_page(Path("ls.1"), b".TH LS 1\\n.SH NAME\\nls \\\\- list directory contents\\n").text
    'NAME\\n\\nls - list directory contents'

Every Linux system keeps thousands of them (`/usr/share/man`, often gzipped, and in
translation under `/usr/share/man/de`, `fr`, ...), and read as plain text their markup
(`.TP`, `\\fB\\-\\-all\\fR`, pod2man's preamble of string definitions) fills the passages
and the snippets. This reads them the way `man` shows them, without running groff (which
a user's machine may lack, and which would be one process per page): section headings
and paragraphs become paragraphs, font changes and size changes vanish, special
characters (`\\(em`, `\\[u00E9]`, `\\(:a`) become the characters they name, tables
become one line per row, the page's own macros (`.de URL`) and strings (`.ds`) are read
where it uses them, and conditions are decided as for a terminal. What only changes the
layout (indentation, spacing, fonts) is left out.

A page is recognised by its name (a section suffix: `ls.1`, `ssl.3ssl`, `foo.man`) and
its content (a `.TH`, `.Dd` or `.SH` request near the top); a `README.1` of plain text
stays plain text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from engine.errors import ExtractionError
from engine.extract.base import (
    HEADING_MARK,
    ExtractedText,
    normalise_with_headings,
    without_heading_marks,
)
from engine.extract.text_file import decode_text

# ls.1, ssl.3ssl, readline.3readline, tcl.n, local.l; "notes.v1" or "libfoo.so.2" are not.
_SECTION_SUFFIX = re.compile(r"^\.(?:[1-9][a-z0-9]{0,10}|n|l)$")
MAN_EXTENSIONS = frozenset({".man"})
# pod2man's preamble of definitions can run to a few KiB before the .TH request.
_HEAD_BYTES = 32 * 1024
# .so: a page that is another page's alias ("init.1" is ".so man1/systemd.1"); it has no text.
_ALIAS = re.compile(r"\A(?:[.']\\\".*\n|\s*\n)*[.']\s*so\s+(\S+)\s*\Z")
_REQUEST_AT_TOP = re.compile(rb"^[.'][ \t]*(?:TH|Dd|Dt|SH|Sh|so)[ \t\r\n]", re.MULTILINE)


def is_man_page(path: Path | str, data: bytes) -> bool:
    """Whether `data` (the file at `path`) is a manual page's roff source."""
    suffix = PurePosixPath(str(path)).suffix.lower()
    named_like_one = suffix in MAN_EXTENSIONS or _SECTION_SUFFIX.match(suffix) is not None
    return named_like_one and _REQUEST_AT_TOP.search(data[:_HEAD_BYTES]) is not None


def extract_man_page(path: Path, data: bytes) -> ExtractedText:
    """The page's text: headings and paragraphs, one blank line between them."""
    text = without_heading_marks(decode_text(data, path))
    if alias := _ALIAS.match(text):
        raise ExtractionError(path, f"an alias of the manual page {alias.group(1)}, which holds the text")
    page = _Page()
    for line in _logical_lines(text):
        page.read(line)
    text, headings = normalise_with_headings(page.text())
    return ExtractedText(text=text, format="man", title=page.title(), headings=headings)


# -- lines and comments -----------------------------------------------------------------

_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


def _logical_lines(text: str) -> list[str]:
    """Input lines with comments cut and escaped newlines (`\\` or `\\#` at the end) joined."""
    lines: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line, joins = _without_comment(pending + raw)
        if joins:
            pending = line
            continue
        pending = ""
        lines.append(line)
    if pending:
        lines.append(pending)
    return lines


def _without_comment(line: str) -> tuple[str, bool]:
    """(the line up to its comment, whether it continues on the next line)."""
    for match in _ESCAPE.finditer(line):  # pairs, so "\\\\" is one escaped backslash
        if match.group(1) == '"':
            return line[: match.start()], False
        if match.group(1) == "#":
            return line[: match.start()], True
    if (len(line) - len(line.rstrip("\\"))) % 2 == 1:  # an escaped newline
        return line[:-1], True
    return line, False


# -- escapes --------------------------------------------------------------------------------

# groff_char(7): the named characters a manual page uses, as `\(xx` or `\[xx]`.
_CHARACTERS = {
    "em": "\u2014", "en": "\u2013", "hy": "-", "mi": "\u2212", "bu": "\u2022", "co": "\u00a9",
    "rg": "\u00ae", "tm": "\u2122", "aq": "'", "dq": '"', "lq": "\u201c", "rq": "\u201d",
    "oq": "\u2018", "cq": "\u2019", "Bq": "\u201e", "bq": "\u201a", "ga": "`", "ti": "~",
    "ha": "^", "rs": "\\", "sl": "/", "ba": "|", "br": "|", "ul": "_", "pl": "+", "eq": "=",
    "mu": "\u00d7", "di": "\u00f7", "+-": "\u00b1", "<=": "\u2264", ">=": "\u2265",
    "!=": "\u2260", "->": "\u2192", "<-": "\u2190", "de": "\u00b0", "sc": "\u00a7",
    "ps": "\u00b6", "ct": "\u00a2", "Po": "\u00a3", "Eu": "\u20ac", "eu": "\u20ac",
    "Ye": "\u00a5", "Fo": "\u00ab", "Fc": "\u00bb", "fo": "\u2039", "fc": "\u203a",
    "r!": "\u00a1", "r?": "\u00bf", "ss": "\u00df", "ae": "\u00e6", "AE": "\u00c6",
    "oe": "\u0153", "OE": "\u0152", "o/": "\u00f8", "O/": "\u00d8", "oa": "\u00e5",
    "oA": "\u00c5", "12": "\u00bd", "14": "\u00bc", "34": "\u00be", "aa": "\u00b4",
    "lh": "\u261c", "rh": "\u261e", "OK": "\u2713", "dg": "\u2020", "at": "@", "sh": "#",
    "Do": "$", "lB": "[", "rB": "]", "lC": "{", "rC": "}", "la": "\u27e8", "ra": "\u27e9",
    "fm": "\u2032", "sd": "\u2033", "pc": "\u00b7", "/l": "\u0142", "/L": "\u0141",
    "-D": "\u0110", "Sd": "\u00f0", "TP": "\u00de", "Tp": "\u00fe", ".i": "\u0131", "IJ": "\u0132",
    "ij": "\u0133",
}
# \(:a, \('e, \(`e, \(^o, \(~n, \(,c: a letter with an accent
_ACCENTS = {":": "\u0308", "'": "\u0301", "`": "\u0300", "^": "\u0302", "~": "\u0303", ",": "\u0327"}
# Strings a page interpolates (\*(lq): the quotes man(7) and pod2man define; others are
# page-local definitions this reader does not keep, mostly typographic.
_STRINGS = {"lq": "\u201c", "rq": "\u201d", "R": "\u00ae", "Tm": "\u2122", "C`": '"', "C'": '"', "Aq": "'"}
# \X followed by a name: \f (font), \s (size), \* (string), \n (number), \k, \F, \m, \M...
_NAMED = r"(?:\[[^\]]*\]|\(..|[^\[(])"
_ESCAPES = re.compile(
    r"\\(?:"
    r"(?P<font>[fFmMgkYV]" + _NAMED + r")"
    r"|(?P<size>s(?:[+-]?\d|[+-]?\(\d\d|\[[^\]]*\]|'[^']*'))"
    r"|(?:\*(?P<string>" + _NAMED + r"))"
    r"|(?:n[+-]?" + _NAMED + r")"
    r"|(?:\((?P<char2>..))"
    r"|(?:\[(?P<char>[^\]]*)\])"
    r"|(?:N'(?P<code>\d+)')"
    r"|(?:[hvwlLoDbxXRSZCA]'[^']*')"
    r"|(?:\$[0-9*@])"
    r"|(?P<other>.)"
    r")",
    re.DOTALL,
)
_SINGLE = {"e": "\\", "\\": "\\", "-": "-", " ": " ", "0": " ", "~": " ", "t": " ", "'": "'", "`": "`", ".": "."}


def unescape(text: str, strings: Mapping[str, str] = _STRINGS) -> str:
    """Roff escapes replaced by the characters they draw; layout escapes removed.
    `strings`: the values of \\*(xx, the page's own definitions (.ds) among them.

    Example: unescape(r"\\fB\\-\\-all\\fR \\(em caf\\(\\'e") == "--all \u2014 café"
    """
    return _ESCAPES.sub(lambda match: _replacement(match, strings), text) if "\\" in text else text


def _replacement(match: re.Match, strings: Mapping[str, str]) -> str:
    if (name := match.group("string")) is not None:
        return strings.get(_bare(name), "")
    if (name := match.group("char2") or match.group("char")) is not None:
        return _character(name)
    if (code := match.group("code")) is not None:
        return chr(int(code)) if int(code) < 0x110000 else ""
    if (other := match.group("other")) is not None:
        return _SINGLE.get(other, "")  # \& \| \^ \% \c \: \/ \, and the like draw nothing
    return ""  # fonts, sizes, registers, motions


def _bare(name: str) -> str:
    return name[1:-1] if name.startswith("[") else name[1:] if name.startswith("(") else name


def _character(name: str) -> str:
    """A named character: groff_char(7)'s names, u00E9 or char233 code points, accents."""
    if name in _CHARACTERS:
        return _CHARACTERS[name]
    if re.fullmatch(r"u[0-9A-Fa-f]{4,6}(?:_[0-9A-Fa-f]{4,6})*", name):
        return unicodedata.normalize("NFC", "".join(chr(int(part, 16)) for part in name[1:].split("_")))
    if re.fullmatch(r"char\d{1,3}", name):
        return chr(int(name[4:]))
    if len(name) == 2 and name[0] in _ACCENTS and name[1].isalpha():
        return unicodedata.normalize("NFC", name[1] + _ACCENTS[name[0]])
    return ""


# -- requests and macros ----------------------------------------------------------------------

_ARGUMENT = re.compile(r'"((?:[^"]|"")*)"?|(\S+)')


def _arguments(text: str) -> list[str]:
    """A request's arguments: words, or "quoted words" with "" for a quote."""
    return [m.group(1).replace('""', '"') if m.group(1) is not None else m.group(2)
            for m in _ARGUMENT.finditer(text)]


PARAGRAPH_BREAKS = frozenset({"PP", "LP", "P", "sp", "HP", "RS", "RE", "Pp", "Lp", "Bl", "El", "YS", "SY",
                              "TQ", "Ed", "Rs", "Re", "Bd"})
HEADINGS = frozenset({"SH", "SS", "Sh", "Ss"})
# man(7)'s font macros: their arguments in one font, or alternating fonts with no space between.
_ONE_FONT = frozenset({"B", "I", "R", "SM", "SB"})
_ALTERNATING = frozenset({"BR", "RB", "IR", "RI", "BI", "IB"})
# mdoc(7) macros that only style their arguments, dropped where they are called inline.
_MDOC_CALLABLE = frozenset({
    "Ad", "An", "Ar", "Cd", "Cm", "Dv", "Em", "Er", "Ev", "Fa", "Fd", "Fn", "Ft", "Ic", "Li",
    "Lk", "Mt", "Ms", "No", "Pa", "Sy", "Tn", "Va", "Vt", "Ot", "Ux", "Bx", "At", "Fx", "Nx",
    "Ox", "Bsx", "Dx", "St", "Lb", "In", "Ta", "Ap", "Aq", "Ao", "Ac", "Bq", "Bo", "Bc",
    "Brq", "Bro", "Brc", "Eo", "Ec", "Pf", "Qo", "Qc", "Xo", "Xc", "Fo", "Fc", "Sx", "Ql",
})
_MDOC_QUOTES = {"Dq": ("\u201c", "\u201d"), "Qq": ('"', '"'), "Sq": ("\u2018", "\u2019"), "Pq": ("(", ")"),
                "Op": ("[", "]")}
_MDOC_OPENERS = {"Do": "\u201c", "Dc": "\u201d", "So": "\u2018", "Sc": "\u2019", "Po": "(", "Pc": ")",
                 "Oo": "[", "Oc": "]"}
_CLOSING_PUNCTUATION = frozenset({".", ",", ":", ";", ")", "]", "?", "!"})
# pod2man defines .IX for index entries (.IX Item "--all"): not text of the page.
_INDEX_ENTRIES = frozenset({"IX"})
_MDOC_MACROS = _MDOC_CALLABLE | _MDOC_QUOTES.keys() | _MDOC_OPENERS.keys() | {"Fl", "Xr", "Nm", "Nd", "Ns"}


# \$1 ... \$9, \$* and \$@ in a macro's body: its arguments.
_MACRO_ARGUMENT = re.compile(r"\\\$([1-9*@])")
# Lines of macro bodies one page may read (real pages expand a few thousand), and how deep
# calls may nest: a page built to loop stops there.
_MAX_EXPANDED_LINES = 100_000
_MAX_MACRO_DEPTH = 16


class _Page:
    """The page as it is read: finished paragraphs, and the one being filled."""

    def __init__(self) -> None:
        self.paragraphs: list[str] = []
        self.lines: list[str] = []  # of the current paragraph
        self.words: list[str] = []  # of the current line, while filling
        self.fill = True
        self.skip_until: str | None = None  # ".." ends a definition or an .ig block
        self.open_braces = 0  # inside a false conditional's \{ ... \} block
        self.last_condition = True  # the last .ie's, which its .el reverses
        self.heading_next = False  # ".SH" alone: the next line is the heading
        self.tag_next = False  # ".TP": the next line is the item's tag
        self.in_table = False
        self.table_format_done = False
        self.table_tab = "\t"  # the cell separator, tab(@) in the table's options
        self.page_title: str | None = None
        self.sections = 0
        self.name_line: str | None = None  # the first section's first paragraph
        self.name: str | None = None  # mdoc's .Nm, repeated by a bare .Nm
        self.macros: dict[str, list[str]] = {}  # the page's own (.de FN): their bodies, in copy mode
        self.recording: list[str] | None = None  # the body being defined
        self.expanded_lines = 0  # lines read from macro bodies, bounded against a page that loops
        self.macro_depth = 0  # calls of the page's macros inside each other
        self.strings = dict(_STRINGS)  # and its strings (.ds Aq \(aq)
        self.registers: set[str] = set()  # the number registers it sets (.nr F 0)

    def unescape(self, text: str) -> str:
        return unescape(text, self.strings)

    # -- output

    def text(self) -> str:
        self.end_paragraph()
        return "\n\n".join(self.paragraphs)

    def title(self) -> str | None:
        """The NAME section's line ("ls - list directory contents"), else .TH's NAME(SECTION)."""
        if self.name_line and len(self.name_line) <= 200:
            return self.name_line
        return self.page_title

    def add_words(self, text: str) -> None:
        text = text.strip()
        if not text:
            return
        if not self.fill or self.tag_next:
            self.end_line()
            self.lines.append(text)
            self.tag_next = False
            return
        self.words.append(text)

    def end_line(self) -> None:
        if self.words:
            self.lines.append(" ".join(self.words))
            self.words = []

    def end_paragraph(self) -> None:
        self.end_line()
        if self.lines:
            paragraph = "\n".join(self.lines)
            self.paragraphs.append(paragraph)
            if self.sections == 1 and self.name_line is None:  # NAME, whatever the language calls it
                self.name_line = " ".join(paragraph.split())
            self.lines = []

    def heading(self, text: str) -> None:
        self.end_paragraph()
        self.tag_next = self.heading_next = False
        text = self.unescape(text).strip()
        if text:
            self.paragraphs.append(HEADING_MARK + text)
            self.sections += 1

    # -- input

    def read(self, line: str) -> None:
        if self.skip_until is not None:
            if line[:1] in (".", "'") and line[1:].split()[:1] == [self.skip_until]:
                self.skip_until = self.recording = None  # ".." (or ".  ." inside a block), or .ig's own end
            elif self.recording is not None:
                self.recording.append(line.replace("\\\\", "\\"))  # copy mode: \\$1 is \$1
            return
        if self.open_braces:
            self.open_braces = max(self.open_braces + line.count("\\{") - line.count("\\}"), 0)
            return
        line = line.replace("\\}", "")  # the end of a true conditional's block
        if self.in_table:
            self.table_line(line)
            return
        if line[:1] in (".", "'"):
            self.request(line[1:].strip())
            return
        if not line.strip():
            self.end_paragraph()
            return
        if line[:1] in (" ", "\t") and self.fill:
            self.end_line()  # roff breaks before a line that starts with a space
        text = self.unescape(line)
        if self.heading_next:
            self.heading(text)
        else:
            self.add_words(text)

    def request(self, text: str) -> None:
        parts = text.split(None, 1)
        if not parts:
            return
        name, rest = parts[0], parts[1] if len(parts) > 1 else ""
        if name in ("de", "de1", "am", "dei", "ig"):
            self.start_block(name, rest.split())
            return
        if name in ("als", "rn"):
            self.rename(name, rest.split())
            return
        if name == "nr" and rest:
            self.registers.add(rest.split()[0])
            return
        if name in ("if", "ie", "el"):
            self.conditional(name, rest)
            return
        if name in ("ds", "ds1", "as", "as1") and rest:
            key, _, value = rest.partition(" ")
            value = self.unescape(value.lstrip().removeprefix('"'))
            self.strings[key] = self.strings.get(key, "") + value if name.startswith("as") else value
            return
        if name in HEADINGS:
            if rest:
                self.heading(" ".join(_arguments(rest)))
            else:
                self.end_paragraph()
                self.heading_next = True
            return
        if name in ("TH", "Dt"):
            args = [self.unescape(a) for a in _arguments(rest)]
            if args:
                self.page_title = f"{args[0]}({args[1]})" if len(args) > 1 else args[0]
            return
        if name == "TS":
            self.end_paragraph()
            self.in_table, self.table_format_done, self.table_tab = True, False, "\t"
            return
        if name in ("nf", "EX", "Bd") and (name != "Bd" or "-literal" in rest or "-unfilled" in rest):
            self.end_paragraph()
            self.fill = False
            return
        if name in ("fi", "EE") or (name == "Ed" and not self.fill):
            self.end_paragraph()
            self.fill = True
            return
        self.macro(name, rest)

    def conditional(self, name: str, rest: str) -> None:
        """.if, .ie and .el: the body read when the condition holds for a terminal, else skipped."""
        if name == "el":
            holds, body = not self.last_condition, rest
        else:
            holds, body = _condition(rest, self)
            if name == "ie":
                self.last_condition = holds
        body = body.strip()
        if body.startswith("\\{"):
            if not holds:
                self.open_braces = max(body.count("\\{") - body.count("\\}"), 0)
                return
            body = body[2:].strip()
        if holds and body:
            self.read(body)

    def macro(self, name: str, rest: str) -> None:
        args = _arguments(rest)
        if name in PARAGRAPH_BREAKS:
            self.end_paragraph()
        elif name == "br":
            self.end_line()
        elif name == "TP":
            self.end_paragraph()
            self.tag_next = True
        elif name in ("IP", "It"):
            self.end_paragraph()
            tag = _mdoc_text(args, self) if name == "It" else self.unescape(args[0]) if args else ""
            if tag:
                self.lines.append(tag.strip())
        elif name in _ONE_FONT:
            self.add_words(self.unescape(" ".join(args)))  # none: the next line is in that font
        elif name in _ALTERNATING:
            self.add_words(self.unescape("".join(args)))
        elif name == "OP":
            self.add_words("[" + self.unescape(" ".join(args)) + "]")
        elif name in ("D1", "Dl"):
            self.end_line()
            self.lines.append(_mdoc_text(args, self))
        elif name in _MDOC_MACROS:
            self.add_words(_mdoc_text([name, *args], self))
        elif name in ("UR", "MT") and args:
            self.add_words(args[0])  # a link's address, which the terminal shows too
        elif name in self.macros and name not in _INDEX_ENTRIES:
            self.expand(self.macros[name], args)
        # anything else changes only the layout (.in, .ne, .ft, .ds, .nr, .IX, .UR, ...)

    def start_block(self, request: str, words: list[str]) -> None:
        """.de/.am NAME [END]: a macro's body follows, up to ".." (or .END), kept to be read
        where the page calls it; .dei: the same, its name indirect (skipped); .ig [END]: a
        comment block."""
        if request == "ig":
            self.skip_until = words[0] if words else "."
            return
        self.skip_until = words[1] if len(words) > 1 else "."
        if not words or request == "dei":  # .dei names the macro by a string's value: skipped
            return
        body = self.macros.setdefault(words[0], []) if request == "am" else []
        self.macros[words[0]] = self.recording = body

    def rename(self, request: str, words: list[str]) -> None:
        """.als NEW OLD: one body under two names (.als MTO URL); .rn OLD NEW: moved."""
        if len(words) < 2:
            return
        new, old = (words[0], words[1]) if request == "als" else (words[1], words[0])
        if old in self.macros:
            self.macros[new] = self.macros[old] if request == "als" else self.macros.pop(old)

    def expand(self, body: list[str], args: list[str]) -> None:
        """A call of the page's own macro: its body read with \\$1... standing for `args`
        (.de URL with "\\fI\\$2\\fP <\\$1>" shows the text, then the address)."""
        if self.expanded_lines + len(body) > _MAX_EXPANDED_LINES or self.macro_depth >= _MAX_MACRO_DEPTH:
            return  # a macro calling itself, or a page built to loop
        self.expanded_lines += len(body)
        self.macro_depth += 1

        def argument(match: re.Match) -> str:
            which = match.group(1)
            if which in ("*", "@"):
                return " ".join(args)
            return args[int(which) - 1] if int(which) <= len(args) else ""  # 1 to 9

        try:
            for line in body:
                self.read(_MACRO_ARGUMENT.sub(argument, line))
        finally:
            self.macro_depth -= 1

    def table_line(self, line: str) -> None:
        """tbl(1) input between .TS and .TE: options and a format ending in ".", then rows."""
        if line.startswith((".TE", "'TE")):
            self.end_paragraph()
            self.in_table = False
            return
        if not self.table_format_done:
            if tab := re.search(r"\btab\s*\((.)\)", line):
                self.table_tab = tab.group(1)
            self.table_format_done = line.rstrip().endswith(".")
            return
        if line[:1] in (".", "'") or line.strip() in ("_", "=", "T{", "T}"):
            return
        cells = [self.unescape(cell.replace("T{", "").replace("T}", "")).strip() for cell in line.split(self.table_tab)]
        row = "  ".join(cell for cell in cells if cell and cell not in ("_", "=", "\\_"))
        if row:
            self.lines.append(row)


# A condition: an optional "!", then n (a terminal: true), t (typesetter), e/o (even or
# odd page), d/r (a string or macro, a register: defined?), a string comparison 'a'b'
# (any delimiter but a backslash, which starts a number expression: \n[.g]), or a number
# expression.
_STRING_TEST = re.compile(r"^(!?)([^\s\\])(.*?)\2(.*?)\2\s*(.*)$")
_DEFINED_TEST = re.compile(r"^([drcmFSv])\s*(\S+)\s*(.*)$")
_GROFF_REGISTER = ("\\n(.g", "\\n[.g]")  # true: the page is read as groff reads it
_NUMBER_TEST = re.compile(r"^(!?)\(?(\\n(?:\[[^\]]*\]|\(..|.)|[\d.+\-*/<>=&:()]+)\)?\s*(.*)$")


def _condition(text: str, page: _Page) -> tuple[bool, str]:
    """(whether a condition holds for a terminal reading `page`, the body after it)."""
    text = text.lstrip()
    negated = text.startswith("!")
    rest = text[1:] if negated else text
    if rest[:1] in ("n", "t", "e", "o") and (len(rest) == 1 or not rest[1].isalnum()):
        return (rest[0] in ("n", "o")) != negated, rest[1:]
    if match := _DEFINED_TEST.match(rest):
        kind, name, body = match.groups()
        if kind == "r":
            defined = name in page.registers
        elif kind == "d":
            defined = name in page.macros or name in page.strings
        else:
            defined = False  # c (a glyph), m (a colour), ...: not kept here
        return defined != negated, body
    if match := _STRING_TEST.match(text):
        _, _, left, right, body = match.groups()
        return (unescape(left) == unescape(right)) != negated, body
    if match := _NUMBER_TEST.match(text):
        expression, body = match.group(2), match.group(3)
        if expression.startswith("\\n"):
            holds = expression in _GROFF_REGISTER  # other registers this reader does not keep
        else:
            holds = expression.strip("()") not in ("0", "")
        return holds != negated, body
    return False, ""


def _mdoc_text(args: list[str], page: _Page) -> str:
    """An mdoc line's words: macro names dropped, flags dashed, cross-references as name(section)."""
    out: list[str] = []
    closers: list[str] = []
    glue = False  # after .Ns or an opening mark: the next word follows without a space

    def emit(text: str) -> None:
        nonlocal glue
        if out and (glue or text in _CLOSING_PUNCTUATION):
            out[-1] += text
        else:
            out.append(text)
        glue = False

    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        following = args[i] if i < len(args) and args[i] not in _MDOC_MACROS else None
        if word == "Nm":
            if following is not None and following not in _CLOSING_PUNCTUATION:
                page.name = page.name or page.unescape(following)
            elif page.name:
                emit(page.name)
        elif word == "Nd":
            emit("-")
        elif word == "Fl":  # "Fl Fl long" is --long
            emit("-" + page.unescape(following or ""))
            i += following is not None
            glue = following is None and i < len(args) and args[i] == "Fl"
        elif word == "Xr" and i + 1 < len(args):
            emit(f"{page.unescape(args[i])}({page.unescape(args[i + 1])})")
            i += 2
        elif word == "Ns":
            glue = True
        elif word in _MDOC_QUOTES:
            opening, closing = _MDOC_QUOTES[word]
            emit(opening)
            glue = True
            closers.append(closing)
        elif word in _MDOC_OPENERS:
            mark = _MDOC_OPENERS[word]
            if mark in "\u201c\u2018([":
                emit(mark)
                glue = True
            else:
                _attach(out, mark)
        elif word not in _MDOC_CALLABLE:
            if word in _CLOSING_PUNCTUATION and all(rest in _CLOSING_PUNCTUATION for rest in args[i:]):
                for closing in reversed(closers):  # ".Pq brief mode ." is "(brief mode)."
                    _attach(out, closing)
                closers = []
            emit(page.unescape(word))
    for closing in reversed(closers):
        _attach(out, closing)
    return " ".join(out)


def _attach(out: list[str], text: str) -> None:
    """Appends `text` to the last word, without a space."""
    if out:
        out[-1] += text
    else:
        out.append(text)
