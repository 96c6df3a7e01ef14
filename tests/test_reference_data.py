"""The shipped reference sentences (resources/reference_sentences.tsv) and the readers that build them."""

from __future__ import annotations

import struct
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from text_filters import clean_message, ends_sentence, in_script, length_of, starts_sentence  # noqa: E402
from text_sources import _control_fields, language_of_locale, parse_mo, parse_po  # noqa: E402

from engine.langid import detect_language  # noqa: E402
from engine.languages import LANGUAGE_CODES  # noqa: E402

REFERENCE = REPO / "resources" / "reference_sentences.tsv"


def reference_rows() -> tuple[dict[str, tuple[str, str]], list[list[str]]]:
    sources, rows = {}, []
    for line in REFERENCE.read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        if line.startswith("#source"):
            sources[fields[1]] = (fields[2], fields[3])
        elif not line.startswith("#"):
            rows.append(fields)
    return sources, rows


def test_reference_rows_are_well_formed_and_cover_100_languages():
    sources, rows = reference_rows()
    assert all(len(row) == 4 for row in rows)
    assert {row[0] for row in rows} <= LANGUAGE_CODES
    assert {row[1] for row in rows} == {"q", "s"}
    assert {row[2] for row in rows} <= set(sources)
    per_language = Counter(row[0] for row in rows)
    assert len(per_language) >= 100
    assert max(per_language.values()) <= 300
    assert len({(row[0], row[3]) for row in rows}) == len(rows), "a sentence twice in one language"
    assert REFERENCE.stat().st_size < 4_000_000


def test_reference_sources_have_a_licence_and_none_is_the_gpl():
    sources, _ = reference_rows()
    for package, licence in sources.values():
        assert licence and licence != "unknown", package
        assert "GPL" not in licence.replace("LGPL", ""), f"{package}: {licence}"


def test_reference_sentences_are_detected_as_their_language():
    """Every 25th row (about 1,100 sentences): the build checked them all."""
    _, rows = reference_rows()
    sample = rows[::25]
    wrong = [(row[0], row[3]) for row in sample if detect_language(row[3]) != row[0]]
    assert not wrong


def test_sentence_checks():
    assert clean_message("Could not open the &file.") == "Could not open the file."
    assert clean_message("Cannot open “%s”.") is None
    assert clean_message("See <b>this</b>.") is None
    assert clean_message("Copy /etc/hosts here.") is None
    assert clean_message("Delete the reference to the XX library?") is None
    assert clean_message("The prefix '%1' is not valid.") is None
    assert starts_sentence("«Bonjour», dit-il.") and not starts_sentence("lower case start.")
    assert starts_sentence("ფაილი ვერ მოიძებნა.")  # Georgian letters are lower case to Unicode
    assert ends_sentence("你好。", "zh") and ends_sentence("Τι κάνεις;", "el")
    assert not ends_sentence("Whereas the peoples;", "en")
    assert length_of("ሰው፡ሁሉ፡ሲወለድ፡ነጻ፡ነው።", "am") == 5
    assert in_script("Привет, мир!", "CYRILLIC") and not in_script("Hello, мир!", "CYRILLIC")


def test_locale_names_fold_to_the_detector_codes():
    assert language_of_locale("pt_BR") == "pt"
    assert language_of_locale("nb") == "no"
    assert language_of_locale("sr@latin") == "sr"
    assert language_of_locale("zh-Hant") == "zh"
    assert language_of_locale("en_GB") is None  # a catalogue's English is its msgids
    assert language_of_locale("eng", english=True) == "en"
    assert language_of_locale("xx") is None


def _mo(entries: list[tuple[bytes, bytes]]) -> bytes:
    """A little-endian .mo file holding `entries`, as msgfmt writes it."""
    entries = sorted(entries)
    header_size = 28
    keys_at = header_size
    values_at = keys_at + 8 * len(entries)
    data_at = values_at + 8 * len(entries)
    blob, key_table, value_table = b"", b"", b""
    for key, _ in entries:
        key_table += struct.pack("<2I", len(key), data_at + len(blob))
        blob += key + b"\x00"
    for _, value in entries:
        value_table += struct.pack("<2I", len(value), data_at + len(blob))
        blob += value + b"\x00"
    header = struct.pack("<7I", 0x950412DE, 0, len(entries), keys_at, values_at, 0, 0)
    return header + key_table + value_table + blob


def test_parse_mo_reads_singular_entries_and_skips_header_and_plurals():
    data = _mo([
        (b"", b"Content-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=2;\n"),
        (b"Open the file.", "Öffne die Datei.".encode()),
        (b"menu\x04Quit", b"Beenden"),
        (b"one file\x00%d files", b"eine Datei\x00%d Dateien"),
    ])
    assert parse_mo(data) == [("Open the file.", "Öffne die Datei."), ("menu\x04Quit", "Beenden")]
    with pytest.raises(ValueError):
        parse_mo(b"not a catalogue at all")


def test_parse_po_skips_fuzzy_untranslated_and_plural_entries():
    po = '''msgid ""
msgstr "Content-Type: text/plain; charset=UTF-8\\n"

msgctxt "button"
msgid "Save"
msgstr "Enregistrer"

#, fuzzy
msgid "Old message."
msgstr "Vieux message."

msgid "Not translated."
msgstr ""

msgid "one file"
msgid_plural "%d files"
msgstr[0] "un fichier"
msgstr[1] "%d fichiers"

msgid "A long "
"message."
msgstr "Un long "
"message."
'''
    assert parse_po(po) == [("button\x04Save", "Enregistrer"), ("A long message.", "Un long message.")]


def test_debconf_fields_keep_paragraphs():
    stanza = ("Template: x/y\nType: boolean\nDescription: Use it?\n First line\n goes on.\n .\n"
              " Second paragraph.\nDescription-de.UTF-8: Benutzen?\n Erste Zeile\n geht weiter.\n .\n"
              " Zweiter Absatz.")
    fields = _control_fields(stanza)
    assert fields["Description"].split("\n") == ["Use it?", "First line goes on.", "Second paragraph."]
    assert fields["Description-de.UTF-8"].split("\n") == ["Benutzen?", "Erste Zeile geht weiter.", "Zweiter Absatz."]
