"""The languages Babelfind tells apart, by ISO 639-1 code, and checks of user-typed codes.

    >>> check_language("DE")
    'de'
    >>> check_language("german")
    Traceback (most recent call last):
    engine.errors.InputError: unknown language 'german'; did you mean 'de' (German)?

The table holds exactly the codes `engine.langid` can give a passage (py3langid's labels
after folding, plus zh/ja/ko decided by script), so a filter on any other code could only
ever match nothing. Nothing here loads a model: checks cost microseconds.
"""

from __future__ import annotations

import difflib
import unicodedata

from engine.errors import InputError

# code: (English name and other names people type, ISO 639-2/3 codes: T first, then B)
_TABLE: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "af": (("Afrikaans",), ("afr",)), "am": (("Amharic",), ("amh",)),
    "an": (("Aragonese",), ("arg",)), "ar": (("Arabic", "العربية"), ("ara",)),
    "as": (("Assamese",), ("asm",)), "az": (("Azerbaijani", "Azeri"), ("aze",)),
    "ba": (("Bashkir",), ("bak",)), "be": (("Belarusian",), ("bel",)),
    "bg": (("Bulgarian",), ("bul",)), "bn": (("Bengali", "Bangla"), ("ben",)),
    "br": (("Breton",), ("bre",)), "bs": (("Bosnian",), ("bos",)),
    "ca": (("Catalan", "Català"), ("cat",)), "cs": (("Czech", "Čeština"), ("ces", "cze")),
    "cy": (("Welsh", "Cymraeg"), ("cym", "wel")), "da": (("Danish", "Dansk"), ("dan",)),
    "de": (("German", "Deutsch"), ("deu", "ger")), "dz": (("Dzongkha",), ("dzo",)),
    "el": (("Greek", "Ελληνικά"), ("ell", "gre")), "en": (("English",), ("eng",)),
    "eo": (("Esperanto",), ("epo",)), "es": (("Spanish", "Castilian", "Español"), ("spa",)),
    "et": (("Estonian", "Eesti"), ("est",)), "eu": (("Basque", "Euskara"), ("eus", "baq")),
    "fa": (("Persian", "Farsi"), ("fas", "per")), "ff": (("Fula", "Fulah"), ("ful",)),
    "fi": (("Finnish", "Suomi"), ("fin",)), "fo": (("Faroese",), ("fao",)),
    "fr": (("French", "Français"), ("fra", "fre")), "fy": (("Western Frisian", "Frisian"), ("fry",)),
    "ga": (("Irish", "Gaeilge"), ("gle",)), "gd": (("Scottish Gaelic", "Gaelic"), ("gla",)),
    "gl": (("Galician",), ("glg",)), "gn": (("Guarani",), ("grn",)),
    "gu": (("Gujarati",), ("guj",)), "ha": (("Hausa",), ("hau",)),
    "he": (("Hebrew", "עברית"), ("heb",)), "hi": (("Hindi", "हिन्दी"), ("hin",)),
    "hr": (("Croatian", "Hrvatski"), ("hrv",)), "ht": (("Haitian Creole", "Haitian"), ("hat",)),
    "hu": (("Hungarian", "Magyar"), ("hun",)), "hy": (("Armenian",), ("hye", "arm")),
    "id": (("Indonesian", "Bahasa Indonesia"), ("ind",)), "ig": (("Igbo",), ("ibo",)),
    "is": (("Icelandic", "Íslenska"), ("isl", "ice")), "it": (("Italian", "Italiano"), ("ita",)),
    "ja": (("Japanese", "日本語"), ("jpn",)), "jv": (("Javanese",), ("jav",)),
    "ka": (("Georgian",), ("kat", "geo")), "ki": (("Kikuyu", "Gikuyu"), ("kik",)),
    "kk": (("Kazakh",), ("kaz",)), "km": (("Khmer", "Cambodian"), ("khm",)),
    "kn": (("Kannada",), ("kan",)), "ko": (("Korean", "한국어"), ("kor",)),
    "ku": (("Kurdish",), ("kur",)), "ky": (("Kyrgyz", "Kirghiz"), ("kir",)),
    "la": (("Latin",), ("lat",)), "lb": (("Luxembourgish",), ("ltz",)),
    "lg": (("Ganda", "Luganda"), ("lug",)), "ln": (("Lingala",), ("lin",)),
    "lo": (("Lao",), ("lao",)), "lt": (("Lithuanian", "Lietuvių"), ("lit",)),
    "lv": (("Latvian", "Latviešu"), ("lav",)), "mg": (("Malagasy",), ("mlg",)),
    "mk": (("Macedonian",), ("mkd", "mac")), "ml": (("Malayalam",), ("mal",)),
    "mn": (("Mongolian",), ("mon",)), "mr": (("Marathi",), ("mar",)),
    "ms": (("Malay", "Bahasa Melayu"), ("msa", "may")), "mt": (("Maltese",), ("mlt",)),
    "my": (("Burmese", "Myanmar"), ("mya", "bur")), "ne": (("Nepali",), ("nep",)),
    "nl": (("Dutch", "Flemish", "Nederlands"), ("nld", "dut")),
    "nn": (("Norwegian Nynorsk", "Nynorsk"), ("nno",)),
    "no": (("Norwegian", "Norsk", "Norwegian Bokmål", "Bokmål"), ("nor", "nob", "nb")),
    "oc": (("Occitan",), ("oci",)), "om": (("Oromo",), ("orm",)),
    "or": (("Odia", "Oriya"), ("ori",)), "pa": (("Punjabi", "Panjabi"), ("pan",)),
    "pl": (("Polish", "Polski"), ("pol",)), "ps": (("Pashto", "Pushto"), ("pus",)),
    "pt": (("Portuguese", "Português"), ("por",)), "qu": (("Quechua",), ("que",)),
    "ro": (("Romanian", "Română"), ("ron", "rum")), "ru": (("Russian", "Русский"), ("rus",)),
    "rw": (("Kinyarwanda",), ("kin",)), "sa": (("Sanskrit",), ("san",)),
    "se": (("Northern Sami", "Sami"), ("sme",)), "si": (("Sinhala", "Sinhalese"), ("sin",)),
    "sk": (("Slovak", "Slovenčina"), ("slk", "slo")), "sl": (("Slovenian", "Slovene"), ("slv",)),
    "sn": (("Shona",), ("sna",)), "so": (("Somali",), ("som",)),
    "sq": (("Albanian", "Shqip"), ("sqi", "alb")), "sr": (("Serbian", "Српски"), ("srp",)),
    "st": (("Southern Sotho", "Sotho", "Sesotho"), ("sot",)), "sv": (("Swedish", "Svenska"), ("swe",)),
    "sw": (("Swahili", "Kiswahili"), ("swa", "swh")), "ta": (("Tamil",), ("tam",)),
    "te": (("Telugu",), ("tel",)), "tg": (("Tajik",), ("tgk",)),
    "th": (("Thai", "ไทย"), ("tha",)), "tk": (("Turkmen",), ("tuk",)),
    "tl": (("Tagalog", "Filipino"), ("tgl", "fil")), "tr": (("Turkish", "Türkçe"), ("tur",)),
    "tt": (("Tatar",), ("tat",)), "ug": (("Uyghur", "Uighur"), ("uig",)),
    "uk": (("Ukrainian", "Українська"), ("ukr",)), "ur": (("Urdu",), ("urd",)),
    "uz": (("Uzbek",), ("uzb",)), "vi": (("Vietnamese", "Tiếng Việt"), ("vie",)),
    "vo": (("Volapük",), ("vol",)), "wa": (("Walloon",), ("wln",)),
    "xh": (("Xhosa",), ("xho",)), "yo": (("Yoruba",), ("yor",)),
    "zh": (("Chinese", "Mandarin", "中文"), ("zho", "chi", "cmn")), "zu": (("Zulu",), ("zul",)),
}

