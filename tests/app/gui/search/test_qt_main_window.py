"""The real window over a real Library: drop, index, search, preview, cancel, skipped."""

from __future__ import annotations

from pathlib import Path

import pytest
from gui_helpers import drop, drop_and_wait, type_query, write_files
from helpers import WordEncoder
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app.gui.common.qt_worker import running_workers
from engine.config import data_paths
from engine.events import IndexProgress
from engine.indexer import IndexerConfig
from engine.library import Library

CORPUS = {
    "bees.txt": "Beekeeping notes.\n\nHoney bees collect nectar from flowers and the hive stores "
    "honey for the winter. Beekeepers harvest honey in late summer.",
    "trains/railway.txt": "The railway crosses the steppe. Long trains carry freight and passengers "
    "across the continent. The journey takes seven days.",
    "trains/deutsch.md": "Der Zug fährt durch die Berge. Die Bahnstrecke ist sehr alt und steil. "
    "Viele Reisende fahren im Sommer mit dem Zug.",
}


@pytest.fixture
def library(babelfind_home):
    # small write batches, so a cancel after a few files has committed some of them
    config = IndexerConfig(batch_passages=4)
    lib = Library.open(data_paths(babelfind_home), encoder=WordEncoder(), config=config)
    yield lib
    lib.close()


def test_drop_a_folder_then_search_shows_the_document_and_its_passage(qtbot, window, library, tmp_path):
    corpus = write_files(tmp_path / "corpus", CORPUS)
    drop_and_wait(qtbot, window, [corpus])
    assert [Path(r.path) for r in library.roots()] == [corpus]
    assert window.collections.model.rowCount() == 1

    type_query(qtbot, window, "honey bees nectar")
    first = window.results.model().index(0, 0).data(Qt.ItemDataRole.DisplayRole)
    assert first == "bees.txt"
    hit = window.results.current_hit()
    assert hit is not None and Path(hit.path).name == "bees.txt"
    # the preview shows the document, scrolled to and highlighting the best passage
    assert window.preview.hit() is hit
    start, end = window.preview.highlighted_range()
    assert (start, end) == (hit.best.start, hit.best.end)
    shown = window.preview.editor.toPlainText()
    assert shown[start:end] == hit.best.text
    assert "nectar" in shown[start:end]
    cursor = window.preview.editor.textCursor()
    assert cursor.position() == start


def test_cancel_during_indexing_leaves_a_consistent_searchable_index(qtbot, window, library, tmp_path):
    files = {f"notes/note{i:03}.txt": f"Note number {i} about topic {i % 7}. " * 20 for i in range(150)}
    files["notes/aaa-bees.txt"] = CORPUS["bees.txt"]
    corpus = write_files(tmp_path / "big", files)
    seen: list[IndexProgress] = []

    def cancel_after_some(event) -> None:
        seen.append(event)
        if isinstance(event, IndexProgress) and event.files_done >= 5:
            window.progress.cancel_button.click()

    window.jobs.progress.connect(cancel_after_some)
    assert drop(window, [corpus])
    worker = window.jobs.worker()
    with qtbot.waitSignal(window.jobs.cancelled, timeout=60_000):
        pass
    qtbot.waitUntil(lambda: not window.jobs.busy(), timeout=60_000)
    assert worker not in running_workers()
    assert not window.progress.isVisible()

    status = library.status()
    roots = library.roots()
    assert 0 < status.documents < len(files), "cancel should stop part way"
    assert status.documents == sum(r.documents for r in roots)
    assert status.passages == sum(r.passages for r in roots)
    # the sidebar shows what the engine holds
    row = window.collections.model.item(0)
    assert (row.documents, row.passages) == (roots[0].documents, roots[0].passages)
    type_query(qtbot, window, "honey bees nectar")
    assert window.results_model.rowCount() > 0  # search still works after a cancel

    # and indexing again finishes the job
    window.jobs.progress.disconnect(cancel_after_some)
    drop_and_wait(qtbot, window, [corpus])
    assert library.status().documents == len(files)


