"""The "Parallel sentences" window over a real Library: mine, review, threshold, export."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from mining_fakes import ENGLISH, GERMAN, TranslationEncoder
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication

from app.gui.qt_tools import install_tools
from app.gui.search.qt_main_window import QtMainWindow
from app.gui.mining.qt_panel import QtMiningPanel
from app.gui.mining.qt_pairs_model import KEEP, SCORE
from app.gui.common.qt_worker import running_workers
from engine.mining.bitext_io import read_tmx, read_tsv
from engine.errors import BabelfindError, InputError

MINE_TIMEOUT_MS = 60_000
ORDER = [2, 0, 5, 1, 4, 3, 7, 6]  # shuffled, so the pairs are mined (not aligned in order)


@pytest.fixture
def documents(tmp_path):
    de = tmp_path / "de.txt"
    de.write_text("\n".join(GERMAN) + "\n", encoding="utf-8")
    en = tmp_path / "en.txt"
    en.write_text("\n".join(ENGLISH[j] for j in ORDER) + "\n", encoding="utf-8")
    return de, en


@pytest.fixture
def panel(qtbot, library):
    widget = QtMiningPanel(library, encoder=TranslationEncoder())
    qtbot.addWidget(widget)
    widget.show()
    yield widget
    widget.shutdown()


def mine(qtbot, panel, src: Path, tgt: Path) -> None:
    panel.set_side(0, src)
    panel.set_side(1, tgt)
    with qtbot.waitSignal(panel.run_button.clicked):
        qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.worker is None, timeout=MINE_TIMEOUT_MS)


def test_mining_fills_the_table_with_every_translation_and_the_languages(qtbot, panel, documents):
    mine(qtbot, panel, *documents)
    assert panel.error.text() == ""
    table = panel.table.model()
    assert table.rowCount() == 8
    shown = {(table.index(r, 2).data(), table.index(r, 3).data()) for r in range(8)}
    assert shown == set(zip(GERMAN, ENGLISH))
    assert panel.side_languages[0].text() == "language: de" and panel.side_languages[1].text() == "language: en"
    assert panel.kept_label.text().startswith("8 of 8 pairs kept")
    assert not running_workers()


def test_the_table_sorts_by_score_both_ways(qtbot, panel, documents):
    mine(qtbot, panel, *documents)
    table = panel.table.model()
    panel.table.sortByColumn(SCORE, Qt.SortOrder.AscendingOrder)
    ascending = [float(table.index(r, SCORE).data()) for r in range(table.rowCount())]
    assert ascending == sorted(ascending)
    panel.table.sortByColumn(SCORE, Qt.SortOrder.DescendingOrder)
    descending = [float(table.index(r, SCORE).data()) for r in range(table.rowCount())]
    assert descending == sorted(ascending, reverse=True)


def test_moving_the_threshold_changes_the_kept_count_and_the_histogram_marker(qtbot, panel, documents):
    mine(qtbot, panel, *documents)
    scores = sorted(p.score for p in panel.pairs.pairs())
    assert sum(panel.histogram.counts) == 8
    panel.slider.setValue(panel.slider.maximum() // 2)
    middle = panel.threshold()
    expected = sum(s > middle for s in scores)
    assert 0 < expected < 8  # the fake encoder's scores spread across the range
    assert len(panel.pairs.kept()) == expected and panel.table.model().rowCount() == expected
    assert panel.kept_label.text().startswith(f"{expected} of 8 pairs kept")
    assert panel.histogram.threshold == middle
    panel.slider.setValue(panel.slider.maximum())
    assert panel.pairs.kept() == [] and panel.kept_label.text().startswith("0 of 8")
    panel.slider.setValue(0)
    assert len(panel.pairs.kept()) == 8


def test_the_slider_starts_at_the_default_threshold_and_can_lower_it(qtbot, panel, tmp_path):
    from engine.mining.bitext import DEFAULT_THRESHOLDS

    de = tmp_path / "de.txt"
    de.write_text("\n".join(GERMAN + ["Die Steuererklärung ist fällig."]) + "\n", encoding="utf-8")
    en = tmp_path / "en.txt"
    strays = ["Quantum computers need cold rooms.", "He sold his bicycle."]
    en.write_text("\n".join([ENGLISH[j] for j in ORDER] + strays) + "\n", encoding="utf-8")
    mine(qtbot, panel, de, en)
    total = len(panel.pairs.pairs())
    assert total > 8 and "candidate pairs mined" in panel.stage.text()
    assert abs(panel.threshold() - DEFAULT_THRESHOLDS["neutral"]["ratio"]) < 0.02  # nearest slider step
    assert len(panel.pairs.kept()) == 8 and panel.table.model().rowCount() == 8
    panel.slider.setValue(0)
    assert len(panel.pairs.kept()) == total and panel.table.model().rowCount() == total


def test_a_rejected_pair_is_left_out_of_the_tsv_and_tmx_parses(qtbot, panel, documents, tmp_path):
    mine(qtbot, panel, *documents)
    table = panel.table.model()
    rejected_src = table.index(0, 2).data()
    # untick the Keep box of the first row, as a click on the check box would
    assert table.setData(table.index(0, KEEP), Qt.CheckState.Unchecked.value, Qt.ItemDataRole.CheckStateRole)
    assert "1 rejected" in panel.kept_label.text()
    tsv = panel.export_pairs(tmp_path / "pairs.tsv")
    rows = read_tsv(tsv)
    assert len(rows) == 7 and rejected_src not in {src for _, src, _ in rows}
    tmx_rows, src_lang, tgt_lang = read_tmx(panel.export_pairs(tmp_path / "pairs.tmx"))
    assert (src_lang, tgt_lang) == ("de", "en")
    assert {src for _, src, _ in tmx_rows} == {src for _, src, _ in rows}
    assert ET.parse(tmp_path / "pairs.tmx").getroot().get("version") == "1.4"
    # accept it again through the buttons: select the row and press Accept
    panel.table.selectRow(0)
    qtbot.mouseClick(panel.accept_button, Qt.MouseButton.LeftButton)
    assert len(panel.pairs.kept()) == 8


def test_copy_puts_the_selected_pairs_on_the_clipboard(qtbot, panel, documents):
    mine(qtbot, panel, *documents)
    panel.table.selectRow(0)
    row = panel.selected_rows()[0]
    pair = panel.pairs.pairs()[row]
    qtbot.mouseClick(panel.copy_button, Qt.MouseButton.LeftButton)
    assert QApplication.clipboard().text() == f"{pair.src_text}\t{pair.tgt_text}\n"


def test_an_empty_file_shows_the_typed_error_in_the_panel(qtbot, panel, documents, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    with qtbot.waitSignal(panel.failed, timeout=MINE_TIMEOUT_MS) as failed:
        mine(qtbot, panel, empty, documents[1])
    assert isinstance(failed.args[0], BabelfindError)
    assert "empty.txt" in str(failed.args[0])
    assert panel.error.text() == str(failed.args[0]) and panel.error.text()
    assert panel.table.model().rowCount() == 0 and panel.run_button.isEnabled()


def test_two_documents_in_one_language_show_the_typed_error(qtbot, panel, documents, tmp_path):
    other = tmp_path / "en2.txt"
    other.write_text("\n".join(reversed(ENGLISH)) + "\n", encoding="utf-8")
    with qtbot.waitSignal(panel.failed, timeout=MINE_TIMEOUT_MS) as failed:
        mine(qtbot, panel, documents[1], other)
    assert isinstance(failed.args[0], InputError)
    assert "same language (en)" in panel.error.text()
    assert panel.table.model().rowCount() == 0


def test_cancel_stops_mining_and_leaves_no_thread(qtbot, panel, documents):
    panel.set_side(0, documents[0])
    panel.set_side(1, documents[1])
    panel.mine()
    assert panel.cancel_button.isEnabled() and not panel.run_button.isEnabled()
    qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)  # stops at the next event
    qtbot.waitUntil(lambda: panel.worker is None, timeout=MINE_TIMEOUT_MS)
    assert panel.stage.text() == "Cancelled"
    assert panel.table.model().rowCount() == 0 and panel.run_button.isEnabled()
    assert not running_workers()


def test_indexed_documents_are_offered_on_both_sides(qtbot, library, documents):
    for _ in library.index_paths(list(documents)):
        pass
    widget = QtMiningPanel(library, encoder=TranslationEncoder())
    qtbot.addWidget(widget)
    names = [widget.side_combos[0].itemText(i).split()[0] for i in range(widget.side_combos[0].count())]
    assert names == ["de.txt", "en.txt"]
    assert widget.side_path(0) == documents[0] and widget.side_path(1) == documents[1]
    assert widget.side_languages[0].text() == "language: de"
    assert widget.side_languages[1].text() == "language: en"


def test_the_tools_menu_opens_one_panel_over_the_windows_library(qtbot, library):
    window = QtMainWindow(library, QSettings())
    install_tools(window)
    qtbot.addWidget(window)
    try:
        find = next(a for a in window.menus.tools.actions() if a.text() == "Find &parallel sentences...")
        find.trigger()
        panel = window.tool_windows["mine"]
        assert isinstance(panel, QtMiningPanel) and panel.isVisible() and panel.library is library
        find.trigger()
        assert window.tool_windows["mine"] is panel  # the same window, its pairs kept
        train = next(a for a in window.menus.tools.actions() if a.text() == "Train a &model...")
        train.trigger()
        assert window.tool_windows["train"].isVisible()
    finally:
        window.shutdown()


def test_model_row_mines_with_a_registered_model_and_compares_speeds(qtbot, library, documents, tmp_path):
    from laser_models import make_tiny_laser
    from trainer.laser.bilstm import export_laser

    files = make_tiny_laser(tmp_path / "laser")
    export_laser(files.checkpoint, files.spm, files.cvocab, "tiny-laser", paths=library.paths)
    widget = QtMiningPanel(library, encoder=TranslationEncoder())
    qtbot.addWidget(widget)
    try:
        row = widget.model_row
        assert row.model.itemText(0) == "Library model (fake)"
        assert [row.compare.itemText(i) for i in range(row.compare.count())] == ["(none)", "fake", "tiny-laser"]
        row.choose(None, "tiny-laser")
        mine(qtbot, widget, *documents)
        assert widget.error.text() == ""
        speed = widget.speed.text()
        assert speed.startswith("Encoding speed: fake: ") and "| tiny-laser: " in speed and "x faster" in speed
        assert widget.table.model().rowCount() == 8  # the table shows the first model's pairs

        row.choose("tiny-laser")  # the student alone: its vectors find the pairs
        mine(qtbot, widget, *documents)
        assert widget.error.text() == "" and widget.speed.text().startswith("Encoding speed: tiny-laser: ")
        assert isinstance(row.models(None)[0], str) and len(row.models(None)) == 1
        with pytest.raises(ValueError):
            row.choose("not-registered")
    finally:
        widget.shutdown()
    assert not running_workers()
