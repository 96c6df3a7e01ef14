"""The window with what sits on a real disk: sheets, slides, mail, archives and scans.

The preview names the sheet, slide or page and marks OCR text; "Open" on an archive
member unpacks it first; the file type facet offers kinds (E-mail, Spreadsheets...);
the settings turn OCR off.
"""

from __future__ import annotations

import pytest
from format_docs import make_mbox, make_png, make_pptx, make_xlsx, make_zip
from gui_helpers import drop_and_wait, type_query

from app.gui.search.qt_settings import QtSettingsDialog
from engine.config import ExtractLimits, load_settings
from engine.extract.ocr import ocr_setup


@pytest.fixture
def disk(qtbot, window, tmp_path):
    folder = tmp_path / "disk"
    folder.mkdir()
    make_xlsx(folder / "prices.xlsx")
    make_pptx(folder / "bees.pptx")
    make_mbox(folder / "Inbox")
    make_zip(folder / "bundle.zip", tmp_path)
    if ocr_setup(ExtractLimits()).usable:
        make_png(folder / "harbour.png")
    drop_and_wait(qtbot, window, [folder])
    return folder


def preview_meta(window) -> str:
    return window.preview.meta.text()


def test_preview_names_the_sheet_and_the_slide(qtbot, window, disk):
    type_query(qtbot, window, '"Roquefort"')
    assert "sheet Dairy" in preview_meta(window)
    type_query(qtbot, window, '"centrifuge"')
    assert "slide 2" in preview_meta(window)


def test_a_message_is_shown_by_its_subject(qtbot, window, disk):
    type_query(qtbot, window, '"Eddystone"')
    assert window.preview.title.text() == "Lighthouse keepers"
    assert "message message-1.eml" in preview_meta(window)


@pytest.mark.skipif(not ocr_setup(ExtractLimits()).usable, reason="no OCR engine installed")
def test_ocr_text_is_marked_in_the_preview(qtbot, window, disk):
    type_query(qtbot, window, '"schooners"')
    assert "text read by OCR" in preview_meta(window)
    assert "schooners" in window.preview.editor.toPlainText()


def test_open_on_an_archive_member_unpacks_it_and_show_in_folder_shows_the_archive(qtbot, window, disk, opened):
    type_query(qtbot, window, '"telescope"')
    window.preview.open_button.click()
    qtbot.waitUntil(lambda: bool(opened), timeout=10_000)
    qtbot.waitUntil(lambda: not window.unpack_worker.isRunning(), timeout=10_000)
    action, path = opened[0]
    assert action == "open" and path.endswith("guide.md") and "babelfind-open-" in path
    window.preview.folder_button.click()
    assert opened[1] == ("folder", str(disk / "bundle.zip"))


def test_file_type_facet_offers_kinds(qtbot, window, disk):
    facet = window.search_bar.file_type
    facet.setCurrentIndex(facet.findData("email"))
    type_query(qtbot, window, "Eddystone tidal")  # a message and an archived report
    paths = [hit.path for hit in window.results_model.hits()]
    assert paths and all("/Inbox/" in p for p in paths)


def test_settings_turn_ocr_off_for_the_next_indexing(qtbot, window, library):
    dialog = QtSettingsDialog(library)
    qtbot.addWidget(dialog)
    assert dialog.ocr.isChecked()
    dialog.ocr.setChecked(False)
    assert not dialog.ocr_engine.isEnabled()
    dialog.save()
    assert load_settings(library.paths)["ocr"] is False
    assert library.config.limits.ocr is False
