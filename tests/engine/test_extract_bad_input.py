"""Bad-input corpus: each broken or hostile file gives the right typed error and reason.

The large file and the file with a non-UTF-8 name must extract; everything else must
fail with the exact error class (not just any ExtractionError) and a readable reason.
"""

from __future__ import annotations

import os
import random
import sys
import zipfile
from pathlib import Path

import pytest

from engine.errors import (
    CorruptDocumentError,
    DocumentTooLargeError,
    EncryptedDocumentError,
    ExtractionError,
    NotRegularFileError,
    UnsupportedFormatError,
)
from engine.extract import extract, sniff_format
from engine.extract.sniff import OLE_MAGIC

from extract_docs import PAGES, encrypt_pdf, make_docx, make_epub, make_odt, make_pdf


def assert_fails(path: Path, error: type[ExtractionError], reason: str) -> None:
    with pytest.raises(ExtractionError) as caught:
        extract(path)
    assert type(caught.value) is error, caught.value
    assert caught.value.reason == reason
    assert caught.value.path == path
    assert str(caught.value) == f"{path}: {reason}"


def test_empty_file(tmp_path):
    (tmp_path / "empty.txt").touch()
    assert_fails(tmp_path / "empty.txt", ExtractionError, "file is empty")


def test_whitespace_only_file(tmp_path):
    (tmp_path / "blank.md").write_text(" \n\t\n   \n")
    assert_fails(tmp_path / "blank.md", ExtractionError, "document has no text")


@pytest.mark.parametrize(
    "content",
    [random.Random(7).randbytes(20_000), b"\x00" * 5000],
    ids=["random", "nul"],
)
def test_binary_junk_named_txt(tmp_path, content):
    (tmp_path / "junk.txt").write_bytes(content)
    assert_fails(tmp_path / "junk.txt", ExtractionError, "binary content, not text")


def test_damaged_image_named_txt_is_read_as_an_image_and_refused(tmp_path):
    """The content says PNG, so the name does not matter; the image itself is junk."""
    from engine.errors import MissingToolError

    (tmp_path / "junk.txt").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40)
    with pytest.raises((CorruptDocumentError, MissingToolError)) as caught:
        extract(tmp_path / "junk.txt")
    assert "image" in caught.value.reason


