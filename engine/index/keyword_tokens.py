"""Words for the keyword index, the same way for passages, queries and highlighting.

    >>> [t.term for t in tokenize("Rechnung FA-2024-5521, Größe")]
    ['rechnung', 'fa_2024_5521', 'grosse']
    >>> index_terms("ffi_prep_closure_loc")      # the whole identifier, then its parts
    ['ffi_prep_closure_loc', 'ffi', 'prep', 'closure', 'loc']

Why done here and not by an SQLite tokeniser: FTS5's tokenisers split Devanagari and
Thai words at their vowel signs and keep Chinese sentences as one "word", so a query
finds nothing. Terms made here contain no spaces and are fed to FTS5's `ascii`
tokeniser, which keeps every non-ASCII character as part of a term.

  * case and accent folding: NFKC, casefold, and combining accents removed from Latin,
    Greek and Cyrillic letters (marks of other scripts carry meaning and stay);
  * scripts written without spaces (Han, kana, Hangul, Thai, Lao, Khmer, Myanmar) are
    cut into overlapping character bigrams (a lone character stays a unigram), the
    approach of Lucene's CJK analyser: no dictionary, works for every such language;
  * identifiers (`FA-2023-1177`, `0x800f0922`, `ffi_prep_closure_loc`, `Z6III`) are one
    term with their joiners as `_`, and also their parts: split at joiners, at letter /
    digit changes and at lower -> upper case changes.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import NamedTuple

# Scripts without spaces between words: Thai, Lao, Myanmar, Khmer, Hangul Jamo, CJK
# punctuation-free ranges (kana, Han, Hangul syllables), CJK compatibility, supplementary Han.
_SPACELESS = (
    "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u1100-\u11ff\u3040-\u30ff\u31f0-\u31ff"
    "\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0002ffff"
)
# Combining marks are part of words (Devanagari vowel signs, Hebrew points); `\w` alone misses them.
_MARKS = "\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0900-\u0dff\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
_WORD_CHAR = rf"[^\W_]|[{_MARKS}]"
# Characters that join the parts of one identifier when a word character follows.
_JOINERS = r"[-_./:@'’+#]"
_SPACELESS_RUN = re.compile(rf"[{_SPACELESS}]+")
_WORD = re.compile(rf"(?:{_WORD_CHAR})+(?:{_JOINERS}+(?:{_WORD_CHAR})+)*")
_JOINER_RUN = re.compile(rf"{_JOINERS}+")
# Boundaries inside a part: letter->digit, digit->letter, lower->Upper ("closureLoc").
_CASE_DIGIT = re.compile(r"(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])|(?<=[a-z])(?=[A-Z])")
_FOLDABLE_BASE = re.compile(r"[\u0000-\u052f\u1e00-\u1fff]")  # Latin, Greek, Cyrillic
# What sets a code apart from a word of prose: a letter against a digit ("x86", "0x800f0922"),
# capitals joined to digits ("FA-2024-5521", "COVID-19"), an underscore or "::" between
# word characters, or a dot, slash, @, # or + between a word and more ("foo.py", "ASN.1").
# Not: numbers ("6.1", "$29.42"), units ("85-mph"), abbreviations ("U.S."), "woman's".
_CODE_LIKE = re.compile(
    r"[^\W\d_]\d|\d[^\W\d_]|[A-Z][-./:]\d|\d[-./:][A-Z]|[^\W_]_[^\W_]|::"
    r"|[^\W\d_]{2}[./@#+][^\W_]|[^\W_][./@#+][^\W\d_]{2}")


class Token(NamedTuple):
    """One term of a text, with where it stands there (for highlighting).

    A named tuple, not a frozen dataclass: highlighting makes one per word of every
    shown passage, and a frozen dataclass takes four times as long to construct.
    """

    term: str  # folded; identifiers joined with "_"
    start: int  # character offsets into the text that was tokenised
    end: int
    parts: tuple[Token, ...] = ()  # an identifier's pieces, each with its own offsets


@lru_cache(maxsize=65536)
def fold(word: str) -> str:
    """Case- and accent-folded form: fold("Ärger") == "arger", fold("STRASSE") == fold("Straße")."""
    text = unicodedata.normalize("NFKC", word).casefold()
    if text.isascii():
        return text
    out: list[str] = []
    for ch in unicodedata.normalize("NFD", text):
        if unicodedata.combining(ch) and out and _FOLDABLE_BASE.match(out[-1]):
            continue  # an accent on a Latin, Greek or Cyrillic letter
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


def names_identifier(word: str) -> bool:
    """Whether a query word names a code rather than being a word of a sentence
    ("FA-2024-5521", "x86", "ffi_prep_closure_loc", "std::vector", "ASN.1"; not "1996",
    "6.1", "85-mph", "U.S.", "woman's", "key-board")."""
    return _CODE_LIKE.search(word) is not None


# Languages that capitalise names and nothing else, and keep a name's form in a sentence:
# there a capitalised word inside a question names something ("Kubernetes", "Lisbon").
# German capitalises every noun; Finnish, Polish or Russian decline names ("Lontoossa").
_CAPITALS_MARK_NAMES = frozenset({"en", "fr", "es", "it", "pt", "nl", "ca", "da", "sv", "no", "nb"})
_SENTENCE_END = (".", "!", "?", ":", ";")
_EDGE_PUNCTUATION = "\"'“”‘’«»()[]{}¿¡,.!?:;"


# Function words of the languages people most often mix, folded as `tokenize` folds them.
# English also loses its auxiliaries, modals and question words ("Can you do this?" has no
# topic word; "can" alone made a passage about sour fruit a full keyword match). Words
# that are also names or nouns people search for ("us", "may", "might") stay.
STOPWORDS = frozenset("""
a an and are as at be but by for from has have he her his i if in into is it its me my no
not of on or our she so than that the their them then there these they this to was we were
what when where which who will with you your
am been being can could did do does doing had having how must shall should would why him
those whom whose yours
aber als am an auch auf aus bei bin bis das dass dem den der des die du ein eine einem einen
einer eines er es fur hat ich ihr im in ist ja kein mit nach nicht noch nur oder sein sich
sie sind so uber um und uns von vor war was wie wir zu zum zur
kann konnen wird werden wurde habe hatte wer wo warum dieser diese dieses ihm ihn ihnen mir mich
au aux avec ce ces dans de des du elle en est et il ils je la le les leur lui mais me meme
mes moi mon ne nos notre nous on ou par pas pour qu que qui sa se ses son sur ta te tes toi
ton tu un une vos votre vous
peut sont ont ete etre avoir cette cet quoi comment pourquoi
al algo como con del el ella ellos entre era es esta este esto fue ha hay la las le les lo
los mas me mi muy no nos o para pero por que se sin sobre su sus te tu un una uno y ya
ai alla anche che chi con da dal dei della delle di e gli ha il io la le lei lo loro lui ma
mi ne nei nel noi non per piu quella quello questa questo se si sono su sua suo ti tra un
uno una
ao aos as com da das de do dos ela ele em entre era esta eu foi ha isso mais mas na nas nao
no nos num numa o os ou para pela pelo por qual quando que se sem seu sua tem um uma voce
aan al bij dat de den der des die dit door een en er het hij hoe ik in is je maar met naar
niet of om ook op te tot uit van voor was wat wij zij zijn
""".split())


def names_in(words: Sequence[str], language: str | None) -> list[str]:
    """The query words that name something (a product, a place, a program), as typed:
    written with a capital after the first letter ("iPhone", "WordPress") or in capitals
    ("RPM", "CSS") in any language, and in a language of _CAPITALS_MARK_NAMES also with a
    capital first, except at the start of a sentence ("Kubernetes", "Lisbon")."""
    names = []
    for i, typed in enumerate(words):
        word = typed.strip(_EDGE_PUNCTUATION)
        if len(word) < 2 or not word[0].isalpha():
            continue
        sentence_start = i == 0 or words[i - 1].rstrip("\"'”’»)").endswith(_SENTENCE_END)
        capital_inside = any(c.isupper() for c in word[1:])
        capitalised = word[0].isupper() and not sentence_start and language in _CAPITALS_MARK_NAMES
        if capital_inside or capitalised:
            names.append(word)
    return names


def tokenize(text: str) -> list[Token]:
    """The terms of `text` in order, each with its offsets and (for identifiers) parts."""
    return list(iter_tokens(text))


def iter_tokens(text: str) -> Iterator[Token]:
    """tokenize's terms one at a time, for a reader that stops at the first it wants."""
    at = 0
    # Spaceless runs first: `\w` also matches Han and Thai, which must become bigrams.
    for run in _SPACELESS_RUN.finditer(text):
        yield from _words(text, at, run.start())
        yield from _bigrams(run.group(), run.start())
        at = run.end()
    yield from _words(text, at, len(text))


