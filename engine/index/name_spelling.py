"""Whether a passage writes a name, as typed or respelt the way another language spells it.

A query may name what no passage of the library holds ("set up a WireGuard VPN"). Languages
written in Latin letters keep such a name, or respell it a little: "Brazil" is "Brasil" in
Portuguese and "Brésil" in French, "Canada" is "Kanada" in German, "Mexican" "mexicana" in
Spanish. So a Latin-script passage that writes nothing within a few letters of the name
does not speak of it (engine.search, SearchConfig.name_absent_floor), nor does a passage in
another script that writes other names in Latin letters (a Russian manual's "DESTDIR").
Where a script transliterates names ("Самсунг"), which no spelling distance reads, and the
passage holds no Latin words, it is not judged.

    >>> sorted(passages_that_may_name({1: "O Brasil e a Índia", 2: "RPMs e pacotes", 3: "Самсунг"}, ["Brazil", "RPM"]))
    [1, 3]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from engine.index.keyword_tokens import fold, index_terms

# A passage is in Latin script when at least this share of its letters are Latin.
LATIN_SHARE = 0.5
# Latin letters: Basic Latin to Latin Extended-B and IPA, and Latin Extended Additional (Vietnamese).
_LATIN_RANGES = ((0x41, 0x24F), (0x1E00, 0x1EFF))
# A passage in another script that holds this many distinct Latin words writes names in Latin.
LATIN_WORDS = 3
_LATIN_WORD = re.compile(r"\b[A-Za-z][A-Za-z]+\b")


def is_latin_script(text: str) -> bool:
    """Whether most letters of `text` are Latin (a passage with no letters is not)."""
    letters = [ord(ch) for ch in text if ch.isalpha()]
    if not letters:
        return False
    latin = sum(any(low <= code <= high for low, high in _LATIN_RANGES) for code in letters)
    return latin >= LATIN_SHARE * len(letters)


def allowed_edits(name: str) -> int:
    """How many letters a respelling may change: none in a short name ("RPM" is not "RAM"),
    one up to five letters, two from six ("Brazil" -> "Bresil", "Mexican" -> "mexicaine")."""
    return 0 if len(name) <= 3 else 1 if len(name) <= 5 else 2


def writes_names_in_latin(text: str) -> bool:
    """Whether a passage would write a name in Latin letters: it is in Latin script, or
    in another script but with Latin words among it (a Russian manual's "DESTDIR", "quilt")."""
    return is_latin_script(text) or len(set(_LATIN_WORD.findall(text))) >= LATIN_WORDS


def passages_that_may_name(texts: Mapping[int, str], names: Iterable[str]) -> set[int]:
    """The passages (keys of `texts`) that may speak of one of `names`: those that write
    one of them or respell it (folded terms, as the keyword index stores them), and
    those that would not write it in Latin letters, which may transliterate it."""
    words = {pid: set(index_terms(text)) for pid, text in texts.items() if writes_names_in_latin(text)}
    vocabulary = set().union(*words.values())
    spelt = set().union(*(respellings(fold(name), vocabulary) for name in names))
    return {pid for pid in texts if pid not in words or not words[pid].isdisjoint(spelt)}


def respellings(name: str, words: set[str]) -> set[str]:
    """The words of `words` that write `name` (folded) or respell it."""
    limit = allowed_edits(name)
    return {w for w in words if abs(len(w) - len(name)) <= limit and within_edits(name, w, limit)}


def within_edits(a: str, b: str, limit: int) -> bool:
    """Whether `a` becomes `b` with at most `limit` insertions, deletions or substitutions
    (Levenshtein distance, stopping as soon as every path exceeds the limit)."""
    if a == b:
        return True
    if limit == 0 or abs(len(a) - len(b)) > limit:
        return False
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if min(current) > limit:
            return False
        previous = current
    return previous[-1] <= limit
