"""Indexing what sits on a real disk: every supported kind of file found by a word it holds.

Archive members, attachments and mailbox messages are documents below their file
(`bundle.zip/inside/report.pdf`): these tests check that search finds them, that
`path:`, `type:` and `after:` see them, that re-indexing and "forget" treat them like
files in a folder, and that "Open" and the preview reach them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from format_docs import (
    FIXTURES,
    PYTHON_SOURCE,
    SRT_TEXT,
    make_eml,
    make_mbox,
    make_msg,
    make_odp,
    make_ods,
    make_png,
    make_pptx,
    make_rtf,
    make_scanned_pdf,
    make_xlsx,
    make_zip,
)
from helpers import WordEncoder

from engine.config import data_paths
from engine.extract import page_name
from engine.extract.ocr import ocr_setup
from engine.extract.tools import find_tool
from engine.config import ExtractLimits
from engine.library import Library

OCR_USABLE = ocr_setup(ExtractLimits()).usable
WORD_TOOL = find_tool("antiword") or find_tool("catdoc")


@pytest.fixture
def library(babelfind_home):
    lib = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    yield lib
    lib.close()


def finish(events):
    return list(events)[-1].summary


def everything(folder: Path, tmp: Path) -> dict[str, str]:
    """One file of every supported kind in `folder`; returns {word to search: where it is}."""
    folder.mkdir()
    make_xlsx(folder / "prices.xlsx")
    make_ods(folder / "cheeses.ods")
    shutil.copy(FIXTURES / "prices.xls", folder / "old-prices.xls")
    make_pptx(folder / "bees.pptx")
    make_odp(folder / "ice.odp")
    make_rtf(folder / "log.rtf")
    make_eml(folder / "budget.eml", tmp)
    make_mbox(folder / "Inbox")
    make_msg(folder / "figures.msg")
    make_zip(folder / "bundle.zip", tmp)
    (folder / "geo.py").write_text(PYTHON_SOURCE, encoding="utf-8")
    (folder / "film.srt").write_text(SRT_TEXT, encoding="utf-8")
    (folder / "settings.yaml").write_text("telemetry_endpoint: https://example.org/ingest\n", encoding="utf-8")
    expected = {
        "Croissant": "prices.xlsx", "Roquefort": "cheeses.ods", "Aveyron": "old-prices.xls",
        "centrifuge": "bees.pptx", "Moraines": "ice.odp", "dusk": "log.rtf", "treasury": "budget.eml",
        "punched": "budget.eml/minutes.pdf", "Eddystone": "Inbox/message-1.eml", "Zanzibar": "figures.msg",
        "cardamom": "figures.msg/forecast.txt", "tidal": "bundle.zip/inside/report.pdf",
        "telescope": "bundle.zip/docs.tar.gz/manual/guide.md", "haversine_distance": "geo.py",
        "caravan": "film.srt", "telemetry_endpoint": "settings.yaml",
    }
    if WORD_TOOL:
        shutil.copy(FIXTURES / "murano.doc", folder / "murano.doc")
        expected["Barovier"] = "murano.doc"
    if OCR_USABLE:
        make_png(folder / "harbour.png")
        make_scanned_pdf(folder / "scan.pdf", lines=["The lighthouse keeper counted", "ninety seven gulls."])
        expected |= {"schooners": "harbour.png", "gulls": "scan.pdf"}
    return expected


def relative(hit_path: str, folder: Path) -> str:
    return hit_path[len(str(folder)) + 1:]


def test_every_supported_kind_is_indexed_and_found(library, tmp_path):
    folder = tmp_path / "disk"
    expected = everything(folder, tmp_path)
    summary = finish(library.index_paths([folder]))
    assert [s.reason for s in summary.skipped] == ["1 member not read (formats not supported: .bin 1)"]
    for word, where in expected.items():
        found = [relative(h.path, folder) for h in library.search(f'"{word}"', k=5, mode="keyword")]
        assert where in found, (word, found)


def test_pages_sheets_slides_and_titles_reach_the_results(library, tmp_path):
    folder = tmp_path / "disk"
    folder.mkdir()
    make_xlsx(folder / "prices.xlsx")
    make_pptx(folder / "bees.pptx")
    make_mbox(folder / "Inbox")
    finish(library.index_paths([folder]))
    sheet = library.search('"Roquefort"', mode="keyword")[0]
    assert page_name(sheet.format, sheet.best.page, library.document_text(sheet.path).page_labels) == "sheet Dairy"
    slide = library.search('"centrifuge"', mode="keyword")[0]
    assert page_name(slide.format, slide.best.page) == "slide 2"
    message = library.search('"Eddystone"', mode="keyword")[0]
    assert message.title == "Lighthouse keepers" and message.file_type == "eml"


def test_members_answer_type_path_and_date_filters(library, tmp_path):
    folder = tmp_path / "disk"
    folder.mkdir()
    make_zip(folder / "bundle.zip", tmp_path)
    make_mbox(folder / "Inbox")
    (folder / "tidal.txt").write_text("Loose notes on tidal power.", encoding="utf-8")
    os.utime(folder / "Inbox", (1_700_000_000, 1_700_000_000))  # the file is from 2023
    finish(library.index_paths([folder]))
    assert {relative(h.path, folder) for h in library.search('"tidal" type:pdf', mode="keyword")} == {
        "bundle.zip/inside/report.pdf"}
    inside = library.search(f'"tidal" path:"{folder / "bundle.zip"}"', mode="keyword")
    assert [relative(h.path, folder) for h in inside] == ["bundle.zip/inside/report.pdf"]
    # the messages' Date header (March 2021) counts, not the mailbox file's time
    assert library.search('"Eddystone" before:2021-04 after:2021-03', mode="keyword")
    assert not library.search('"Eddystone" after:2023', mode="keyword")
    assert library.search('"Eddystone" type:email', mode="keyword")


def test_a_changed_archive_replaces_its_members_and_a_deleted_one_takes_them_along(library, tmp_path):
    import zipfile

    folder = tmp_path / "disk"
    folder.mkdir()
    archive = make_zip(folder / "bundle.zip", tmp_path)
    finish(library.index_paths([folder]))
    assert finish(library.index_paths([folder])).unchanged == 1
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("notes.txt", "Only the quinoa harvest is left.")
    finish(library.index_paths([folder]))
    assert library.search('"quinoa"', mode="keyword")
    assert not library.search('"tidal"', mode="keyword") and not library.search('"saffron"', mode="keyword")
    archive.unlink()
    summary = finish(library.index_paths([folder]))
    assert summary.removed == 2 and library.status().documents == 0


def test_members_a_killed_run_stored_without_their_file_are_read_again_not_counted_removed(library, tmp_path):
    import gzip

    folder = tmp_path / "disk"
    folder.mkdir()
    with gzip.open(folder / "changelog.gz", "wt", encoding="utf-8") as f:
        f.write("The saffron release fixes the tidal importer.\n")
    finish(library.index_paths([folder]))
    container = str(folder / "changelog.gz")
    assert [p for p in library.store.documents_under(str(folder)) if p != container]  # its member
    library.store.remove_documents([container])  # as a kill leaves it: the member, not its file's record
    summary = finish(library.index_paths([folder]))
    assert summary.removed == 0 and summary.indexed == 1
    assert library.search('"saffron"', mode="keyword") and library.status().documents == 1
    (folder / "changelog.gz").unlink()
    assert finish(library.index_paths([folder])).removed == 2  # a file that is gone still counts


def test_forgetting_a_member_keeps_it_out_of_reindexing(library, tmp_path):
    folder = tmp_path / "disk"
    folder.mkdir()
    make_zip(folder / "bundle.zip", tmp_path)
    finish(library.index_paths([folder]))
    member = folder / "bundle.zip" / "notes.txt"
    assert library.forget(member) == 1
    (folder / "bundle.zip").touch()  # same content: the archive is not read again
    finish(library.index_paths([folder]))
    assert not library.search('"saffron"', mode="keyword")
    os.utime(folder / "bundle.zip", (1, 1))
    with (folder / "bundle.zip").open("ab") as f:
        f.write(b"")  # a changed time alone does not re-read it; the exclusion holds either way
    finish(library.reindex(folder))
    assert not library.search('"saffron"', mode="keyword") and library.search('"tidal"', mode="keyword")
    # the archive, the pdf, the tar.gz inside it and the guide in that
    assert library.forget(folder / "bundle.zip") == 4
    assert library.status().documents == 0


def test_open_document_unpacks_a_member_and_the_preview_reads_stored_text(library, tmp_path):
    folder = tmp_path / "disk"
    folder.mkdir()
    make_zip(folder / "bundle.zip", tmp_path)
    make_eml(folder / "budget.eml", tmp_path)
    finish(library.index_paths([folder]))
    guide = library.search('"telescope"', mode="keyword")[0]
    opened = library.open_document(guide.path)
    assert opened.name == "guide.md" and opened.read_text(encoding="utf-8").startswith("# Guide")
    attachment = library.search('"punched"', mode="keyword")[0]
    assert library.open_document(attachment.path).read_bytes().startswith(b"%PDF-")
    (folder / "bundle.zip").unlink()  # the preview does not need the archive any more
    text = library.document_text(guide.path)
    assert text.text[guide.best.start:guide.best.end] in text.text and "telescope" in text.text
    assert library.open_document(str(folder / "budget.eml")) == folder / "budget.eml"


def test_a_missing_word_tool_is_a_skip_naming_it(library, tmp_path, monkeypatch):
    # The documents are read in a child process: it finds its programs on this PATH.
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs"))
    monkeypatch.delenv("BABELFIND_TOOLS", raising=False)
    folder = tmp_path / "disk"
    folder.mkdir()
    shutil.copy(FIXTURES / "murano.doc", folder / "murano.doc")
    summary = finish(library.index_paths([folder]))
    assert summary.skipped[0].reason.startswith("legacy Word .doc needs antiword or catdoc")


def test_huge_mailbox_is_refused_without_being_read(library, tmp_path):
    folder = tmp_path / "disk"
    folder.mkdir()
    with (folder / "archive.mbox").open("wb") as f:
        f.write(b"From a@b Sat Jan  1 00:00:00 2000\nFrom: a@b\nTo: c@d\nSubject: s\n\nbody\n")
        f.truncate(1 << 30)  # 1 GiB, sparse
    summary = finish(library.index_paths([folder]))
    assert "file too large (1024.0 MB" in summary.skipped[0].reason


@pytest.mark.skipif(not OCR_USABLE, reason="no OCR engine installed (tesseract or rapidocr)")
def test_ocr_can_be_turned_off_in_the_settings(babelfind_home, tmp_path):
    from engine.config import save_settings

    paths = data_paths(babelfind_home)
    save_settings(paths, ocr=False)
    folder = tmp_path / "disk"
    folder.mkdir()
    make_png(folder / "harbour.png")
    lib = Library.open(paths, encoder=WordEncoder())
    try:
        summary = finish(lib.index_paths([folder]))
    finally:
        lib.close()
    assert summary.skipped[0].reason == "an image: OCR is turned off in the settings"
