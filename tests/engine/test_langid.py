"""Language identification: script rules, label folding, abstention, Tatoeba accuracy."""

from __future__ import annotations

import logging
import random
import threading

import pytest

from engine import langid
from engine.errors import InputError
from engine.langid import detect_language, detect_languages, document_language, iso_639_1, passage_languages


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The weather is lovely today and we are going to the beach.", "en"),
        ("Das Wetter ist heute schön und wir gehen an den Strand.", "de"),
        ("Il fait beau aujourd'hui et nous allons à la plage.", "fr"),
        ("Hace buen tiempo hoy y vamos a ir a la playa.", "es"),
        ("Сегодня хорошая погода, и мы идём на пляж.", "ru"),
        ("Σήμερα ο καιρός είναι ωραίος και πάμε στην παραλία.", "el"),
        ("الطقس جميل اليوم وسنذهب إلى الشاطئ.", "ar"),
        ("आज मौसम अच्छा है और हम समुद्र तट पर जा रहे हैं।", "hi"),
        ("Bugün hava çok güzel ve plaja gidiyoruz.", "tr"),
    ],
)
def test_common_languages(text, expected):
    assert detect_language(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("彼は手紙を書く。", "ja"),
        ("私は学生", "ja"),  # one hiragana among kanji is enough
        ("カタカナ", "ja"),
        ("我该去睡觉了。", "zh"),
        ("本当", "zh"),  # pure Han: Chinese, even where a Japanese reader would disagree
        ("你好", "zh"),
        ("我们买了ソニー的电视机，还有很多别的东西，都很便宜。", "zh"),  # a brand in katakana
        ("안녕하세요", "ko"),
        ("大韓民國은 民主共和國이다", "ko"),  # Hangul with hanja
    ],
)
def test_cjk_is_decided_by_script(text, expected):
    assert detect_language(text) == expected


def test_cjk_rule_only_applies_when_cjk_dominates():
    text = "The Japanese word ラーメン means a noodle soup that is popular everywhere."
    assert detect_language(text) == "en"


@pytest.mark.parametrize(
    "text", ["", "   ", "ok", "12345 678", "!!! ??? ...", "— • —", "x = f(y) + 3;", "asdkjh qwe zxcv"]
)
def test_too_short_letterless_or_unclear_text_is_none(text):
    assert detect_language(text) is None


def test_urls_and_emails_do_not_vote():
    text = "Wir treffen uns morgen früh. https://example.com/path/to/something-long info@example.org"
    assert detect_language(text) == "de"


def test_long_text_is_sampled_and_still_right():
    text = "Das ist ein ganz gewöhnlicher deutscher Satz über das Wetter. " * 2000
    assert len(langid._sample(text)) < langid.SAMPLE_CHARS + 10
    assert detect_language(text) == "de"


@pytest.mark.parametrize(
    ("label", "expected"),
    [("de", "de"), ("yue", "zh"), ("wuu", "zh"), ("arz", "ar"), ("ary", "ar"), ("pcm", "en"),
     ("zxx", None), ("kab", None), ("ace", None)],
)
def test_labels_map_to_iso_639_1(label, expected):
    assert iso_639_1(label) == expected


def test_every_model_label_maps_to_two_letters_or_none():
    labels = langid._get_identifier().labels
    mapped = {label: iso_639_1(label) for label in labels}
    assert all(code is None or (len(code) == 2 and code.isalpha()) for code in mapped.values())
    # only the listed labels lack a language; a new model label would show up here
    assert {label for label, code in mapped.items() if code is None} == set(langid._NO_ISO_639_1)


def test_dialect_probabilities_are_folded_before_choosing():
    # py3langid alone says Persian (fa 0.45) but Egyptian Arabic + Arabic hold 0.46
    text = "ادرس بجد و ستنجح."
    assert langid._get_identifier().classify(text)[0] == "fa"
    assert langid._folded_language(text) == "ar"
    assert detect_language(text) == "ar"