def test_a_junk_pdf_appears_in_the_skipped_list_with_its_reason(qtbot, window, tmp_path):
    corpus = write_files(tmp_path / "mixed", {"good.txt": CORPUS["bees.txt"], "broken.pdf": b"this is not a PDF at all"})
    drop_and_wait(qtbot, window, [corpus])
    skipped = window.skipped.model.items()
    assert [Path(s.path).name for s in skipped] == ["broken.pdf"]
    assert skipped[0].reason  # the engine's reason, shown as is
    assert window.skipped.isVisible()
    reason_cell = window.skipped.model.index(0, 1).data()
    assert reason_cell == skipped[0].reason
    assert "1 file could not be indexed" in window.skipped.title.text()
    # after a restart the list comes back from the engine through View > Skipped files
    window.skipped.show_skipped([], replace=True)
    assert not window.skipped.isVisible()
    window.menus.view.actions()[1].trigger()
    assert [(Path(s.path).name, s.reason) for s in window.skipped.model.items()] == [("broken.pdf", skipped[0].reason)]
    assert window.skipped.isVisible()


def test_dropping_text_without_urls_is_refused(window):
    from PySide6.QtCore import QMimeData, QPoint
    from PySide6.QtGui import QDragEnterEvent

    mime = QMimeData()
    mime.setText("just words")
    event = QDragEnterEvent(QPoint(5, 5), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, event)
    assert not event.isAccepted()
    assert not window.jobs.busy()


def test_window_stays_searchable_while_indexing(qtbot, window, library, tmp_path):
    first = write_files(tmp_path / "first", {"bees.txt": CORPUS["bees.txt"]})
    drop_and_wait(qtbot, window, [first])
    many = write_files(tmp_path / "second", {f"n{i}.txt": f"Filler text number {i}. " * 30 for i in range(120)})
    searched_during: list[int] = []

    def search_once(event) -> None:
        if not searched_during and isinstance(event, IndexProgress) and event.files_done >= 3:
            window.search_bar.field.setText("honey bees nectar")
            window.run_search()  # the GUI thread answers while the worker indexes
            searched_during.append(window.results_model.rowCount())

    window.jobs.progress.connect(search_once)
    drop_and_wait(qtbot, window, [many])
    assert searched_during and searched_during[0] >= 1


def test_engine_errors_from_a_job_are_shown_not_raised(qtbot, window, tmp_path):
    missing = tmp_path / "gone"
    window.index_paths([missing])
    qtbot.waitUntil(lambda: not window.jobs.busy(), timeout=30_000)
    assert window.last_error is not None
    assert str(missing) in window.statusBar().currentMessage()


def test_files_dropped_on_the_search_field_or_preview_are_indexed_too(qtbot, window, library, tmp_path):
    from PySide6.QtCore import QMimeData, QPoint, QPointF, QUrl
    from PySide6.QtGui import QDragEnterEvent, QDropEvent

    corpus = write_files(tmp_path / "dropped", {"bees.txt": CORPUS["bees.txt"]})
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(corpus))])
    mime.setText(str(corpus))  # file managers add the paths as text as well
    for target in (window.search_bar.field, window.preview.editor.viewport()):
        centre = target.rect().center()
        buttons, modifiers = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
        enter = QDragEnterEvent(QPoint(centre), Qt.DropAction.CopyAction, mime, buttons, modifiers)
        QApplication.sendEvent(target, enter)
        QApplication.sendEvent(target, QDropEvent(QPointF(centre), Qt.DropAction.CopyAction, mime, buttons, modifiers))
        assert window.search_bar.field.text() == ""  # nothing was pasted into the field
    qtbot.waitUntil(lambda: not window.jobs.busy(), timeout=30_000)
    assert [Path(r.path) for r in library.roots()] == [corpus]
