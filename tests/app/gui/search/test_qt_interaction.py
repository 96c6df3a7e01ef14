"""Keyboard, filters, copy/open, collections, watching and remembered state."""

from __future__ import annotations

from pathlib import Path

import pytest
from gui_helpers import drop_and_wait, type_query, write_files
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest

from app.gui.search.qt_main_window import QtMainWindow
from app.gui.search.qt_search_bar import language_item_text

CORPUS = {
    "en/bees.txt": "Honey bees collect nectar from flowers. The hive stores honey for the winter.",
    "en/bumblebees.txt": "Bumble bees are large and furry bees. They collect nectar in cold weather.",
    "de/bienen.txt": "Die Bienen sammeln Nektar von den Blumen. Bienen machen Honig für den Winter. "
    "Honig bees nectar Bienenstock.",
    "fr/abeilles.md": "Les abeilles récoltent le nectar des fleurs. La ruche garde le miel pour l'hiver, "
    "bees nectar miel.",
}


@pytest.fixture
def indexed(qtbot, window, tmp_path):
    corpus = write_files(tmp_path / "corpus", CORPUS)
    drop_and_wait(qtbot, window, [corpus])
    return corpus


def test_keyboard_ctrl_f_up_down_and_enter(qtbot, window, indexed, opened):
    window.results.setFocus()
    QTest.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert window.search_bar.field.hasFocus()
    type_query(qtbot, window, "bees nectar")
    assert window.results.currentIndex().row() == 0
    QTest.keyClick(window.search_bar.field, Qt.Key.Key_Down)
    assert window.results.currentIndex().row() == 1
    assert window.preview.hit() is window.results.current_hit()
    QTest.keyClick(window.search_bar.field, Qt.Key.Key_Up)
    assert window.results.currentIndex().row() == 0
    window.results.setFocus()
    QTest.keyClick(window.results, Qt.Key.Key_Return)
    assert opened == [("open", window.results.current_hit().path)]
    assert window.search_bar.recent_queries()[0] == "bees nectar"


def test_enter_searches_at_once_without_waiting_for_the_debounce(qtbot, window, indexed):
    field = window.search_bar.field
    field.setFocus()
    field.setText("honey winter")
    assert window.search_bar.debounce.isActive()
    with qtbot.waitSignal(window.searched, timeout=1000):
        QTest.keyClick(field, Qt.Key.Key_Return)
    assert not window.search_bar.debounce.isActive()
    assert window.results_model.rowCount() > 0


def test_language_facet_counts_and_filters_the_results(qtbot, window, indexed):
    type_query(qtbot, window, "bees nectar")
    hits = window.results_model.hits()
    by_language: dict[str, int] = {}
    for hit in hits:
        by_language[hit.best.language] = by_language.get(hit.best.language, 0) + 1
    combo = window.search_bar.language
    labels = {combo.itemData(i): combo.itemText(i) for i in range(combo.count())}
    assert labels[""] == "All languages"
    for language, count in by_language.items():
        assert labels[language] == language_item_text(language, count)
    assert labels["de"].startswith("German · de (")
    assert "de" in by_language and "en" in by_language
    combo.setCurrentIndex(combo.findData("de"))
    shown = [window.results.model().index(r, 0).data(window.results_model.HitRole) for r in range(window.results.model().rowCount())]
    assert shown and all(h.language == "de" for h in shown)
    assert window.preview.hit() is shown[0]
    combo.setCurrentIndex(combo.findData(""))
    assert window.results.model().rowCount() == len(hits)


def test_folder_and_file_type_filters_narrow_the_engine_search(qtbot, window, library, tmp_path, indexed):
    other = write_files(tmp_path / "other", {"more-bees.txt": "Bees and nectar again, in another folder."})
    drop_and_wait(qtbot, window, [other])
    type_query(qtbot, window, "bees nectar")
    assert {Path(h.path).parent.parent for h in window.results_model.hits()} >= {indexed}
    folder = window.search_bar.folder
    with qtbot.waitSignal(window.searched, timeout=1000):
        folder.setCurrentIndex(folder.findData(str(other)))
    assert [Path(h.path).name for h in window.results_model.hits()] == ["more-bees.txt"]
    with qtbot.waitSignal(window.searched, timeout=1000):
        folder.setCurrentIndex(0)
    file_type = window.search_bar.file_type
    with qtbot.waitSignal(window.searched, timeout=1000):
        file_type.setCurrentIndex(file_type.findData("md"))
    assert [Path(h.path).name for h in window.results_model.hits()] == ["abeilles.md"]


def test_copy_passage_open_and_show_in_folder(qtbot, window, indexed, opened):
    type_query(qtbot, window, "honey winter")
    hit = window.results.current_hit()
    window.preview.copy_button.click()
    assert QGuiApplication.clipboard().text() == hit.best.text
    window.preview.open_button.click()
    window.preview.folder_button.click()
    assert opened == [("open", hit.path), ("folder", hit.path)]