COMMON_SENTENCES = [
    "The weather is lovely today and we are going to the beach.",
    "Das Wetter ist heute schön und wir gehen an den Strand.",
    "Il fait beau aujourd'hui et nous allons à la plage.",
    "Hace buen tiempo hoy y vamos a ir a la playa.",
    "O tempo está bom hoje e vamos à praia.",
    "Сегодня хорошая погода, и мы идём на пляж.",
    "الطقس جميل اليوم وسنذهب إلى الشاطئ.",
    "Het weer is mooi vandaag en we gaan naar het strand.",
    "Dzisiaj jest ładna pogoda i idziemy na plażę.",
    "zxq vbnm 4431-AX ref 77 qwe",
]


@pytest.mark.parametrize("seed", range(5))
def test_confident_fast_path_agrees_with_full_folding(seed):
    """The classify() shortcut gives what summing the whole ranking gives."""
    rng = random.Random(seed)
    words = " ".join(COMMON_SENTENCES).split()
    unsure = 0
    for _ in range(80):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 8)))
        unsure += langid._get_identifier().classify(text)[1] <= 0.5
        assert langid._model_language(text) == langid._folded_language(text), text
    assert 0 < unsure < 80  # both paths were taken


def test_model_is_loaded_once_across_threads(monkeypatch):
    monkeypatch.setattr(langid, "_identifier", None)
    loads = []
    real_load = langid._load_identifier

    def counting_load():
        loads.append(1)
        return real_load()

    monkeypatch.setattr(langid, "_load_identifier", counting_load)
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(detect_language("Guten Morgen, wie geht es dir heute?")))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert loads == [1]
    assert results == ["de"] * 8


def test_detect_languages_batch():
    texts = ["Hello there, how are you doing today?", "你好", "", "Bonjour à tous, comment allez-vous ?"]
    assert detect_languages(texts) == ["en", "zh", None, "fr"]
    assert detect_languages([]) == []


def test_document_language_is_length_weighted():
    assert document_language(["en", "de", "de", None], [100, 40, 30, 500]) == "en"
    assert document_language(["en", "de", "de"], [100, 60, 50]) == "de"
    assert document_language(["fr", "it"], [10, 10]) == "fr"  # tie: first met
    assert document_language([None, None], [5, 5]) is None
    assert document_language([], []) is None


ENGLISH_PASSAGES = [
    "The package installs the library and its header files into the usual places on your system.",
    "Run the configure script first, then build everything with make and install it as root.",
]
SHORTLOG = "Aurelio Mancini (1):\nclone: rename static function `dir_exists()`.\n\nLivia Santoro (1):\nt: fix typo"
CONTRIBUTORS = ("Anke Hoffmann <anke@example.org> (alpha-linux)\nJens Dahlberg <jens@example.org>\n"
                "Ole Brandt <ole@example.net> (hurd-i386)\nKlaas Vermeulen <klaas@example.org> (netbsd-i386)\n"
                "Ruud Janssen <ruud@example.org> (ia64-linux)\nPiet Bakker <piet@example.org> (arm-linux)")
SPANISH_PASSAGES = [
    "Este capítulo explica cómo se construye un paquete a partir de las fuentes originales del programa.",
    "Primero hay que instalar las herramientas necesarias y después preparar el directorio de trabajo.",
]
SPANISH_HEADING = "Apéndice A. Técnicas avanzadas  Tabla de contenidos  A.1. Bibliotecas compartidas"


def test_a_passage_the_model_is_unsure_of_takes_its_documents_language():
    # alone, a shortlog's names and commit lines are Latin to the model, a Spanish heading Galician
    assert detect_languages([SHORTLOG, SPANISH_HEADING]) == ["la", "gl"]
    assert passage_languages(ENGLISH_PASSAGES + [SHORTLOG]) == ["en"] * 3
    assert passage_languages(SPANISH_PASSAGES + [SPANISH_HEADING]) == ["es"] * 3
    # Dutch-looking names the model gives English next to nothing (0.007) keep their label
    assert passage_languages(ENGLISH_PASSAGES * 2 + [CONTRIBUTORS]) == ["en"] * 4 + ["af"]


