"""The window as a daily tool: keyboard path, result menu, dates and sorting, failed
opens, the skipped list folding away, the preview at the passage, query history."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from gui_helpers import drop_and_wait, shown_names, type_query, write_files
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox

from app.gui.common import qt_files
from app.gui.search.qt_results_view import card_facts
from app.gui.search.qt_search_bar import language_item_text

CORPUS = {
    "a/zebra-bees.txt": "Honey bees collect nectar from flowers. The hive stores honey for the winter.",
    "b/apple-bees.txt": "Bumble bees are large and furry bees. They collect nectar in cold weather.",
    "c/mango-bees.txt": "Bees visit mango flowers for nectar; the honey tastes of fruit. Bees everywhere.",
    "d/bienen.txt": "Die Bienen sammeln Nektar von den Blumen. Bienen machen Honig für den Winter. bees nectar",
}
DAY = 86_400


@pytest.fixture
def indexed(qtbot, window, tmp_path):
    corpus = write_files(tmp_path / "corpus", CORPUS)
    # distinct dates: mango newest, zebra oldest
    for age, name in enumerate(["c/mango-bees.txt", "b/apple-bees.txt", "d/bienen.txt", "a/zebra-bees.txt"]):
        stamp = 1_700_000_000 - age * DAY
        os.utime(corpus / name, (stamp, stamp))
    drop_and_wait(qtbot, window, [corpus])
    return corpus


def test_tab_goes_from_search_to_results_to_preview(qtbot, window, indexed):
    type_query(qtbot, window, "bees nectar")
    field = window.search_bar.field
    assert field.hasFocus()
    QTest.keyClick(field, Qt.Key.Key_Tab)
    assert window.results.hasFocus()
    QTest.keyClick(window.results, Qt.Key.Key_Tab)
    assert window.preview.editor.hasFocus()
    QTest.keyClick(window.preview.editor, Qt.Key.Key_Backtab)
    assert window.results.hasFocus()
    assert window.search_bar.language.currentData() == ""  # no filter changed on the way
    combo = window.search_bar.language
    combo.setFocus()
    QTest.keyClick(combo, Qt.Key.Key_Down)
    assert combo.currentIndex() == 0 and combo.view().isVisible()  # Down opens the list, changes nothing
    combo.hidePopup()


def test_enter_in_the_search_field_opens_the_selected_result(qtbot, window, indexed, opened):
    type_query(qtbot, window, "bees nectar")
    field = window.search_bar.field
    QTest.keyClick(field, Qt.Key.Key_Down)
    chosen = window.results.current_hit()
    assert window.results.currentIndex().row() == 1
    with qtbot.assertNotEmitted(window.searched):
        QTest.keyClick(field, Qt.Key.Key_Return)
    assert opened == [("open", chosen.path)]
    assert window.search_bar.recent_queries()[0] == "bees nectar"


def test_result_context_menu_actions(qtbot, window, library, indexed, opened, monkeypatch):
    type_query(qtbot, window, "bees nectar")
    assert window.results.contextMenuPolicy() == Qt.ContextMenuPolicy.CustomContextMenu
    index = window.results.model().index(1, 0)
    hit = index.data(window.results_model.HitRole)
    menu = window.results.context_menu(index)
    actions = {a.text(): a for a in menu.actions() if a.text()}
    assert list(actions) == ["Open", "Show in folder", "Copy path", "Copy passage", "Forget this document"]
    assert window.results.current_hit() is hit  # the menu acts on the card under the mouse
    actions["Copy path"].trigger()
    assert QGuiApplication.clipboard().text() == hit.path
    actions["Copy passage"].trigger()
    assert QGuiApplication.clipboard().text() == hit.best.text
    actions["Open"].trigger()
    actions["Show in folder"].trigger()
    assert opened == [("open", hit.path), ("folder", hit.path)]
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    with qtbot.waitSignal(window.searched, timeout=5000):
        actions["Forget this document"].trigger()
    assert hit.path not in [h.path for h in window.results_model.hits()]
    assert library.excluded() == [hit.path]  # re-indexing the folder leaves it out


def test_cards_show_date_and_size_and_the_results_sort(qtbot, window, indexed):
    type_query(qtbot, window, "bees nectar")
    relevance = shown_names(window)
    assert len(relevance) == 4
    first = window.results.model().index(0, 0)
    path = Path(first.data(window.results_model.PathRole))
    facts = card_facts(first.data(window.results_model.ModifiedRole), first.data(window.results_model.SizeRole))
    assert facts.endswith(f"{path.stat().st_size} bytes") and " 2023" in facts
    assert "2023" in first.data(Qt.ItemDataRole.ToolTipRole)
    sort = window.results_pane.sort
    sort.setCurrentText("Newest first")
    assert shown_names(window) == ["mango-bees.txt", "apple-bees.txt", "bienen.txt", "zebra-bees.txt"]
    sort.setCurrentText("Oldest first")
    assert shown_names(window) == ["zebra-bees.txt", "bienen.txt", "apple-bees.txt", "mango-bees.txt"]
    sort.setCurrentText("Name")
    assert shown_names(window) == sorted(relevance)
    sort.setCurrentText("Folder path")
    assert shown_names(window) == ["zebra-bees.txt", "apple-bees.txt", "mango-bees.txt", "bienen.txt"]
    sort.setCurrentText("Relevance")
    assert shown_names(window) == relevance
    assert window.preview.hit() is window.results.current_hit()


def test_language_filter_shows_names_with_codes(qtbot, window, indexed):
    type_query(qtbot, window, "bees nectar")
    combo = window.search_bar.language
    texts = [combo.itemText(i) for i in range(combo.count())]
    assert "German · de (1)" in texts and "English · en (3)" in texts
    assert language_item_text("el", 2) == "Greek · el (2)" and language_item_text("ko", 1) == "Korean · ko (1)"


def test_failed_open_says_so_with_the_path_to_copy(qtbot, window, indexed, monkeypatch):
    monkeypatch.setattr(qt_files, "open_file", lambda p: False)
    type_query(qtbot, window, "bees nectar")
    hit = window.results.current_hit()
    window.results.setFocus()
    QTest.keyClick(window.results, Qt.Key.Key_Return)
    box = window.open_failed_box
    assert box.isVisible()
    assert box.text() == f"Open failed: no application on this desktop is set up to open {Path(hit.path).name}"
    assert box.informativeText() == hit.path
    assert window.statusBar().currentMessage().startswith("Open failed:")
    copy = next(b for b in box.buttons() if b.text() == "Copy path")
    copy.click()
    assert QGuiApplication.clipboard().text() == hit.path
    Path(hit.path).unlink()
    monkeypatch.setattr(qt_files, "show_in_folder", lambda p: False)
    window.preview.folder_button.click()
    assert window.open_failed_box.text() == f"Show in folder failed: {hit.path} no longer exists"
    window.open_failed_box.close()


def test_skipped_panel_folds_away_at_the_next_search(qtbot, window, tmp_path):
    corpus = write_files(tmp_path / "mixed", {"bees.txt": CORPUS["a/zebra-bees.txt"],
                                              "broken.pdf": b"this is not a PDF at all",
                                              "de.mo": b"\xde\x12\x04\x95" + bytes(range(256)) * 8})
    drop_and_wait(qtbot, window, [corpus])
    panel = window.skipped
    assert panel.isVisible() and panel.is_expanded()
    reasons = {Path(s.path).name: s.reason for s in panel.model.items()}
    assert reasons["de.mo"] == "not a supported format: .mo"
    type_query(qtbot, window, "honey")
    assert panel.isVisible() and not panel.is_expanded()  # the title line stays, the list folds
    assert panel.title.text() == "2 files could not be indexed"
    panel.title.click()
    assert panel.is_expanded()


def test_preview_is_at_the_passage_on_the_first_selection(qtbot, window, tmp_path):
    # long paragraphs: they wrap into more lines when the pane grows after the first hit
    filler = "\n\n".join(f"Paragraph {i}. " + "Nothing to see here at all, just filler text. " * 15
                         for i in range(150))
    text = filler + "\n\nThe glacier retreats every summer because the alps grow warmer."
    drop_and_wait(qtbot, window, [write_files(tmp_path / "long", {"long.txt": text})])
    type_query(qtbot, window, "glacier retreats alps warmer")
    editor = window.preview.editor
    start, _ = window.preview.highlighted_range()
    assert start > 5000

    def passage_visible() -> bool:
        cursor = editor.textCursor()
        cursor.setPosition(start)
        return editor.viewport().rect().contains(editor.cursorRect(cursor).center())

    qtbot.wait(300)  # the pane settles at its full size
    assert passage_visible()
    window.resize(window.width() - 200, window.height())
    qtbot.wait(300)
    assert passage_visible()  # a resize keeps it in view until the person scrolls


def test_down_in_the_empty_field_lists_earlier_searches(qtbot, window, indexed):
    for query in ("honey winter", "bees nectar"):
        type_query(qtbot, window, query)
        window.search_bar.remember_query()
    field = window.search_bar.field
    field.clear()
    QTest.keyClick(field, Qt.Key.Key_Down)
    completer = field.completer()
    popup = completer.popup()
    assert popup.isVisible()
    assert [popup.model().index(r, 0).data() for r in range(popup.model().rowCount())] == ["bees nectar", "honey winter"]
    popup.hide()


def test_a_lone_dropped_file_that_cannot_be_read_says_why_and_adds_no_folder(qtbot, window, tmp_path):
    mo = tmp_path / "de.mo"
    mo.write_bytes(b"\xde\x12\x04\x95" + bytes(range(256)) * 8)
    drop_and_wait(qtbot, window, [mo])
    assert [(s.path, s.reason) for s in window.skipped.model.items()] == [(str(mo), "not a supported format: .mo")]
    assert window.statusBar().currentMessage() == "Indexed 0 files (0 passages), 1 skipped"
    assert window.collections.model.rowCount() == 0  # no empty folder in Collections
    assert window.library.roots() == []


def test_a_lone_license_file_is_indexed_as_text(qtbot, window, tmp_path):
    license_file = write_files(tmp_path, {"LICENSE": "Permission is hereby granted, free of charge."}) / "LICENSE"
    drop_and_wait(qtbot, window, [license_file])
    assert window.statusBar().currentMessage() == "Indexed 1 file (1 passage)"
    type_query(qtbot, window, "permission granted free")
    assert Path(window.results.current_hit().path).name == "LICENSE"
