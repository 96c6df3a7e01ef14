"""Spreadsheets, presentations, RTF, legacy Word, code, subtitles, e-mail and archives.

Each document is written by the library that makes the format (tests/format_docs.py),
or is a small committed fixture (tests/fixtures/README.md); each test checks that a
word it holds is read, on the right sheet, slide or page, and that the format's
hostile variants stay within the limits.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from format_docs import (
    FIXTURES,
    MESSAGE_DATE,
    PYTHON_SOURCE,
    SRT_TEXT,
    make_eml,
    make_mbox,
    make_msg,
    make_odp,
    make_ods,
    make_pptx,
    make_rtf,
    make_xlsx,
    make_zip,
)

import engine.extract.tools as tools
from engine.config import ExtractLimits
from engine.errors import (
    CorruptDocumentError,
    DocumentTooLargeError,
    EncryptedDocumentError,
    ExtractionError,
    MissingToolError,
)
from engine.extract import extract, extract_tree, open_member, page_name, page_of


def tree(path: Path, **limits) -> dict[tuple[str, ...], object]:
    return {d.inner: d for d in extract_tree(path, path.read_bytes(), limits=ExtractLimits(**limits))}


def page_holding(extracted, word: str) -> int | None:
    return page_of(extracted, extracted.text.index(word))


# --- spreadsheets ---------------------------------------------------------------------


@pytest.mark.parametrize("maker", [make_xlsx, make_ods], ids=["xlsx", "ods"])
def test_spreadsheet_rows_carry_their_header_names_and_sheets_are_pages(tmp_path, maker):
    got = extract(maker(tmp_path / f"prices.{maker.__name__[-4:]}"))
    assert got.page_labels == ("Bakery", "Dairy")  # the empty sheet adds no page
    assert "Product: Rye bread | Price: 3.2 | City: Lyon" in got.text
    assert page_name(got.format, page_holding(got, "Roquefort"), got.page_labels) == "sheet Dairy"
    assert page_holding(got, "Croissant") == 1


def test_old_excel_workbook(tmp_path):
    got = extract(FIXTURES / "prices.xls")
    assert got.format == "xls"
    assert "Product: Rye bread" in got.text and page_name("xls", page_holding(got, "Roquefort"), got.page_labels) == "sheet Dairy"


def test_xlsx_with_cells_in_opposite_corners_is_read_quickly(tmp_path):
    """python-calamine allocates the 1,048,576 x 16,384 box of such a sheet and aborts."""
    import openpyxl

    book = openpyxl.Workbook()
    book.active["A1"] = "corner"
    book.active["XFD1048576"] = "faraway"
    book.save(tmp_path / "corners.xlsx")
    got = extract(tmp_path / "corners.xlsx", limits=ExtractLimits(max_seconds=30))
    assert "corner" in got.text and "faraway" in got.text


def _ods_with(content_table: str) -> bytes:
    content = ('<?xml version="1.0"?><office:document-content '
               'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
               'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
               'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0">'
               f'<office:body><office:spreadsheet>{content_table}</office:spreadsheet></office:body>'
               '</office:document-content>')
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.spreadsheet")
        zf.writestr("content.xml", content)
    return buffer.getvalue()


def test_ods_of_ten_billion_repeated_empty_cells_costs_nothing(tmp_path):
    empty = ('<table:table-row table:number-rows-repeated="1048575">'
             '<table:table-cell table:number-columns-repeated="16384"/></table:table-row>')
    table = (f'<table:table table:name="Huge">{empty}<table:table-row><table:table-cell>'
             '<text:p>needle</text:p></table:table-cell></table:table-row></table:table>')
    path = tmp_path / "huge.ods"
    path.write_bytes(_ods_with(table))
    got = extract(path, limits=ExtractLimits(max_seconds=10))
    assert got.text == "Huge\nneedle"


def test_xlsx_of_ten_million_explicit_empty_cells_stops_at_the_deadline(tmp_path):
    """10^7 styled empty <c/> elements: streamed, never held, cut off by the time limit."""
    path = tmp_path / "styled.xlsx"
    rows = "".join(f'<row r="{r}">' + '<c s="0"/>' * 1000 + "</row>" for r in range(1, 10_001))
    sheet = ('<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
             f"<sheetData>{rows}</sheetData></worksheet>")
    import openpyxl

    book = openpyxl.Workbook()
    book.save(path)
    with zipfile.ZipFile(path) as src:
        members = {n: src.read(n) for n in src.namelist()}
    members["xl/worksheets/sheet1.xml"] = sheet.encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
        for name, data in members.items():
            dst.writestr(name, data)
    with pytest.raises(ExtractionError) as caught:
        extract(path, limits=ExtractLimits(max_seconds=1))
    assert "longer than the 1 s limit" in caught.value.reason or "no text" in caught.value.reason


def test_spreadsheet_over_the_cell_limit_is_refused(tmp_path):
    with pytest.raises(DocumentTooLargeError, match="filled cells"):
        extract(make_xlsx(tmp_path / "p.xlsx"), limits=ExtractLimits(max_cells=5))


def test_password_protected_xlsx(tmp_path):
    path = tmp_path / "secret.xlsx"
    path.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600 + "EncryptedPackage".encode("utf-16-le"))
    with pytest.raises(EncryptedDocumentError):
        extract(path)


# --- presentations ----------------------------------------------------------------------


@pytest.mark.parametrize(("maker", "word", "note"), [(make_pptx, "centrifuge", "acacia"), (make_odp, "Moraines", "Ice Age")],
                         ids=["pptx", "odp"])
def test_slides_and_their_notes_are_pages(tmp_path, maker, word, note):
    got = extract(maker(tmp_path / f"deck.{maker.__name__[-4:]}"))
    assert len(got.page_starts) == 2
    assert page_name(got.format, page_holding(got, word)) == "slide 2"
    assert page_holding(got, note) == 2  # the speaker notes belong to their slide


# --- rich text and legacy Word ------------------------------------------------------------


def test_rtf_text_without_control_words_or_pictures(tmp_path):
    got = extract(make_rtf(tmp_path / "log.rtf"))
    assert got.text == "The keeper lit the lamp at dusk.\nFog horns sounded all night in café weather."
    assert got.title == "Lighthouse log"


def test_rtf_named_doc_is_read_as_rtf(tmp_path):
    path = tmp_path / "letter.doc"
    path.write_bytes(make_rtf(tmp_path / "log.rtf").read_bytes())
    assert extract(path).format == "rtf"


needs_word_tool = pytest.mark.skipif(tools.find_tool("antiword") is None and tools.find_tool("catdoc") is None,
                                     reason="neither antiword nor catdoc is installed")


@needs_word_tool
def test_legacy_word_document(tmp_path):
    got = extract(FIXTURES / "murano.doc")
    assert got.format == "doc" and "Angelo Barovier" in got.text


def test_legacy_word_without_antiword_or_catdoc_names_the_tool(monkeypatch):
    monkeypatch.setattr("engine.extract.word97_file.find_tool", lambda name: None)
    with pytest.raises(MissingToolError) as caught:
        extract(FIXTURES / "murano.doc")
    assert caught.value.tool == "antiword" and "apt-get install antiword" in caught.value.reason


@needs_word_tool
def test_a_word_tool_that_hangs_is_killed_at_the_deadline(tmp_path, monkeypatch):
    fake = tmp_path / "antiword"
    fake.write_text("#!/bin/sh\nsleep 30\n")
    fake.chmod(0o755)
    monkeypatch.setenv(tools.TOOLS_ENV, str(tmp_path))
    with pytest.raises(ExtractionError, match="antiword took longer"):
        extract(FIXTURES / "murano.doc", limits=ExtractLimits(max_seconds=1))


# --- code and subtitles --------------------------------------------------------------------


def test_code_keeps_indentation_and_splits_at_top_level_definitions(tmp_path):
    path = tmp_path / "geo.py"
    path.write_text(PYTHON_SOURCE, encoding="utf-8")
    got = extract(path)
    assert got.format == "code"
    assert '    """Great-circle distance between two points."""' in got.text
    assert "\n\nclass GeoPoint:" in got.text  # a blank line added before the class


def test_subtitles_lose_numbers_timings_and_tags(tmp_path):
    path = tmp_path / "film.srt"
    path.write_text(SRT_TEXT, encoding="utf-8")
    assert extract(path).text == "The caravan crossed the desert\nunder a sky full of stars."


def test_tcl_message_catalogue_named_msg_is_text(tmp_path):
    path = tmp_path / "de.msg"
    path.write_text('namespace eval ::tk { ::msgcat::mcset de "&Abort" "&Abbruch" }\n', encoding="utf-8")
    assert extract(path).format == "code"


# --- e-mail ----------------------------------------------------------------------------------


def test_message_headers_body_date_and_attachments(tmp_path):
    documents = tree(make_eml(tmp_path / "budget.eml", tmp_path))
    message = documents[()].extracted
    assert message.title == "Difference engine budget"
    assert message.date == MESSAGE_DATE.timestamp()
    assert "From: Ada Lovelace <ada@example.org>" in message.text and "treasury approved" in message.text
    assert "punched cards" in documents[("minutes.pdf",)].extracted.text
    assert documents[("glass.docx",)].extracted.title == "Venetian glass"
    assert "punched cards" not in message.text  # attachments are their own documents


def test_mbox_messages_and_html_only_bodies(tmp_path):
    documents = tree(make_mbox(tmp_path / "inbox.mbox"))
    assert set(documents) == {(), ("message-1.eml",), ("message-2.eml",)}
    assert documents[("message-1.eml",)].extracted.title == "Lighthouse keepers"
    assert "Eddystone" in documents[("message-1.eml",)].extracted.text


def test_html_only_message_goes_through_the_html_extractor(tmp_path):
    from format_docs import message

    mail = message("Orchard", "x")
    mail.clear_content()
    mail.set_content("<html><body><nav>menu</nav><p>The <b>quince</b> orchard flowered.</p></body></html>", subtype="html")
    path = tmp_path / "orchard.eml"
    path.write_bytes(mail.as_bytes())
    got = extract(path)
    assert got.text.endswith("The quince orchard flowered.") and "menu" not in got.text


def test_extensionless_mailbox_and_maildir_message_are_recognised(tmp_path):
    inbox = tmp_path / "Inbox"
    inbox.write_bytes(make_mbox(tmp_path / "x.mbox").read_bytes())
    assert tree(inbox)[()].extracted.format == "mbox"
    maildir_file = tmp_path / "1700000000.M1P2.host:2,S"
    maildir_file.write_bytes(make_eml(tmp_path / "m.eml", tmp_path).read_bytes())
    assert extract(maildir_file).format == "eml"


def test_outlook_msg_and_its_attachment(tmp_path):
    documents = tree(make_msg(tmp_path / "figures.msg"))
    assert documents[()].extracted.title == "Quarterly figures"
    assert "Zanzibar" in documents[()].extracted.text
    assert "cardamom" in documents[("forecast.txt",)].extracted.text


def test_encrypted_mail_is_a_typed_error(tmp_path):
    path = tmp_path / "secret.eml"
    path.write_bytes(b"From: a@example.org\nTo: b@example.org\nSubject: s\nMIME-Version: 1.0\n"
                     b"Content-Type: application/pkcs7-mime; smime-type=enveloped-data\n\nMIAGCSqGSIb3DQEHA6CAMIACAQAx\n")
    with pytest.raises(EncryptedDocumentError):
        extract(path)


def test_mbox_of_many_messages_stops_at_the_member_limit(tmp_path):
    path = tmp_path / "huge.mbox"
    one = b"From a@b Sat Jan  1 00:00:00 2000\nFrom: a@b\nTo: c@d\nSubject: s\n\nbody\n\n"
    path.write_bytes(one * 300)
    documents = tree(path, max_members=100)
    assert isinstance(documents[()].error, DocumentTooLargeError) and "over 100 members" in documents[()].error.reason
    assert len(documents) == 101  # the first hundred are read


# --- archives ----------------------------------------------------------------------------------


def test_zip_members_nested_tar_and_unsupported_members(tmp_path):
    documents = tree(make_zip(tmp_path / "bundle.zip", tmp_path))
    assert "tidal power" in documents[("inside/report.pdf",)].extracted.text
    assert "saffron" in documents[("notes.txt",)].extracted.text
    assert "telescope" in documents[("docs.tar.gz", "manual/guide.md")].extracted.text
    assert documents[("program.bin",)].error is not None
    assert documents[()].error is None and documents[()].extracted.format == "zip"


def test_open_member_finds_a_nested_member(tmp_path):
    path = make_zip(tmp_path / "bundle.zip", tmp_path)
    data = open_member(path, path.read_bytes(), ("docs.tar.gz", "manual/guide.md"))
    assert data.startswith(b"# Guide")


def test_zip_with_a_hundred_thousand_members_is_refused_from_its_count(tmp_path):
    from hostile_docs import zip_bytes

    path = tmp_path / "many.zip"
    path.write_bytes(zip_bytes({f"f{i}.txt": b"" for i in range(100_000)}))
    documents = tree(path, max_seconds=30)
    assert "over 20,000 members" in documents[()].error.reason


def test_archive_members_share_one_unpacked_size_limit(tmp_path):
    path = tmp_path / "big.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for i in range(5):
            zf.writestr(f"part{i}.txt", "honey bees " * 100_000)  # 1.1 MB each, tiny compressed
    documents = tree(path, max_unpacked_bytes=3_000_000)
    assert "unpacks to" in documents[()].error.reason
    assert sum(1 for inner in documents if inner) == 2  # two fit before the limit


def test_compressed_single_file_and_bomb(tmp_path):
    import gzip

    path = tmp_path / "changelog.gz"
    path.write_bytes(gzip.compress(b"Fixed the lighthouse lamp regression.\n"))
    assert "lighthouse" in tree(path)[("changelog",)].extracted.text
    bomb = tmp_path / "bomb.txt.gz"
    bomb.write_bytes(gzip.compress(b"\0" * (50 << 20)))
    assert "unpacks to" in tree(bomb, max_member_bytes=1 << 20)[()].error.reason


def test_archives_nested_deeper_than_the_limit_are_not_opened(tmp_path):
    data = b"deep inside"
    for level in range(6):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as zf:
            zf.writestr("note.txt" if level == 0 else f"level{level}.zip", data)
        data = buffer.getvalue()
    path = tmp_path / "nest.zip"
    path.write_bytes(data)
    documents = tree(path, max_depth=3)
    assert max(len(inner) for inner in documents) == 3
    assert not any(d.extracted and "deep inside" in d.extracted.text for d in documents.values())


def test_encrypted_zip_member_is_a_typed_error_and_the_rest_is_read(tmp_path):
    from hostile_docs import zip_bytes

    data = bytearray(zip_bytes({"secret.txt": b"x" * 10, "open.txt": b"plain text here"}))
    # set the "encrypted" flag of the first entry, in its local header and in the directory
    data[6] |= 1
    central = data.index(b"PK\x01\x02")
    data[central + 8] |= 1
    path = tmp_path / "mixed.zip"
    path.write_bytes(bytes(data))
    documents = tree(path)
    assert isinstance(documents[("secret.txt",)].error, EncryptedDocumentError)
    assert documents[("open.txt",)].extracted.text == "plain text here"


def test_member_names_are_made_safe_and_unique():
    from engine.extract.members import MemberNames

    names = MemberNames()
    assert names.add("../../etc//passwd", "m1") == "etc/passwd"
    assert names.add("dir\\file.txt", "m2") == "dir/file.txt"
    assert names.add("dir/file.txt", "m3") == "dir/file (2).txt"
    assert names.add("/./", "m4") == "m4"


def test_damaged_tar_is_a_typed_error(tmp_path):
    path = tmp_path / "broken.tar.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00" + b"\x00" * 20)
    assert isinstance(tree(path)[()].error, CorruptDocumentError)


def test_encoded_words_in_headers_and_attachment_names_are_decoded(tmp_path):
    path = tmp_path / "encoded.eml"
    path.write_bytes(b"From: =?utf-8?q?J=C3=BCrgen_M=C3=BCller?= <j@example.org>\nTo: a@example.org\n"
                     b"Subject: =?utf-8?b?R2zDvGNrd3Vuc2No?=\nDate: Tue, 1 Jun 2021 10:00:00 +0200\n"
                     b"MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=XX\n\n--XX\n"
                     b"Content-Type: text/plain; charset=utf-8\n\nHallo.\n--XX\n"
                     b"Content-Type: text/plain\nContent-Disposition: attachment; filename=\"=?utf-8?q?M=C3=A4rz.txt?=\"\n\n"
                     b"Bericht\n--XX--\n")
    documents = tree(path)
    message = documents[()].extracted
    assert message.title == "Glückwunsch" and "From: Jürgen Müller <j@example.org>" in message.text
    assert documents[("März.txt",)].extracted.text == "Bericht"