def test_truncated_pdf(tmp_path):
    data = make_pdf(tmp_path / "full.pdf", PAGES).read_bytes()
    (tmp_path / "cut.pdf").write_bytes(data[: len(data) // 2])
    assert_fails(tmp_path / "cut.pdf", CorruptDocumentError, "damaged or truncated PDF (no end-of-file marker)")


def test_pdf_with_garbage_body(tmp_path):
    (tmp_path / "bad.pdf").write_bytes(b"%PDF-1.7\n" + random.Random(3).randbytes(3000) + b"\n%%EOF\n")
    with pytest.raises(CorruptDocumentError, match="damaged or truncated PDF"):
        extract(tmp_path / "bad.pdf")


def test_pdf_that_is_not_a_pdf(tmp_path):
    (tmp_path / "fake.pdf").write_text("hello, I am text")
    assert_fails(tmp_path / "fake.pdf", CorruptDocumentError, "not a valid PDF file (no %PDF header)")


def test_encrypted_pdf(tmp_path):
    plain = make_pdf(tmp_path / "plain.pdf", PAGES[:2])
    locked = encrypt_pdf(plain, tmp_path / "locked.pdf", user_password="secret", owner_password="owner")
    assert_fails(locked, EncryptedDocumentError, "encrypted PDF (password protected)")


def test_docx_that_is_not_a_zip(tmp_path):
    (tmp_path / "fake.docx").write_bytes(b"\x00\x01 not a zip at all")
    assert_fails(tmp_path / "fake.docx", CorruptDocumentError, "not a valid DOCX file (not a zip archive)")


def test_truncated_docx(tmp_path):
    data = make_docx(tmp_path / "full.docx").read_bytes()
    (tmp_path / "cut.docx").write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptDocumentError, match=r"^.*cut\.docx: not a valid DOCX file \(.+\)$"):
        extract(tmp_path / "cut.docx")


def test_zip_without_word_part_named_docx(tmp_path):
    with zipfile.ZipFile(tmp_path / "other.docx", "w") as zf:
        zf.writestr("readme.txt", "not a document")
    with pytest.raises(CorruptDocumentError, match=r"not a valid DOCX file \(.+\)"):
        extract(tmp_path / "other.docx")


def test_password_protected_docx(tmp_path):
    # Office stores an encrypted .docx as an OLE compound file with an EncryptedPackage stream.
    body = b"\x00" * 512 + "EncryptedPackage".encode("utf-16-le") + b"\x00" * 512
    (tmp_path / "locked.docx").write_bytes(OLE_MAGIC + body)
    assert_fails(tmp_path / "locked.docx", EncryptedDocumentError, "encrypted DOCX (password protected)")


def test_old_word_file_named_docx(tmp_path):
    (tmp_path / "old.docx").write_bytes(OLE_MAGIC + b"\x00" * 1024)
    assert_fails(tmp_path / "old.docx", CorruptDocumentError, "not a valid DOCX file (old binary Office format)")


def test_odt_and_epub_that_are_not_zips(tmp_path):
    (tmp_path / "a.odt").write_text("text")
    assert_fails(tmp_path / "a.odt", CorruptDocumentError, "not a valid ODT file (not a zip archive)")
    (tmp_path / "a.epub").write_text("text")
    assert_fails(tmp_path / "a.epub", CorruptDocumentError, "not a valid EPUB file (not a zip archive)")


def with_extra_member(source: Path, target: Path, name: str, content: bytes) -> Path:
    """A copy of zip `source` with one member added or replaced."""
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w") as zout:
        for item in zin.infolist():
            if item.filename != name:
                zout.writestr(item, zin.read(item.filename))
        zout.writestr(name, content)
    return target


def test_drm_protected_epub(tmp_path):
    encryption = b"""<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container"
        xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>
        <enc:CipherData><enc:CipherReference URI="EPUB/a.xhtml"/></enc:CipherData>
        </enc:EncryptedData></encryption>"""
    source = make_epub(tmp_path / "open.epub")
    locked = with_extra_member(source, tmp_path / "drm.epub", "META-INF/encryption.xml", encryption)
    assert_fails(locked, EncryptedDocumentError, "encrypted EPUB (DRM protected)")


def test_epub_with_only_obfuscated_fonts_is_read(tmp_path):
    encryption = b"""<encryption><enc:EncryptedData xmlns:enc="http://www.w3.org/2001/04/xmlenc#">
        <enc:CipherData><enc:CipherReference URI="EPUB/fonts/serif.otf"/></enc:CipherData>
        </enc:EncryptedData></encryption>"""
    source = make_epub(tmp_path / "open.epub")
    fonts = with_extra_member(source, tmp_path / "fonts.epub", "META-INF/encryption.xml", encryption)
    assert "Vladivostok" in extract(fonts).text


def test_password_protected_odt(tmp_path):
    source = make_odt(tmp_path / "open.odt")
    with zipfile.ZipFile(source) as zf:
        manifest = zf.read("META-INF/manifest.xml")
    manifest = manifest.replace(
        b'manifest:full-path="content.xml"',
        b'manifest:full-path="content.xml"><manifest:encryption-data manifest:checksum="x"/></manifest:file-entry'
        b'><manifest:file-entry manifest:media-type="text/xml" manifest:full-path="dummy.xml"',
    )
    assert b"encryption-data" in manifest
    locked = with_extra_member(source, tmp_path / "locked.odt", "META-INF/manifest.xml", manifest)
    assert_fails(locked, EncryptedDocumentError, "encrypted ODT (password protected)")


def test_docx_without_text(tmp_path):
    import docx

    docx.Document().save(tmp_path / "blank.docx")
    assert_fails(tmp_path / "blank.docx", ExtractionError, "document has no text")


def test_truncated_epub(tmp_path):
    data = make_epub(tmp_path / "full.epub").read_bytes()
    (tmp_path / "cut.epub").write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptDocumentError, match=r"not a valid EPUB file \(.+\)"):
        extract(tmp_path / "cut.epub")


def test_unsupported_extension(tmp_path):
    import zipfile

    with zipfile.ZipFile(tmp_path / "talk.key", "w") as zf:  # Apple Keynote: a zip we do not read
        zf.writestr("Index/Document.iwa", b"\x00\x01")
    with pytest.raises(ExtractionError, match="its members are read one by one"):
        extract(tmp_path / "talk.key")  # any zip is an archive; its members decide
    with zipfile.ZipFile(tmp_path / "table.xlsx", "w") as zf:
        zf.writestr("xl/workbook.xml", "<workbook/>")
    assert_fails(tmp_path / "table.xlsx", CorruptDocumentError,
                 "not a valid XLSX file (\"There is no item named '[Content_Types].xml' in the archive\")")
    (tmp_path / "messages.mo").write_bytes(b"\xde\x12\x04\x95" + bytes(range(256)) * 4)
    assert_fails(tmp_path / "messages.mo", UnsupportedFormatError, "not a supported format: .mo")
    (tmp_path / "blob").write_bytes(bytes(range(256)) * 4)
    assert_fails(tmp_path / "blob", UnsupportedFormatError, "not a supported format: binary content, no extension")