def _words(text: str, start: int, end: int) -> Iterator[Token]:
    return (_word_token(m.group(), m.start()) for m in _WORD.finditer(text, start, end))


def index_terms(text: str) -> list[str]:
    """Every term the keyword index stores for `text`: whole words and identifier parts."""
    terms: list[str] = []
    at = 0
    for run in _SPACELESS_RUN.finditer(text):
        _word_terms(text, at, run.start(), terms)
        terms.extend(t.term for t in _bigrams(run.group(), run.start()))
        at = run.end()
    _word_terms(text, at, len(text), terms)
    return terms


def _word_terms(text: str, start: int, end: int, terms: list[str]) -> None:
    """index_terms' fast path: plain words skip building Token objects."""
    for match in _WORD.finditer(text, start, end):
        raw = match.group()
        if _is_plain(raw):
            terms.append(fold(raw))
        else:
            token = _word_token(raw, 0)
            terms.append(token.term)
            terms.extend(p.term for p in token.parts)


def _bigrams(run: str, offset: int) -> list[Token]:
    if len(run) == 1:
        return [Token(fold(run), offset, offset + 1)]
    return [Token(fold(run[i : i + 2]), offset + i, offset + i + 2) for i in range(len(run) - 1)]


def _word_token(raw: str, offset: int) -> Token:
    if _is_plain(raw):
        return Token(fold(raw), offset, offset + len(raw))
    pieces = _pieces(raw)
    if len(pieces) <= 1:
        return Token(fold(raw), offset, offset + len(raw))
    whole = fold(_JOINER_RUN.sub("_", raw))  # "iPhone" stays "iphone", "FA-1" is "fa_1"
    parts = tuple(Token(fold(p), offset + at, offset + at + len(p)) for at, p in pieces)
    return Token(whole, offset, offset + len(raw), parts)


@lru_cache(maxsize=65536)  # words repeat; the check walks every letter of the word
def _is_plain(raw: str) -> bool:
    """A word with no parts: letters in one case (or capitalised), or only digits; the common case."""
    if raw.isdigit():
        return True
    return raw.isalpha() and (raw.isupper() or not any(c.isupper() for c in raw[1:]))


def _pieces(raw: str) -> list[tuple[int, str]]:
    """(offset, text) of an identifier's parts; one piece for a plain word."""
    pieces: list[tuple[int, str]] = []
    at = 0
    for chunk in _JOINER_RUN.split(raw):
        at = raw.index(chunk, at) if chunk else at
        start = 0
        for cut in [m.start() for m in _CASE_DIGIT.finditer(chunk)] + [len(chunk)]:
            if cut > start:
                pieces.append((at + start, chunk[start:cut]))
            start = cut
        at += len(chunk)
    return pieces
