"""Language identification: ISO 639-1 codes for passages and documents, offline.

Uses py3langid's bundled naive Bayes model (no download). Two things are added on
top: its dialect and regional labels are folded into the ISO 639-1 language people
search in ("yue" -> "zh", "arz" -> "ar"), and text written mostly in Han, kana or
Hangul is decided by script, which is certain where the model confuses short
Chinese and Japanese sentences.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
import zipfile
from array import array
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from engine.atomic import atomic_file
from engine.errors import InputError, ModelError

log = logging.getLogger(__name__)

# Below this normalised probability the model is guessing and the caller gets None:
# gibberish, code and bare names score under 0.15, while on Tatoeba sentences of 15
# languages only ~0.5% of the right answers fall under 0.2 (see tests/engine/test_langid.py).
MIN_CONFIDENCE = 0.2
# Letters needed before any guess; Han, kana and Hangul count twice (a syllable or a
# word each), so "你好" is enough and "ok" is not.
MIN_LETTER_WEIGHT = 4
# Longer texts are judged on this many characters from their start, middle and end;
# py3langid reads about 0.5 MB/s and more text does not change the answer.
SAMPLE_CHARS = 3000
# Chinese never writes hiragana, but it does write katakana brand names ("ソニー"), so
# katakana alone makes text Japanese only from this share of its Han + katakana.
MIN_KATAKANA_SHARE = 0.25
# Korean mixed script (hanja) still has this share of Hangul among its CJK letters.
MIN_HANGUL_SHARE = 0.2
# A passage takes its document's language when the model gives that language at least
# this share of its own pick's probability, or at least DOCUMENT_FLOOR while its pick is
# under UNSURE (passage_languages). On the dev-set folders, mislabelled English passages
# (names, code, figures) give English 0.04-0.4 and their pick 0.2-0.55; an English
# paragraph in a Spanish or Russian chapter gives Spanish or Russian under 0.04 and
# English 0.8-1.0.
DOCUMENT_SHARE = 0.2
UNSURE = 0.5
DOCUMENT_FLOOR = 0.05

# py3langid labels outside ISO 639-1, folded into the language they are closest to
# for search (dialects, regional languages, creoles); their probabilities are added
# to that language's before the best is chosen.
_FOLD = {
    "ary": "ar", "arz": "ar", "wuu": "zh", "yue": "zh", "uzs": "uz", "sdh": "ku",
    "kik": "ki", "fuv": "ff", "gug": "gn", "hbo": "he", "grc": "el", "pcm": "en",
    "ltg": "lv", "ext": "es", "lij": "it", "vec": "it", "gcf": "fr", "gcr": "fr",
}
# Labels with no ISO 639-1 language to fold into; when one of them wins the text is
# reported as unknown rather than mislabelled. "zxx" means "no linguistic content".
_NO_ISO_639_1 = frozenset({"zxx", "ace", "bcl", "gom", "nso", "crh", "guw", "kab"})

_LETTER = re.compile(r"[^\W\d_]")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")
_HIRAGANA = re.compile(r"[\u3041-\u309f]")
# Katakana (not U+30FB "・", which Chinese uses too) and half-width katakana.
_KATAKANA = re.compile(r"[\u30a0-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_HANGUL = re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")
# Addresses are language-less and long; they would outvote a short sentence. Every
# alternative is anchored (a literal, or a token start for e-mail) so that a long run
# without spaces costs linear time, not quadratic.
_NOISE = re.compile(r"https?://\S+|www\.\S+|(?<!\S)[^\s@]+@\S+")

_identifier = None
_identifier_lock = threading.Lock()
_copy_folder: Path | None = None  # keep_model_copy_in


def load_language_model() -> None:
    """Loads the language model now (about 0.6 s) rather than at the first passage or query
    that needs it: the window's warm-up (Library.warm_up). Raises ModelError as the first
    use would."""
    _get_identifier()


def _get_identifier():
    """The py3langid model, loaded once per process (about 0.6 s), shared by threads.

    Classification only reads the model's arrays, so one instance serves all threads.
    """
    global _identifier
    if _identifier is None:
        with _identifier_lock:
            if _identifier is None:
                _identifier = _load_identifier()
    return _identifier


def keep_model_copy_in(folder: Path) -> None:
    """Keeps a faster copy of the language model in `folder` (Library.open: the home's
    cache folder), for a process that has not loaded it yet.

    py3langid ships its model xz-compressed: 0.7 s to read, a quarter of a command-line
    search. The copy holds the same arrays zlib-compressed (8 MB) and reads in 0.16 s
    (docs/benchmarks.md, "Language model start-up"); it is named after py3langid's
    version, and a copy that fails to read is replaced from the shipped model.
    """
    global _copy_folder
    _copy_folder = Path(folder)


def _load_identifier():
    try:
        import py3langid
        from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier
    except ImportError as e:
        raise ModelError("the language identifier (py3langid) is not installed") from e
    version = getattr(py3langid, "__version__", None)  # the copy is of this version's model layout
    copy = None if _copy_folder is None or version is None else _copy_folder / f"py3langid-{version}.npz"
    identifier = None if copy is None else _read_copy(copy, LanguageIdentifier)
    if identifier is None:
        try:
            identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        except (OSError, ValueError, KeyError, EOFError) as e:
            raise ModelError(f"cannot load the language model: {e}", MODEL_DIR / MODEL_FILE) from e
        if copy is not None:
            _write_copy(copy, identifier)
    log.debug("language model loaded: %d labels", len(identifier.labels))
    return identifier


# The model as py3langid's LanguageIdentifier holds it: its constructor's arguments.
_COPY_ARRAYS = ("nb_ptc", "nb_pc", "nb_classes", "tk_nextmove", "tk_row", "tk_output")


def _read_copy(path: Path, identifier_class):
    """The identifier built from the copy at `path`, or None (no copy, or one that fails)."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            a = {name: data[name] for name in _COPY_ARRAYS}
        return identifier_class(a["nb_ptc"], a["nb_pc"], a["nb_classes"].tolist(), _stdlib_array(a["tk_nextmove"]),
                                a["tk_output"].tolist(), norm_probs=True, tk_row=_stdlib_array(a["tk_row"]))
    except (OSError, ValueError, KeyError, EOFError, TypeError, zipfile.BadZipFile) as e:
        log.info("the language model's copy %s cannot be read (%s); reading the shipped model", path, e)
        return None


