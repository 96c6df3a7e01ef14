"""Language names for ISO 639-1 codes, from Qt's locale tables (no list of our own).

    >>> language_name("el"), language_label("ko")
    ('Greek', 'Korean (ko)')
"""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QLocale


@lru_cache(maxsize=512)
def language_name(code: str) -> str:
    """English name of language `code`; the code itself when Qt does not know it.

    Example: language_name("fi") == "Finnish"; language_name("xx") == "xx"
    """
    if not code:
        return "Unknown language"
    language = QLocale(code).language()
    if language in (QLocale.Language.C, QLocale.Language.AnyLanguage):
        return code
    # QLocale("xx") falls back to C; a code Qt maps elsewhere must round-trip
    if QLocale.languageToCode(language, QLocale.LanguageCodeType.ISO639Part1) not in ("", code):
        return code
    return QLocale.languageToString(language)


def language_label(code: str) -> str:
    """Name and code, as shown in the language filter and the result badge's tip.

    Example: language_label("el") == "Greek (el)"; language_label("") == "Unknown language"
    """
    name = language_name(code)
    return name if name in (code, "Unknown language") else f"{name} ({code})"