def test_preview_steps_through_the_documents_passages(qtbot, window, library, tmp_path):
    long_text = "\n\n".join(
        f"Paragraph {i}. " + ("Bees make honey from nectar. " if i in (2, 9) else "Nothing to see here at all. ") * 6
        for i in range(12)
    )
    drop_and_wait(qtbot, window, [write_files(tmp_path / "long", {"long.txt": long_text})])
    type_query(qtbot, window, "bees honey nectar")
    hit = window.results.current_hit()
    assert len(hit.passages) > 1
    ranges = []
    for _ in hit.passages:
        ranges.append(window.preview.highlighted_range())
        window.preview.next_button.click()
    assert ranges == [(p.start, p.end) for p in hit.passages]
    assert window.preview.highlighted_range() == ranges[0]  # wraps around


def test_collections_show_counts_and_remove_a_folder(qtbot, window, library, indexed):
    rows = window.collections.model.items()
    assert len(rows) == 1 and rows[0].documents == len(CORPUS) and rows[0].passages > 0
    assert window.collections.model.index(0, 1).data() == str(len(CORPUS))
    window.remove_root(rows[0].path, confirm=False)
    assert window.progress.isVisibleTo(window) and window.progress.title.text() == f"Removing {indexed.name}"
    qtbot.waitUntil(lambda: not window.jobs.busy(), timeout=10_000)
    assert library.roots() == [] and library.status().documents == 0
    assert window.statusBar().currentMessage() == f"Removed {indexed.name} ({len(CORPUS)} documents)"
    assert window.collections.model.rowCount() == 0
    assert window.collections.empty_hint.isVisibleTo(window)


def test_reindex_picks_up_a_new_file(qtbot, window, library, indexed):
    (indexed / "en" / "new.txt").write_text("A brand new note about wasps.", encoding="utf-8")
    window.collections.view.setCurrentIndex(window.collections.model.index(0, 0))
    window.collections.reindex_button.click()
    qtbot.waitUntil(lambda: not window.jobs.busy(), timeout=30_000)
    assert library.roots()[0].documents == len(CORPUS) + 1


def test_watched_folder_is_reindexed_by_itself(qtbot, window, library, indexed):
    model = window.collections.model
    model.setData(model.index(0, 0), Qt.CheckState.Checked.value, Qt.ItemDataRole.CheckStateRole)
    assert library.roots()[0].watch
    assert window.watch.watched() == {str(indexed.resolve())}
    new = indexed / "en" / "wasps.txt"
    new.write_text("Wasps build paper nests.", encoding="utf-8")
    (indexed / "en" / "bees.txt").unlink()

    def names(query: str) -> set[str]:
        return {Path(h.path).name for h in library.search(query, 10)}

    qtbot.waitUntil(lambda: "wasps.txt" in names("wasps paper nests") and not window.jobs.busy(), timeout=30_000)
    qtbot.waitUntil(lambda: "bees.txt" not in names("honey hive"), timeout=30_000)
    assert library.roots()[0].documents == len(CORPUS)  # one in, one out
    model.setData(model.index(0, 0), Qt.CheckState.Unchecked.value, Qt.ItemDataRole.CheckStateRole)
    assert window.watch.watched() == set()


def test_geometry_splitters_and_recent_queries_are_remembered(qtbot, library, indexed, window):
    window.resize(760, 500)  # inside the offscreen screen (800x600); not the default size
    window.main_splitter.setSizes([250, 490])
    type_query(qtbot, window, "honey")
    QTest.keyClick(window.search_bar.field, Qt.Key.Key_Return)
    sizes, size = window.main_splitter.sizes(), window.size()
    window.close()  # saves state; QSettings points at the test's temp folder
    again = QtMainWindow(library, QSettings())
    qtbot.addWidget(again)
    again.show()
    qtbot.waitExposed(again)
    try:
        restored = again.main_splitter.sizes()
        # The sidebar width is what the user set; the other pane takes what the layout
        # leaves, which can differ by a few pixels between two windows of the same size.
        assert restored[0] == sizes[0] and abs(sum(restored) - sum(sizes)) <= 16
        # The height is restored exactly. The width may not be: when the layout's minimum
        # width passes the offscreen screen's 800 pixels, the first window grows past the
        # screen and the restored one is fitted back onto it.
        assert again.height() == size.height() and abs(again.width() - size.width()) <= 16
        assert again.search_bar.recent_queries() == ["honey"]
    finally:
        again.shutdown()


def test_the_menus_hold_only_real_entries_and_tools_lists_the_two_tools(window):
    titles = [a.text() for a in window.menuBar().actions()]
    assert titles == ["&File", "&View", "&Tools", "&Help"]
    tools = [a.text() for a in window.menus.tools.actions()]
    assert tools == ["Train a &model...", "Find &parallel sentences..."]


def test_results_refresh_after_indexing_and_keep_the_selected_document(qtbot, window, tmp_path, indexed):
    type_query(qtbot, window, "bees nectar")
    window.results.move(1)
    reading = window.results.current_hit().path
    before = window.results_model.rowCount()
    more = write_files(tmp_path / "more", {"apiary.txt": "Bees nectar bees nectar: an apiary full of bees."})
    drop_and_wait(qtbot, window, [more])
    names = [Path(h.path).name for h in window.results_model.hits()]
    assert "apiary.txt" in names and len(names) == before + 1  # shown without typing again
    assert window.results.current_hit().path == reading
    assert window.preview.hit().path == reading
    type_query(qtbot, window, "honey winter")  # a new query starts at its best hit
    assert window.results.currentIndex().row() == 0
