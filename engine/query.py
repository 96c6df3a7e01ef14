"""The search box's syntax: meaning, exact phrases, exclusions and filters in one line.

    >>> q = parse_query('invoice "FA-2024-5521" -draft lang:de type:pdf after:2024-01-01')
    >>> q.words, q.phrases, q.excluded, q.languages, q.file_types
    (('invoice',), ('FA-2024-5521',), ('draft',), frozenset({'de'}), frozenset({'pdf'}))

Syntax (QUERY_HELP is the text shown by `babelfind search --help` and the window):
  words            searched by meaning and as keywords
  "exact phrase"   only passages holding these words in this order (accents and case ignored)
  -word, -"a b"    leave out documents holding the word or phrase
  --option, -rf    searched for as written: two dashes always; one dash when it follows a
                   word and reads as a command's short flag (see `is_short_flag`), or
                   when the library writes it as an option ("cannot find -lfoo":
                   engine.index.restrict.options_as_written)
  lang:de          only passages in this language; lang:de,fr for several
  type:pdf         only files of this type; type:pdf,docx for several; type:email, type:image,
                   type:spreadsheet, type:presentation, type:code for kinds
  path:~/Papers    only documents in this folder (quote a path with spaces: path:"~/My Papers")
  after:2024-01-01 only files modified on or after this day (YYYY, YYYY-MM or YYYY-MM-DD)
  before:2024-06   only files modified before this day (the first of the month here)
A malformed part raises a QuerySyntaxError subclass naming the part.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property

from engine.errors import (
    BadDateError,
    InputError,
    QuerySyntaxError,
    QueryTooLongError,
    UnbalancedQuoteError,
    UnknownFileTypeError,
    UnknownFilterError,
    UnknownLanguageError,
)
from engine.highlight import HighlightTerms
from engine.index.keyword_tokens import Token, tokenize

QUERY_HELP = """\
Query syntax (one search box for all of it):
  words             search by meaning and by the words themselves
  "exact phrase"    only passages with exactly these words, in this order
  -word  -"a b"     leave out documents that contain the word or phrase
  --global  -rf     options are searched for: two dashes always, one dash for a short
                    flag after a word (rm -rf, ls -la, tar -xzf, kill -9) or for a word
                    your documents write as an option (cannot find -lfoo); quote a word
                    to leave it out all the same: -"la"
  lang:de           only passages in a language (lang:de,fr for several)
  type:pdf          only files of a type (type:pdf,docx for several; kinds:
                    type:email, type:image, type:spreadsheet, type:presentation, type:code)
  path:~/Papers     only documents in a folder (path:"~/My Papers" with spaces)
  after:2024-01-01  only files modified on or after a day (YYYY, YYYY-MM, YYYY-MM-DD)
  before:2024-06    only files modified before a day