LANGUAGE_CODES: frozenset[str] = frozenset(_TABLE)


def language_name(code: str) -> str:
    """The English name of a known code: language_name("de") == "German"."""
    return _TABLE[code][0][0]


def _fold(text: str) -> str:
    """Lower case without accents, so "Français", "francais" and "FRANCAIS" meet."""
    decomposed = unicodedata.normalize("NFKD", text.strip().casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _aliases() -> dict[str, str]:
    """Every name and three-letter code, folded, to its ISO 639-1 code."""
    aliases: dict[str, str] = {}
    for code, (names, codes) in _TABLE.items():
        for alias in names + codes:
            aliases.setdefault(_fold(alias), code)
    return aliases


_ALIASES = _aliases()


def check_language(text: str) -> str:
    """The ISO 639-1 code `text` names, lower case; InputError with a suggestion otherwise.

    Example: check_language(" FR ") == "fr"

    Raises:
        InputError: `text` is empty or not a code Babelfind detects; the message suggests
            the code when `text` is a name ("german"), an ISO 639-2/3 code ("deu"), a
            regional tag ("pt-BR") or a near miss ("germna").
    """
    folded = _fold(text)
    if folded in LANGUAGE_CODES:
        return folded
    if not folded:
        raise InputError("the language code is empty; give an ISO 639-1 code such as 'en'")
    suggestion = _suggest(folded)
    hint = (f"; did you mean '{suggestion}' ({language_name(suggestion)})?" if suggestion
            else "; give an ISO 639-1 code such as 'en', 'de' or 'zh'")
    raise InputError(f"unknown language {text.strip()!r}{hint}")


def tatoeba_code_for(text: str, available) -> str | None:
    """The ISO 639-3 code among `available` for a language code or name, else None.

    Example: tatoeba_code_for("de", {"deu", "fra"}) == "deu"; "german" gives "deu" too.
    """
    folded = _fold(text)
    code = folded if folded in LANGUAGE_CODES else _ALIASES.get(folded)
    if code is None:
        return None
    return next((c for c in _TABLE[code][1] if c in available), None)


def suggested_code(text: str) -> str | None:
    """The code a name, a three-letter code or a near miss stands for; None when unclear.

    Example: suggested_code("german") == "de"; suggested_code("deu") == "de"
    """
    return _suggest(_fold(text))


def _suggest(folded: str) -> str | None:
    if folded in _ALIASES:
        return _ALIASES[folded]
    base = folded.replace("_", "-").split("-", 1)[0]  # "pt-br" -> "pt"
    if base != folded and (base in LANGUAGE_CODES or base in _ALIASES):
        return base if base in LANGUAGE_CODES else _ALIASES[base]
    if len(folded) < 4:  # a short typo is as close to many codes as to one: no guess
        return None
    close = difflib.get_close_matches(folded, list(_ALIASES), n=1, cutoff=0.8)
    return _ALIASES[close[0]] if close else None
