"""The "Parallel sentences" window as a tool: it fits the screen, its pickers search,
its buttons stay put, its sort arrow points the right way, export starts in Documents."""

from __future__ import annotations


import pytest
from mining_fakes import ENGLISH, GERMAN, TranslationEncoder
from PySide6.QtCore import QRect, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog

from app.gui.common import qt_files
from app.gui.mining.qt_panel import QtMiningPanel
from app.gui.mining.qt_pairs_model import SCORE
from app.gui.common.qt_screen import fitted_rect

MINE_TIMEOUT_MS = 60_000


@pytest.fixture
def documents(tmp_path):
    # Moses-style names: one sentence a line, the language as the extension
    de, en = tmp_path / "corpus.de", tmp_path / "corpus.en"
    de.write_text("\n".join(GERMAN) + "\n", encoding="utf-8")
    en.write_text("\n".join(ENGLISH[j] for j in [2, 0, 5, 1, 4, 3, 7, 6]) + "\n", encoding="utf-8")
    return de, en


@pytest.fixture
def panel(qtbot, library, tmp_path):
    notes = tmp_path / "library"
    notes.mkdir()
    for name in ("bienen.txt", "abeilles.txt", "bees.txt", "railway.txt"):
        (notes / name).write_text(f"A short note called {name} with a sentence or two.")
    for _ in library.index_paths([notes]):
        pass
    widget = QtMiningPanel(library, encoder=TranslationEncoder())
    qtbot.addWidget(widget)
    widget.show()
    yield widget
    widget.shutdown()


def test_the_window_fits_the_screen_it_opens_on(qtbot, panel):
    available = panel.screen().availableGeometry()
    assert available.contains(panel.frameGeometry()), (panel.frameGeometry(), available)
    # a 1600x1000 screen with a task bar: the whole window, title bar included, stays on it
    rect = fitted_rect((1100, 720), (722, 471), QRect(0, 0, 1600, 960))
    assert QRect(0, 0, 1600, 960).contains(rect.adjusted(0, -40, 0, 0)) and rect.size().height() == 720
    small = fitted_rect((1100, 720), (722, 471), QRect(0, 0, 1280, 600))
    assert small.height() <= 600 - 40 and small.bottom() < 600


def test_document_pickers_search_by_any_part_of_the_name(qtbot, panel):
    picker = panel.pickers[0]
    assert picker.combo.isEditable() and picker.combo.count() == 4
    picker.combo.setFocus()
    picker.combo.lineEdit().clear()
    QTest.keyClicks(picker.combo.lineEdit(), "EILL")
    completer = picker.combo.completer()
    assert completer.completionCount() == 1 and "abeilles.txt" in completer.currentCompletion()
    popup = completer.popup()
    assert popup.isVisible()
    QTest.keyClick(popup, Qt.Key.Key_Down)
    QTest.keyClick(popup, Qt.Key.Key_Return)
    assert panel.side_path(0).name == "abeilles.txt"


def test_file_button_stays_put_when_the_language_is_known(qtbot, panel, documents):
    buttons = [p.choose_button for p in panel.pickers]
    before = [b.mapTo(panel, b.rect().topLeft()) for b in buttons]
    panel.set_side(0, documents[0])
    panel.set_side(1, documents[1])
    assert panel.side_languages[0].text() == "language: detected when mining"
    panel.mine()
    qtbot.waitUntil(lambda: panel.worker is None, timeout=MINE_TIMEOUT_MS)
    assert panel.error.text() == ""
    assert panel.side_languages[0].text() == "language: de"
    assert [b.mapTo(panel, b.rect().topLeft()) for b in buttons] == before
    assert "from 8 and 8 sentences" in panel.stage.text()


def widest_arrow_row(header, section: int) -> int:
    """The row where the sort arrow at the right end of `section` is widest: its base.

    Only the widest row is compared, because anti-aliasing leaves a few grey pixels
    around the tip that vary with the machine's load and fonts.
    """
    image = header.grab().toImage()
    right = header.sectionViewportPosition(section) + header.sectionSize(section)
    dark = [sum(1 for x in range(right - 24, right) if image.pixelColor(x, y).lightness() < 140) for y in range(image.height())]
    assert max(dark) >= 3, "no sort arrow drawn"
    return dark.index(max(dark))


def test_a_descending_score_column_shows_a_down_arrow(qtbot, panel, documents):
    panel.set_side(0, documents[0])
    panel.set_side(1, documents[1])
    panel.mine()
    qtbot.waitUntil(lambda: panel.worker is None, timeout=MINE_TIMEOUT_MS)
    header = panel.table.horizontalHeader()
    assert header.sortIndicatorSection() == SCORE and header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
    descending_base = widest_arrow_row(header, SCORE)
    panel.table.sortByColumn(SCORE, Qt.SortOrder.AscendingOrder)
    ascending_base = widest_arrow_row(header, SCORE)
    assert descending_base < ascending_base  # wide on top, pointing down; then pointing up


def test_export_and_file_dialogs_start_in_the_documents_folder(qtbot, panel, monkeypatch, tmp_path):
    assert qt_files.documents_folder().is_dir()  # the real one: Documents, else home
    documents_dir = tmp_path / "Documents"
    documents_dir.mkdir()
    import app.gui.mining.qt_document_picker as picker_module
    import app.gui.mining.qt_panel as panel_module

    monkeypatch.setattr(picker_module, "documents_folder", lambda: documents_dir)
    monkeypatch.setattr(panel_module, "documents_folder", lambda: documents_dir)
    asked = []
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (asked.append(a[2]), ("", ""))[1])
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (asked.append(a[2]), ("", ""))[1])
    panel._choose_export()
    panel.pickers[1].choose_button.click()
    assert asked == [str(documents_dir / "pairs.tsv"), str(documents_dir)]
