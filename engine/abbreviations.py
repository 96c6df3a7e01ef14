"""Abbreviations that end in a period but do not end a sentence, per language.

Only what `engine.segment` needs: a period after one of these words, followed by a
capitalised word, is not a sentence end ("Dr. Smith", "z.B. Hunde", "Sr. García").
Words that very often *do* end a sentence ("etc.", "usw.", "и др.") are left out on
purpose: a missed split costs less than a passage cut in the middle of a sentence,
but "etc." ends sentences far more often than it precedes a name.

Single letters ("J. R. R. Tolkien", "M. Dupont") and dotted forms ("e.g", "z.B",
"U.S") are recognised by pattern in `engine.segment`, so they are not listed here.
All entries are lowercase and without the final period.
"""

from __future__ import annotations

# Safe everywhere: none of these is also a common word in another language.
_COMMON = {
    "mr", "mrs", "ms", "messrs", "dr", "drs", "prof", "profs", "sr", "sra", "srta",
    "st", "mt", "ft", "vs", "cf", "viz", "dept", "univ", "inc", "ltd", "corp",
    "jan", "feb", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    "gen", "col", "lt", "sgt", "capt", "cmdr", "adm", "rev", "al", "ed", "eds",
}
# Left out although they are abbreviations: "Jr.", "гг.", "a.C.", "p.m." and the like
# end sentences more often than they precede a capitalised word.

ABBREVIATIONS: dict[str, frozenset[str]] = {
    "en": frozenset(_COMMON),
    "de": frozenset({
        "bzw", "ca", "hr", "hrn", "fr", "vgl", "sog", "ggf", "evtl", "inkl", "zzgl", "bzgl",
        "mio", "mrd", "jh", "jhd", "geb", "gest", "bspw", "tel", "dipl", "ing", "str",
        "zb", "dh", "od", "ua", "usf", "ehem", "allg", "betr", "hl",
    }),
    "fr": frozenset({"mme", "mmes", "mlle", "mlles", "pr", "ste", "env", "av", "bd", "éd"}),
    "es": frozenset({
        "sres", "sras", "dra", "ud", "uds", "vd", "vds", "pág", "págs", "aprox", "avda",
        "lic", "ing", "arq", "gral", "dña", "cía",
    }),
    "it": frozenset({"sig", "sigg", "sigra", "dott", "dottssa", "avv", "ing", "pag", "geom"}),
    "pt": frozenset({"profa", "pág", "págs", "av", "eng", "exmo", "exma", "sto", "sta"}),
    "nl": frozenset({"dhr", "mevr", "ir", "ing", "bijv", "resp", "ca", "evt", "mw"}),
    "ru": frozenset({
        "тыс", "млн", "млрд", "руб", "коп", "ул", "проф", "акад", "стр",
        "рис", "табл", "напр", "пр", "доц", "канд", "рус", "англ", "обл", "пос",
    }),
    "pl": frozenset({"mgr", "inż", "ul", "tys", "mln", "mld", "wg", "św", "godz", "np", "tzw"}),
    "tr": frozenset({"doç", "yrd", "örn", "bkz", "sf"}),
    "el": frozenset({"δηλ", "σελ", "βλ", "αρ", "κκ"}),
    "hi": frozenset({"डॉ", "प्रो", "पृ", "सं"}),
}

# Also words in some other language ("ok" in Polish means "about", in English it is
# "okay"), so they count only when the caller names that language.
AMBIGUOUS: dict[str, frozenset[str]] = {
    "en": frozenset({"no", "nos", "vol", "fig", "figs", "eq", "eqs", "est", "co"}),
    "pl": frozenset({"ok", "ryc", "por"}),
    "ru": frozenset({"др", "им", "см"}),
    "es": frozenset({"núm", "cap"}),
    "it": frozenset({"ecc"}),
    "fr": frozenset({"etc", "mm"}),
}

# Before a number these are abbreviations in every language ("Nr. 5", "S. 12", "Fig. 3").
BEFORE_NUMBER = frozenset({
    "no", "nos", "nr", "nrn", "art", "abs", "fig", "figs", "vol", "vols", "p", "pp", "s",
    "ss", "ch", "chap", "sec", "eq", "eqs", "tab", "bd", "hft", "ziff", "n", "núm", "num",
    "nº", "op", "kap", "abb", "anm", "fn", "ca", "approx", "str", "ok", "ur", "col", "ref",
})

# Words that follow an ordinal written "3." ("3. Oktober", "20. Jahrhundert"): a date
# or ordinal, not a sentence that ends in "3". Used for every language.
AFTER_ORDINAL = frozenset({
    "januar", "jänner", "februar", "märz", "april", "mai", "juni", "juli", "august",
    "september", "oktober", "november", "dezember", "marts", "maj", "desember", "december",
    "januari", "februari", "maart", "mars", "augusti",
    "tammikuuta", "helmikuuta", "maaliskuuta", "huhtikuuta", "toukokuuta", "kesäkuuta",
    "heinäkuuta", "elokuuta", "syyskuuta", "lokakuuta", "marraskuuta", "joulukuuta",
    "jahrhundert", "jahrhunderts", "jahrhunderte", "jahrtausend", "jahrtausends",
    "geburtstag", "jahrestag", "todestag", "auflage", "platz", "klasse", "liga",
})

# Languages that write every ordinal as a number with a period ("am 3. Mai", "16.
# Jahrhundert", "III. Napolyon"): there a number or Roman numeral before ". Capital"
# is taken as an ordinal. Only when the caller names the language, because in English
# "He scored 20. Then..." ends a sentence.
ORDINAL_PERIOD_LANGUAGES = frozenset({
    "de", "tr", "pl", "cs", "sk", "hu", "da", "no", "nb", "nn", "fi", "sl", "hr", "sr",
    "bs", "et", "lv", "lt", "is", "fo",
})

# Abbreviations that end sentences often (eras, clock times): followed by a capital
# they split, even though they are dotted or end in a single letter, which would
# otherwise read as "z.B." or an initial. Matched against the text before the period.
SENTENCE_FINAL_PATTERN = (
    r"(?:\b[aAdD]\.\s?C|\b[aA]\.\s?D|\bB\.\s?C(?:\.\s?E)?|\bC\.\s?E|\b[aApP]\.\s?m"
    r"|\bн\.\s?э|\b[vn]\.\s?Chr|\b(?:[ap]\.\s?)?e\.\s?[vc]|\b[ad]\.\s?e\.\s?c)$"
)

_DEFAULT = frozenset().union(*ABBREVIATIONS.values())


def abbreviations_for(language: str | None) -> frozenset[str]:
    """The abbreviation set for an ISO 639-1 code, or the safe union for None/unknown.

    Example: "ok" in abbreviations_for("pl") and "ok" not in abbreviations_for(None)
    """
    if language is None:
        return _DEFAULT
    return _DEFAULT | AMBIGUOUS.get(language, frozenset())