def _write_copy(path: Path, identifier) -> None:
    """Saves the identifier's arrays at `path`; a failure only costs the next start 0.5 s."""
    try:
        arrays = {name: np.asarray(getattr(identifier, name)) for name in _COPY_ARRAYS}
        with atomic_file(path) as f:
            np.savez_compressed(f, **arrays)
    except (OSError, AttributeError) as e:  # AttributeError: a py3langid that holds its model otherwise
        log.info("cannot keep a copy of the language model at %s: %s", path, e)


def _stdlib_array(values: np.ndarray) -> array:
    """py3langid walks its tables as stdlib arrays of the stored width ('H', 'I')."""
    out = array(values.dtype.char)
    out.frombytes(memoryview(np.ascontiguousarray(values)).cast("B"))  # no third copy at the peak
    return out


def detect_language(text: str) -> str | None:
    """ISO 639-1 code of `text`, or None when it is too short, letterless or unclear.

    Example: detect_language("Das ist ein kleiner Test.") == "de"

    Raises:
        InputError: `text` is not a str.
        ModelError: the bundled model cannot be loaded.
    """
    if not isinstance(text, str):
        raise InputError(f"text must be a str, not {type(text).__name__}")
    return _read(text).language


class _Reading(NamedTuple):
    """What the identifier made of one text."""

    language: str | None
    by_model: bool  # the model decided (not the script, nor too few letters to judge)
    folded: dict[str | None, float] | None  # the model's folded probabilities, where it needed them


def _read(text: str) -> _Reading:
    text = _prepared(text)
    letters = len(_LETTER.findall(text))
    han, hiragana, katakana, hangul = (
        len(p.findall(text)) for p in (_HAN, _HIRAGANA, _KATAKANA, _HANGUL)
    )
    cjk = han + hiragana + katakana + hangul
    if letters + cjk < MIN_LETTER_WEIGHT:
        return _Reading(None, False, None)
    if 2 * cjk >= letters:
        return _Reading(_cjk_language(han, hiragana, katakana, hangul), False, None)
    return _model_reading(text)


def _prepared(text: str) -> str:
    """What the model reads of `text`: a sample of a long one, addresses taken out."""
    return _NOISE.sub(" ", _sample(text))


def _sample(text: str) -> str:
    if len(text) <= SAMPLE_CHARS:
        return text
    third = SAMPLE_CHARS // 3
    middle = len(text) // 2 - third // 2
    return " ".join((text[:third], text[middle : middle + third], text[-third:]))


def _cjk_language(han: int, hiragana: int, katakana: int, hangul: int) -> str:
    """Korean if it has a fair share of Hangul, Japanese if it has kana, else Chinese."""
    if hangul >= MIN_HANGUL_SHARE * (han + hiragana + katakana + hangul):
        return "ko"
    if hiragana or katakana >= MIN_KATAKANA_SHARE * (han + katakana):
        return "ja"
    return "zh"


def _model_language(text: str) -> str | None:
    """The model's best ISO 639-1 language after folding dialects, if confident.

    Fast path: a label above 0.5 wins whatever is folded, since everything else
    together holds less than 0.5 (and 0.5 > MIN_CONFIDENCE); only closer calls need
    the full ranking. Same answers, about half the time per passage.
    """
    return _model_reading(text).language