def test_an_unclear_passage_takes_its_documents_language_where_the_model_leans_to_it():
    code = ("if ( bzerror != BZ_STREAM_END ) { BZ2_bzReadClose ( &bzerror, b ); /* handle error */ } "
            "else { nBuf = BZ2_bzRead ( &bzerror, b, buf, nWanted ); }")
    assert detect_languages([code]) == [None]  # too unclear alone
    assert passage_languages(ENGLISH_PASSAGES + [code]) == ["en"] * 3
    # figures have no letters to lean on: still no language
    assert passage_languages(ENGLISH_PASSAGES + ["42 17 3.5"]) == ["en", "en", None]


def test_a_passage_the_model_is_sure_of_keeps_its_language():
    english_in_spanish = ("The dh_make command will create some template configuration files under "
                          "the debian directory of the source tree.")
    assert passage_languages(SPANISH_PASSAGES + [english_in_spanish]) == ["es", "es", "en"]
    # by script, and unknown, as they were; a document of one passage is its own
    chinese = "你好，世界。这是一个测试句子。"
    assert passage_languages(ENGLISH_PASSAGES + [chinese, "42 17"]) == ["en", "en", "zh", None]
    assert passage_languages([SHORTLOG]) == ["la"]
    assert passage_languages([]) == []


def test_bad_input_raises_input_error():
    with pytest.raises(InputError):
        detect_language(b"bytes")
    with pytest.raises(InputError):
        detect_languages("one string")
    with pytest.raises(InputError):
        detect_languages(["fine", 3])
    with pytest.raises(InputError, match="lengths"):
        document_language(["en"], [1, 2])
    with pytest.raises(InputError, match=">= 0"):
        document_language(["en"], [-1])


# --- Tatoeba: real sentences -------------------------------------------------------

# Tatoeba (LASER test set) file code -> the ISO 639-1 code we must return.
TATOEBA_LANGUAGES = {
    "eng": "en", "deu": "de", "fra": "fr", "spa": "es", "ita": "it", "por": "pt", "rus": "ru",
    "cmn": "zh", "jpn": "ja", "ara": "ar", "hin": "hi", "tur": "tr", "pol": "pl", "nld": "nl",
    "kor": "ko",
}
SENTENCES_PER_LANGUAGE = 200
MIN_SENTENCE_CHARS = 10  # "Tom ran." says little about its language


def tatoeba_sentences(folder, code: str) -> list[str]:
    """The first sentences of tatoeba.<code>-eng.<code> (English: the deu-eng English side)."""
    path = folder / ("tatoeba.deu-eng.eng" if code == "eng" else f"tatoeba.{code}-eng.{code}")
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    kept = [line for line in lines if len(line) >= MIN_SENTENCE_CHARS]
    return kept[:SENTENCES_PER_LANGUAGE]


@pytest.mark.data
def test_tatoeba_accuracy(shared_data, caplog):
    folder = shared_data / "tatoeba" / "v1"
    accuracy = {}
    for code, expected in TATOEBA_LANGUAGES.items():
        sentences = tatoeba_sentences(folder, code)
        assert len(sentences) == SENTENCES_PER_LANGUAGE
        predicted = detect_languages(sentences)
        accuracy[code] = sum(p == expected for p in predicted) / len(sentences)
    mean = sum(accuracy.values()) / len(accuracy)
    report = f"mean {mean:.3f}; " + ", ".join(f"{c} {a:.3f}" for c, a in accuracy.items())
    logging.getLogger(__name__).info("tatoeba language id accuracy: %s", report)
    assert mean >= 0.95, report
    assert min(accuracy.values()) >= 0.85, report