Case and accents never matter: "grosse" finds "Größe"."""

FILTER_KEYS = ("lang", "type", "path", "after", "before")
# Languages engine.langid can assign (py3langid's labels plus its own zh/ja/ko rule).
DETECTABLE_LANGUAGES = frozenset(
    "ace af am an ar ary arz as az ba bcl be bg bn br bs ca crh cs cy da de dz el en eo es et eu "
    "ext fa fi fo fr fuv fy ga gcf gcr gd gl gom grc gu gug guw ha hbo he hi hr ht hu hy id ig is "
    "it ja jv ka kab kik kk km kn ko ku ky la lb lg lij ln lo lt ltg lv mg mk ml mn mr ms mt my ne "
    "nl nn no nso oc om or pa pcm pl ps pt qu ro ru rw sa sdh se si sk sl sn so sq sr st sv sw ta "
    "te tg th tk tl tr tt ug uk ur uz uzs vec vi vo wa wuu xh yo yue zh zu".split()
)
# A part of the box: -?key:"quoted" | -?"quoted" | -?bare. Bare parts end at whitespace.
_PART = re.compile(r'(?P<neg>-)?(?:(?P<key>[A-Za-z]+):(?!:)(?P<value>"[^"]*"|\S+)|"(?P<phrase>[^"]*)"|(?P<bare>[^\s"]+))')
_DATE = re.compile(r"^(\d{4})(?:-(\d{1,2}))?(?:-(\d{1,2}))?$")
# Bounds on one query: each required or excluded phrase is a full-text lookup of its own,
# and a pasted page is far more than the encoder reads (512 tokens). 5,000 copies of one
# phrase took 2.65 s before phrases were counted once.
MAX_QUERY_CHARS = 10_000
MAX_PHRASES = 32


@dataclass(frozen=True)
class ParsedQuery:
    """What one line in the search box asks for, parsed once per search.

    Every later step reads what it needs from here: retrieval and restriction the keyword
    tokens, the front ends the terms to mark (`highlight`); none of them parses again.
    """

    words: tuple[str, ...] = ()  # plain words: meaning and keywords
    phrases: tuple[str, ...] = ()  # required, in order
    excluded: tuple[str, ...] = ()  # words or phrases whose documents are left out
    # `-word`s typed after another word that could be either an option pasted from a
    # command line or a message ("cannot find -lfoo", "tar -xzf") or a word to leave out
    # ("jaguar -car", "license -gpl"): each with its position among `words`, and read as
    # `is_short_flag` says (a letter cluster without a vowel in `words`, the rest in
    # `excluded`) until the library decides (engine.index.restrict.options_as_written).
    option_like: tuple[tuple[int, str], ...] = ()
    languages: frozenset[str] = field(default_factory=frozenset)
    file_types: frozenset[str] = field(default_factory=frozenset)
    path_prefix: str | None = None
    modified_after: float | None = None  # epoch seconds, local midnight
    modified_before: float | None = None

    @property
    def meaning_text(self) -> str:
        """What the encoder sees: the words and phrases, in the order typed."""
        return " ".join(self.words + self.phrases)

    @property
    def keyword_words(self) -> tuple[str, ...]:
        """Words the keyword index scores (phrase words count too)."""
        return self.words + self.phrases

    @cached_property
    def word_tokens(self) -> tuple[Token, ...]:
        """Keyword tokens of the plain words (engine.index.keyword_tokens)."""
        return tuple(token for word in self.words for token in tokenize(word))

    @cached_property
    def phrase_tokens(self) -> tuple[tuple[Token, ...], ...]:
        """Keyword tokens of each phrase, in order."""
        return tuple(tuple(tokenize(phrase)) for phrase in self.phrases)

    @cached_property
    def excluded_tokens(self) -> tuple[tuple[Token, ...], ...]:
        """Keyword tokens of each excluded word or phrase."""
        return tuple(tuple(tokenize(text)) for text in self.excluded)

    @property
    def keyword_tokens(self) -> tuple[Token, ...]:
        """What the keyword index scores: the words' tokens, then the phrases'."""
        return self.word_tokens + tuple(token for phrase in self.phrase_tokens for token in phrase)

    @cached_property
    def highlight(self) -> HighlightTerms:
        """The terms a front end marks in snippets and the preview."""
        return HighlightTerms.of_tokens(self.word_tokens, self.phrase_tokens)

    @property
    def has_filters(self) -> bool:
        return bool(self.languages or self.file_types or self.path_prefix
                    or self.modified_after is not None or self.modified_before is not None)

    @property
    def is_empty(self) -> bool:
        """Nothing to look for: no words, no phrases (filters alone do not search)."""
        return not (self.words or self.phrases)


def parse_query(text: str) -> ParsedQuery:
    """Parses the search box; raises a QuerySyntaxError subclass on malformed parts.

    A phrase or excluded word given twice counts once; a query longer than
    MAX_QUERY_CHARS, or with more than MAX_PHRASES phrases (or exclusions), is refused.
    """
    if len(text) > MAX_QUERY_CHARS:
        raise QueryTooLongError(f"the query is {len(text):,} characters long; at most {MAX_QUERY_CHARS:,} "
                                "are read (the meaning of a long text is in its first paragraphs)", text[:40])
    if text.count('"') % 2:
        raise UnbalancedQuoteError('a quote (") is not closed; close it or remove it', text[text.rfind('"'):])
    words, phrases, excluded, option_like = [], [], [], []
    filters: dict[str, list[str]] = {k: [] for k in FILTER_KEYS}
    for part in _PART.finditer(text):
        negated = bool(part.group("neg"))
        if part.group("key") is not None:
            key = part.group("key").lower()
            value = part.group("value").strip('"')
            if key not in FILTER_KEYS:
                raise UnknownFilterError(
                    f"unknown filter '{key}:' (filters: {', '.join(k + ':' for k in FILTER_KEYS)}); "
                    f'to search for the text, put it in quotes: "{part.group()}"', part.group())
            filters[key].append(value)
            continue
        phrase = part.group("phrase")
        if phrase is not None:
            phrase = " ".join(phrase.split())
            if phrase:
                (excluded if negated else phrases).append(phrase)
            continue
        bare = part.group("bare")
        if negated and not bare:
            continue
        if (negated and words and bare.isascii() and not bare.startswith("-")
                and (_letter_cluster(bare) or not is_short_flag(bare))):
            option_like.append((len(words), bare))  # `tar -xzf` or `license -gpl`? the library decides
        if negated and (bare.startswith("-") or (words and is_short_flag(bare))):
            words.append("-" + bare)  # an option pasted from a command line: `--global`, `rm -rf`
            continue
        (excluded if negated else words).append(bare)
    phrases, excluded = list(dict.fromkeys(phrases)), list(dict.fromkeys(excluded))
    for what, parts in (("phrases in quotes", phrases), ("excluded words or phrases", excluded)):
        if len(parts) > MAX_PHRASES:
            raise QueryTooLongError(f"the query has {len(parts):,} different {what}; at most {MAX_PHRASES} "
                                    "can be searched for at once", parts[MAX_PHRASES])
    return ParsedQuery(
        words=tuple(words), phrases=tuple(phrases), excluded=tuple(excluded),
        option_like=tuple(dict.fromkeys(option_like)),
        languages=_languages(filters["lang"]), file_types=_file_types(filters["type"]),
        path_prefix=_path(filters["path"]),
        modified_after=_latest(_date(v, "after") for v in filters["after"]),
        modified_before=_earliest(_date(v, "before") for v in filters["before"]),
    )


def is_short_flag(word: str) -> bool:
    """Whether `-word`, after another word, reads as a command's flag rather than "leave out".

    Example: [is_short_flag(w) for w in ("rf", "la", "xzf", "9", "Dkey=1", "wasps", "car")]
    == [True, True, True, True, True, False, False]

    Flags are one or two characters, or clusters of letters no word is spelt with (no
    vowel), or hold digits or `=`; a word the user wants left out is none of these. A flag
    with vowels (`find -name`) reads as a word: the help says to quote it.
    """
    if not word or not word[0].isalnum():
        return False
    if len(word) <= 2 or "=" in word or any(c.isdigit() for c in word):
        return True
    return _letter_cluster(word)


def _letter_cluster(word: str) -> bool:
    """A flag by `is_short_flag` only for having no vowel ("xzf", but also "gpl", "pdf")."""
    return len(word) > 2 and word.isascii() and word.isalpha() and not set(word.lower()) & set("aeiouy")


def _values(raw: list[str]) -> list[str]:
    return [v.strip().lower() for item in raw for v in item.split(",") if v.strip()]


def _languages(raw: list[str]) -> frozenset[str]:
    from engine.languages import language_name, suggested_code

    codes = _values(raw)
    for code in codes:
        if code not in DETECTABLE_LANGUAGES:
            suggestion = suggested_code(code)
            hint = (f"did you mean lang:{suggestion} ({language_name(suggestion)})?" if suggestion
                    else "use a two-letter ISO 639-1 code such as de, fr, zh")
            raise UnknownLanguageError(f"unknown language 'lang:{code}'; {hint}", code)
    return frozenset(codes)


def _file_types(raw: list[str]) -> frozenset[str]:
    """Extensions asked for; a kind (type:email, type:image) stands for all of its extensions."""
    from engine.extract import SUPPORTED_EXTENSIONS
    from engine.extract.dispatch import TYPE_ALIASES, TYPE_GROUPS

    known = {e.lstrip(".") for e in SUPPORTED_EXTENSIONS}
    types: set[str] = set()
    for ext in (t.lstrip(".") for t in _values(raw)):
        kind = TYPE_ALIASES.get(ext, ext)
        if kind in TYPE_GROUPS:
            types |= TYPE_GROUPS[kind]
        elif ext in known:
            types.add(ext)
        else:
            raise UnknownFileTypeError(
                f"unknown file type 'type:{ext}' (kinds: {', '.join(sorted(TYPE_GROUPS))}; "
                f"or an extension such as pdf, docx, xlsx, eml, png, py)", ext)
    return frozenset(types)


def expand_kinds(file_types: Collection[str]) -> frozenset[str]:
    """Extensions without the dot; a kind (email, image, ...) becomes its extensions.

    Example: expand_kinds(["PDF", "email"]) == {"pdf", "eml", "msg", "mbox", "mbx"}
    """
    from engine.extract.dispatch import TYPE_ALIASES, TYPE_GROUPS

    out: set[str] = set()
    for value in file_types:
        value = value.lower().lstrip(".")
        out |= TYPE_GROUPS.get(TYPE_ALIASES.get(value, value), {value})
    return frozenset(out)


def _path(raw: list[str]) -> str | None:
    if not raw:
        return None
    from engine.scan import path_key, user_path

    # The last path: of several wins, as typing a new one replaces the old.
    try:
        return path_key(user_path(raw[-1]).absolute())
    except InputError as e:
        raise QuerySyntaxError(f"'path:{raw[-1]}': {e}", raw[-1]) from e


def _date(value: str, key: str) -> float:
    match = _DATE.match(value)
    try:
        if match is None:
            raise ValueError(value)
        year, month, day = (int(g) if g else 1 for g in match.groups())
        return datetime(year, month, day).timestamp()  # local midnight, like a file manager
    except (ValueError, OverflowError) as e:
        raise BadDateError(f"'{key}:{value}' is not a date; write YYYY-MM-DD, YYYY-MM or YYYY", value) from e


def _latest(values) -> float | None:
    values = list(values)
    return max(values) if values else None


def _earliest(values) -> float | None:
    values = list(values)
    return min(values) if values else None


def with_filters(parsed: ParsedQuery, languages: Collection[str] | None, path_prefix: str | None,
                 file_types: Collection[str] | None) -> ParsedQuery:
    """The parsed query with the caller's filters added; both must hold.

        >>> with_filters(parse_query("bees lang:de"), {"de", "fr"}, None, None).languages
        frozenset({'de'})

    Disjoint filters (`lang:de` typed, French picked in the window's facet) match nothing.
    """
    changes: dict = {}
    if languages:
        wanted = frozenset(languages)
        changes["languages"] = parsed.languages & wanted if parsed.languages else wanted
    if file_types:
        wanted = expand_kinds(file_types)
        changes["file_types"] = parsed.file_types & wanted if parsed.file_types else wanted
        if not changes["file_types"]:
            changes["file_types"] = frozenset({"\0none"})  # disjoint filters: nothing matches
    if path_prefix:
        changes["path_prefix"] = path_prefix if not parsed.path_prefix else max(parsed.path_prefix, path_prefix, key=len)
    if languages and not changes["languages"]:
        changes["languages"] = frozenset({"\0none"})
    return replace(parsed, **changes) if changes else parsed