def _model_reading(text: str) -> _Reading:
    label, probability = _get_identifier().classify(text)
    if probability > 0.5:
        return _Reading(iso_639_1(label), True, None)
    folded = _folded_probabilities(text)
    return _Reading(_confident(folded), True, folded)


def _folded_language(text: str) -> str | None:
    """Sum the probabilities of labels that share an ISO 639-1 code, then pick the best."""
    return _confident(_folded_probabilities(text))


def _confident(folded: dict[str | None, float]) -> str | None:
    """The likeliest language, if the model gives it MIN_CONFIDENCE."""
    best = max(folded, key=folded.__getitem__)
    if best is None or folded[best] < MIN_CONFIDENCE:
        return None
    return best


def _folded_probabilities(text: str) -> dict[str | None, float]:
    """The model's probability of each ISO 639-1 language (None: labels that have none)."""
    folded: dict[str | None, float] = defaultdict(float)
    for label, probability in _get_identifier().rank(text):
        folded[iso_639_1(label)] += probability
    return folded


@functools.cache
def iso_639_1(label: str) -> str | None:
    """Map a py3langid label to ISO 639-1, or None where no such language exists.

    Example: iso_639_1("yue") == "zh"; iso_639_1("de") == "de"; iso_639_1("zxx") is None
    """
    if label in _NO_ISO_639_1:
        return None
    label = _FOLD.get(label, label)
    return label if len(label) == 2 else None


def detect_languages(texts: Sequence[str]) -> list[str | None]:
    """`detect_language` for each text, in order.

    Example: detect_languages(["Hello there, friend.", "你好"]) == ["en", "zh"]

    Raises:
        InputError: `texts` is a single str (a sequence of characters) or holds a non-str.
    """
    if isinstance(texts, str):
        raise InputError("detect_languages takes a sequence of texts, not one str")
    return [detect_language(text) for text in texts]


def passage_languages(texts: Sequence[str]) -> list[str | None]:
    """The language of each passage of one document, read with the document's.

    On its own, a passage of bare names, code or figures gets a language from the model's
    long tail ("Falk Hueffner <falk@debian.org> (alpha-linux) Ray Dassen ..." is
    Luxembourgish to it, a valgrind table Volapük), and a Spanish heading ("Apéndice A.
    Técnicas avanzadas") Galician. So a passage the model puts in another language than
    its document's (`document_language` of the passages) takes the document's when the
    model finds that one nearly as likely (DOCUMENT_SHARE of the other's probability), or
    is unsure of its pick (under UNSURE) and gives the document's language DOCUMENT_FLOOR.
    A passage too unclear for any language alone (code, a copyright header: under
    MIN_CONFIDENCE) takes the document's where that is still the model's likeliest.
    An English paragraph in a Spanish chapter, of which the model is sure, stays English;
    a language decided by script (Chinese, Japanese, Korean) stays as it is.
    """
    if isinstance(texts, str) or not all(isinstance(text, str) for text in texts):
        raise InputError("passage_languages takes a sequence of str")
    readings = [_read(text) for text in texts]
    document = document_language([r.language for r in readings], [len(text) for text in texts])
    return [_in_document(text, reading, document) for text, reading in zip(texts, readings)]


def _in_document(text: str, reading: _Reading, document: str | None) -> str | None:
    """The passage's language once its document's is known: the document's where the
    model's own reading leans that way (passage_languages), else the reading's."""
    if document is None or not reading.by_model or reading.language == document:
        return reading.language
    folded = reading.folded or _folded_probabilities(_prepared(text))
    if reading.language is None:  # too unclear alone: the document's if still the likeliest
        return document if max(folded, key=folded.__getitem__) == document else None
    own, theirs = folded.get(reading.language, 0.0), folded.get(document, 0.0)
    if theirs >= DOCUMENT_SHARE * own or (own < UNSURE and theirs >= DOCUMENT_FLOOR):
        return document
    return reading.language


def document_language(
    passage_languages: Sequence[str | None], passage_lengths: Sequence[int]
) -> str | None:
    """The language holding the most characters among the passages that have one.

    Example: document_language(["en", "de", "de", None], [100, 40, 30, 500]) == "en"

    Ties go to the language met first. None when no passage has a language.

    Raises:
        InputError: the two sequences differ in length, or a length is negative.
    """
    if len(passage_languages) != len(passage_lengths):
        raise InputError(
            f"{len(passage_languages)} languages but {len(passage_lengths)} lengths"
        )
    weights: dict[str, int] = {}
    for language, length in zip(passage_languages, passage_lengths):
        if length < 0:
            raise InputError(f"passage lengths must be >= 0, got {length}")
        if language is not None:
            weights[language] = weights.get(language, 0) + length
    if not weights:
        return None
    return max(weights, key=weights.__getitem__)  # max keeps the first of equal weights
