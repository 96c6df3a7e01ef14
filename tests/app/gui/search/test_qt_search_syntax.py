"""The search box's syntax in the window: marks on matched words, the match badge, the help
popover, typed-error hints, and the language facet counting every match."""

from __future__ import annotations

from pathlib import Path

from gui_helpers import drop_and_wait, type_query, write_files
from helpers import count_query_parses

from app.gui.search import qt_main_window
from app.gui.search.qt_results_view import MATCH_LABELS
from app.gui.search.qt_search_bar import query_help_html
from engine.query import QUERY_HELP

CORPUS = {
    "crash.txt": "The handler ffi_prep_closure_loc failed. Red Hat may redistribute the red paint.",
    "paint.txt": "Mixing paint: red and yellow give orange; the painter redistributes the colours.",
}


def test_preview_marks_whole_words_with_identifiers_intact(qtbot, window, tmp_path):
    drop_and_wait(qtbot, window, [write_files(tmp_path / "c", CORPUS)])
    type_query(qtbot, window, "ffi_prep_closure_loc red")
    assert Path(window.preview.hit().path).name == "crash.txt"
    assert window.preview.marked_words() == ["ffi_prep_closure_loc", "Red", "red"]
    hit = window.results_model.hits()[0]
    assert hit.matched_by in ("keywords", "both") and hit.matched_by in MATCH_LABELS
    assert "matched" in window.preview.meta.text()


def test_help_popover_and_syntax_errors_are_hints(qtbot, window, tmp_path):
    drop_and_wait(qtbot, window, [write_files(tmp_path / "c", CORPUS)])
    assert window.search_bar.help_action.toolTip() == query_help_html(QUERY_HELP)
    window.search_bar.show_help()  # must not raise offscreen
    type_query(qtbot, window, "paint lang:xx")
    assert "unknown language" in window.search_bar.count_label.text()
    assert window.results_model.rowCount() == 0 and window.last_error is None
    type_query(qtbot, window, 'paint -"red and"')
    assert [Path(h.path).name for h in window.results_model.hits()] == ["crash.txt"]


def test_language_facet_counts_every_match_not_only_those_shown(qtbot, window, tmp_path, monkeypatch):
    monkeypatch.setattr(qt_main_window, "RESULT_LIMIT", 2)
    files = {f"de/zug_{i}.txt": f"Der Zug {i} fährt morgens nach Innsbruck und abends zurück." for i in range(5)}
    files |= {f"en/train_{i}.txt": f"The train {i} goes to Innsbruck in the morning and back at night." for i in range(3)}
    drop_and_wait(qtbot, window, [write_files(tmp_path / "c", files)])
    type_query(qtbot, window, "Innsbruck")
    combo = window.search_bar.language
    labels = {combo.itemData(i): combo.itemText(i) for i in range(combo.count())}
    assert labels == {"": "All languages", "de": "German · de (5)", "en": "English · en (3)"}
    assert window.search_bar.count_label.text().startswith("2 of 8 documents")
    combo.setCurrentIndex(combo.findData("en"))
    assert window.results_model.rowCount() == 2
    assert all(h.language == "en" for h in window.results_model.hits())
    assert window.search_bar.count_label.text().startswith("2 of 3 documents")


def test_a_window_search_parses_its_query_once_even_with_a_language_chosen(qtbot, window, tmp_path, monkeypatch):
    files = {"de.txt": "Der Zug fährt morgens nach Innsbruck.", "en.txt": "The train goes to Innsbruck."}
    drop_and_wait(qtbot, window, [write_files(tmp_path / "c", files)])
    combo = window.search_bar.language
    type_query(qtbot, window, "Innsbruck")
    combo.setCurrentIndex(combo.findData("en"))  # two engine searches: the counts, then the facet's
    parses = count_query_parses(monkeypatch)
    with qtbot.waitSignal(window.searched, timeout=10_000):
        window.run_search()
    assert parses == ["Innsbruck"]
    assert [Path(h.path).name for h in window.results_model.hits()] == ["en.txt"]
    assert window.preview.marked_words() == ["Innsbruck"]  # marked from that one parse


def test_a_results_tooltip_says_why_it_stands_where_it_does(qtbot, window, tmp_path):
    from PySide6.QtCore import Qt

    drop_and_wait(qtbot, window, [write_files(tmp_path / "c", CORPUS)])
    type_query(qtbot, window, "red paint")
    tip = window.results_model.data(window.results_model.index(0), Qt.ItemDataRole.ToolTipRole)
    assert "why: cosine" in tip and "keywords" in tip and "score" in tip


def test_the_help_popover_lines_its_columns_up_in_a_table(qtbot):
    """A tooltip's proportional font cannot align the plain text's spaces: each syntax line
    is a row of a two-column table, and no word of the help is lost."""
    from PySide6.QtGui import QTextDocument, QTextTable

    document = QTextDocument()
    document.setHtml(query_help_html(QUERY_HELP))
    tables = [frame for frame in document.rootFrame().childFrames() if isinstance(frame, QTextTable)]
    syntax_lines = [line for line in QUERY_HELP.splitlines() if line.startswith("  ") and line[2] != " "]
    assert len(tables) == 1 and tables[0].columns() == 2 and tables[0].rows() == len(syntax_lines)
    first_column = [tables[0].cellAt(row, 0).firstCursorPosition().block().text() for row in range(tables[0].rows())]
    assert first_column[:3] == ["words", '"exact phrase"', '-word -"a b"']
    assert document.toPlainText().split() == QUERY_HELP.split()