def test_text_without_a_known_extension_is_read_as_text(tmp_path):
    (tmp_path / "LICENSE").write_text("Permission is hereby granted, free of charge.\n")
    (tmp_path / "corpus.de").write_bytes("Grüße aus Köln.\nDas Wetter ist schön.\n".encode("cp1252"))
    assert extract(tmp_path / "LICENSE").text == "Permission is hereby granted, free of charge."
    got = extract(tmp_path / "corpus.de")
    assert (got.format, got.text) == ("txt", "Grüße aus Köln.\nDas Wetter ist schön.")


@pytest.mark.slow
def test_large_text_file_extracts(tmp_path):
    # 50 MB of cp1252 text: detection must sample, decoding happens once.
    block = ("Le boulanger pétrit la pâte à l'aube; la croûte dorée craque. " * 16 + "\n").encode("cp1252")
    path = tmp_path / "big.txt"
    with path.open("wb") as f:
        f.write(block * (50_000_000 // len(block) + 1))
    got = extract(path)
    assert got.format == "txt"
    assert path.stat().st_size >= 50_000_000
    assert got.text.startswith("Le boulanger pétrit la pâte à l'aube; la croûte dorée craque.")
    assert got.text.count("croûte") == 16 * (got.text.count("\n") + 1)
    assert "\ufffd" not in got.text


def test_file_over_the_limit(tmp_path):
    (tmp_path / "big.txt").write_text("word " * 1000)
    with pytest.raises(DocumentTooLargeError) as caught:
        extract(tmp_path / "big.txt", max_bytes=1024)
    assert caught.value.reason == "file is 4.9 KiB, over the 1.0 KiB limit"
    assert extract(tmp_path / "big.txt", max_bytes=5000).text.startswith("word word")


def test_unreadable_file_permission_denied(tmp_path):
    path = tmp_path / "secret.txt"
    path.write_text("private words")
    path.chmod(0)
    try:
        if os.access(path, os.R_OK):
            pytest.skip("running as root (or with CAP_DAC_OVERRIDE): chmod 000 does not block reads")
        assert_fails(path, ExtractionError, "permission denied")
    finally:
        path.chmod(0o600)


def test_folder_named_like_a_document(tmp_path):
    (tmp_path / "folder.txt").mkdir()
    assert_fails(tmp_path / "folder.txt", NotRegularFileError, "cannot read: a folder")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_does_not_hang(tmp_path):
    os.mkfifo(tmp_path / "pipe.txt")
    assert_fails(tmp_path / "pipe.txt", NotRegularFileError, "cannot read: not a regular file")
    assert sniff_format(tmp_path / "pipe.txt") is None


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_link_to_dev_zero_is_not_read(tmp_path):
    os.symlink("/dev/zero", tmp_path / "zero.txt")
    assert_fails(tmp_path / "zero.txt", NotRegularFileError, "cannot read: not a regular file")
    assert sniff_format(tmp_path / "zero.txt") is None


@pytest.mark.skipif(sys.platform != "linux", reason="Linux file names are bytes; others enforce Unicode")
def test_non_utf8_file_name(tmp_path):
    path = Path(os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9 \xff.txt"))
    path.write_text("Une note au nom mal encodé.", encoding="utf-8")
    assert extract(path).text == "Une note au nom mal encodé."


def test_file_deleted_before_read(tmp_path):
    path = tmp_path / "gone.txt"
    path.write_text("soon gone")
    path.unlink()
    assert_fails(path, ExtractionError, "file not found (moved or deleted?)")


def test_file_vanishing_between_scan_and_open(tmp_path, monkeypatch):
    import engine.safe_open

    path = tmp_path / "racy.txt"
    path.write_text("here at scan time")
    real_open = os.open

    def delete_then_open(name, *args, **kwargs):
        if Path(name) == path:
            os.unlink(name)
        return real_open(name, *args, **kwargs)

    monkeypatch.setattr(engine.safe_open.os, "open", delete_then_open)
    assert_fails(path, ExtractionError, "file not found (moved or deleted?)")


def test_html_with_only_scripts(tmp_path):
    (tmp_path / "app.html").write_text("<html><body><script>render()</script><nav>Menu</nav></body></html>")
    assert_fails(tmp_path / "app.html", ExtractionError, "document has no text")
