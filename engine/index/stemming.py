"""Word stems for keyword matching: "boxes" finds "box", "Rechnungen" finds "Rechnung".

    >>> stem("arrows", "en"), stem("rechnungen", "de"), stem("arrows", None)
    ('arrow', 'rechnung', 'arrows')
    >>> stem("fa_2024_5521", "en")                  # identifiers and numbers stay whole
    'fa_2024_5521'

Snowball stemmers, one per language they exist for; other languages, and text whose
language is unknown, keep their words as they are. The `snowballstemmer` package (pure
Python, BSD licence) hands them out from PyStemmer (the same algorithms compiled, BSD and
MIT) when that is installed, as the lock installs it: a word takes ~1 µs there against
40-130 µs in Python, which a search pays for every word of the passages it highlights
before the cache holds them. Both give the same stems (tests/engine/test_keyword_stems.py),
so a keyword file made with one is read with the other. A stem is made from the folded
term (engine.index.keyword_tokens), the same way for a passage and a query, so "Größe"
and "grosse" share a stem; folding leaves some suffix rules unused ("ité" is "ite"),
which stems a little less, never wrongly apart. Only letters are stemmed: identifiers,
their parts' numbers and CJK bigrams are not words with endings.
"""

from __future__ import annotations

import threading
from functools import lru_cache

# ISO 639-1 codes (engine.langid) -> Snowball's algorithm names.
_ALGORITHMS = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "cs": "czech", "da": "danish",
    "nl": "dutch", "en": "english", "eo": "esperanto", "et": "estonian", "fi": "finnish", "fr": "french",
    "de": "german", "el": "greek", "hi": "hindi", "hu": "hungarian", "id": "indonesian", "ga": "irish",
    "it": "italian", "lt": "lithuanian", "ne": "nepali", "no": "norwegian", "nb": "norwegian",
    "nn": "norwegian", "fa": "persian", "pl": "polish", "pt": "portuguese", "ro": "romanian",
    "ru": "russian", "sr": "serbian", "st": "sesotho", "es": "spanish", "sv": "swedish", "ta": "tamil",
    "tr": "turkish", "yi": "yiddish",
}

# A Snowball stemmer keeps the word it works on in its own fields: one per thread.
_local = threading.local()


def stems(language: str | None) -> bool:
    """Whether words of `language` (ISO 639-1, None: unknown) are stemmed."""
    return language in _ALGORITHMS


def stem(term: str, language: str | None) -> str:
    """The stem of a folded term in `language`; the term itself where nothing is stemmed."""
    algorithm = _ALGORITHMS.get(language)  # type: ignore[arg-type]
    if algorithm is None or not term.isalpha():
        return term
    return _stem(algorithm, term)


@lru_cache(maxsize=200_000)  # words repeat; ~1 µs a stem compiled, 40-130 µs in pure Python
def _stem(algorithm: str, word: str) -> str:
    stemmers = getattr(_local, "stemmers", None)
    if stemmers is None:
        stemmers = _local.stemmers = {}
    stemmer = stemmers.get(algorithm)
    if stemmer is None:
        import snowballstemmer  # here: without PyStemmer its 36 Python modules take ~25 ms to import

        stemmer = stemmers[algorithm] = snowballstemmer.stemmer(algorithm)
    return stemmer.stemWord(word)
