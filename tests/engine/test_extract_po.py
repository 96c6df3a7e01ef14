"""gettext catalogues are indexed by their translated messages, never by their header."""

from __future__ import annotations

from engine.extract import extract
from engine.extract.po_file import po_entries, unescape

CATALOGUE = r'''# German translation.
# Copyright (C) 2026
msgid ""
msgstr ""
"Project-Id-Version: editor 1.0\n"
"Content-Type: text/plain; charset=ISO-8859-1\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\n"

#: src/main.c:12
msgid "Open file"
msgstr "Datei öffnen"

#, c-format
msgctxt "menu"
msgid ""
"Save the \"current\" "
"document"
msgstr "Das \"aktuelle\" Dokument speichern"

msgid "One file"
msgid_plural "%d files"
msgstr[0] "Eine Datei"
msgstr[1] "%d Dateien"

msgid "Untranslated"
msgstr ""

#~ msgid "Old entry"
#~ msgstr "Alter Eintrag"
'''


def test_translations_without_header_or_the_english_sources(tmp_path):
    path = tmp_path / "de.po"
    path.write_bytes(CATALOGUE.encode("latin-1"))  # the header declares ISO-8859-1
    got = extract(path)
    assert got.format == "po"
    assert got.text.split("\n\n") == [
        "Datei öffnen",
        'Das "aktuelle" Dokument speichern',
        "Eine Datei\n%d Dateien",
        "Untranslated",  # not translated yet: its source is the text
    ]
    assert "Project-Id-Version" not in got.text and "Alter Eintrag" not in got.text


def test_entries_without_blank_lines_between_them():
    entries = po_entries('msgid "a"\nmsgstr "b"\nmsgid "c"\nmsgstr "d"\n')
    assert entries == [{"msgid": "a", "msgstr": "b"}, {"msgid": "c", "msgstr": "d"}]


def test_unescape():
    assert unescape(r"tab\there \"quoted\" back\\slash\n") == 'tab\there "quoted" back\\slash\n'
