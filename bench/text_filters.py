"""The cleaning that the reference sentences and the translation pairs share.

    >>> clean_message("_Open the file “%s”?")        # None: a placeholder makes it a fragment
    >>> clean_message("Could not open the &file.")   # 'Could not open the file.'
    >>> script_shares("Привет, мир!")                # {'CYRILLIC': 1.0}

Program messages are full of things that are not prose: printf and format codes,
markup, keyboard accelerators, paths and addresses. Accelerators are marks inside a word
and are removed; anything else makes the message a template rather than a sentence, and
it is dropped.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter

# Accelerator marks before a letter: GTK "_Open", Qt/KDE "&Open", LibreOffice "~Open".
_ACCELERATOR = re.compile(r"[_&~](?=\w)")
# Format codes, markup, escapes, variables, paths, addresses: the message is a template.
_TEMPLATE = re.compile(
    r"%[-+#0-9.*]*[a-zA-Z]|%\(|\$[({\w]|\{|\}|<|>|\\|@|https?:|www\.|\w/\w|/\w+/|\|\||::"
    r"|\[[^\]]*\]|&\w+;|\w_\w|\bNULL\b|--\w"
    # numbered and LibreOffice-style placeholders: %1, #1, $1, "the XX library"
    r"|[%#$]\d|\bX{2,}\b|\bx{3,}\b"
)
# Sentence ends across scripts: . ! ? … and the full stops and question marks of CJK,
# Devanagari (।), Arabic (؟ ۔), Armenian (։ ՞), Ethiopic (። ፧), Myanmar (။), Khmer (។),
# Tibetan (།). Greek's question mark is ";" (or U+037E), which elsewhere ends a clause.
TERMINALS = ".!?…。！？।॥؟۔։՞።፧။។།\u037e"
QUESTION_MARKS = "?？؟՞፧\u037e"
_CLOSING = "\"'”’»)」』"
# Languages written without spaces between words: their length is counted in characters.
UNSPACED = frozenset({"zh", "ja", "th", "lo", "km", "my", "dz"})
# Spaces, and the Ethiopic word space "፡" that older Amharic text writes instead.
_WORD_SEPARATORS = re.compile(r"[\s\u1361]+")


def clean_message(text: str) -> str | None:
    """`text` without accelerators and with whitespace collapsed, or None for a template."""
    text = _ACCELERATOR.sub("", text.replace("\u00a0", " "))
    if _TEMPLATE.search(text):
        return None
    text = " ".join(text.split())
    return text or None


@functools.lru_cache(maxsize=4096)
def script_of(char: str) -> str | None:
    """The script of a letter by its Unicode name ("LATIN", "CYRILLIC", "CJK"...), None for a non-letter.

    Han, kana and Hangul count as one script, "CJK": Japanese mixes them, and
    engine.langid tells the three languages apart by script itself.
    """
    if not char.isalpha():
        return None
    name = unicodedata.name(char, "")
    if not name:
        return None
    first = name.split()[0]
    if first in ("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "IDEOGRAPHIC", "HALFWIDTH", "FULLWIDTH"):
        return "CJK" if first not in ("HALFWIDTH", "FULLWIDTH") or "LATIN" not in name else "LATIN"
    return first


def script_shares(text: str) -> dict[str, float]:
    """The share of each script among the letters of `text`."""
    counts = Counter(s for s in map(script_of, text) if s is not None)
    total = sum(counts.values())
    return {script: n / total for script, n in counts.most_common()} if total else {}


def main_scripts(texts_by_language: dict[str, list[str]]) -> dict[str, str]:
    """Each language's main script: the script of most letters over its texts."""
    scripts = {}
    for language, texts in texts_by_language.items():
        counts = Counter(s for text in texts for s in map(script_of, text) if s is not None)
        if counts:
            scripts[language] = counts.most_common(1)[0][0]
    return scripts


def in_script(text: str, script: str, share: float = 0.9) -> bool:
    """Whether at least `share` of the letters of `text` are in `script` (and it has letters)."""
    return script_shares(text).get(script, 0.0) >= share


def length_of(text: str, language: str) -> int:
    """Words, or for languages written without spaces, letters / 2 (about a word each)."""
    if language in UNSPACED:
        return sum(1 for c in text if c.isalpha()) // 2
    return len(_WORD_SEPARATORS.split(text.strip()))


def ends_sentence(text: str, language: str) -> bool:
    """Whether `text` ends with a sentence terminal (closing quotes and brackets allowed after it)."""
    last = text.rstrip(_CLOSING)[-1:]
    return bool(last) and (last in TERMINALS or (last == ";" and language == "el"))


def is_question(text: str, language: str) -> bool:
    last = text.rstrip(_CLOSING)[-1:]
    return bool(last) and (last in QUESTION_MARKS or (last == ";" and language == "el"))


def starts_sentence(text: str) -> bool:
    """A letter first (upper case where the script has case), or an opening quote then one.

    Georgian letters are lower case to Unicode (Mtavruli capitals exist but prose does
    not use them), so a Georgian sentence may start with one.
    """
    first = text.lstrip("\"'“‘«¿¡「『")[:1]
    return bool(first) and first.isalpha() and (not first.islower() or script_of(first) == "GEORGIAN")


def near_duplicate_key(text: str, language: str) -> frozenset[str]:
    """Word set (character bigrams for unspaced languages), digits and case ignored."""
    letters = "".join(c if c.isalpha() else " " for c in text.casefold())
    if language in UNSPACED:
        squeezed = letters.replace(" ", "")
        return frozenset(squeezed[i : i + 2] for i in range(len(squeezed) - 1))
    return frozenset(letters.split())


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0
