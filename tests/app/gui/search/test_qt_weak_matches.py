"""Weaker matches in the window: after a "Weaker matches" heading that cannot be selected,
dimmed, left out of the "N documents match" count and counted apart ("M weaker")."""

from __future__ import annotations

from pathlib import Path

from gui_helpers import drop_and_wait, listed_rows, type_query, write_files
from PySide6.QtCore import Qt
from search_corpora import HONEY_DOCS

from app.gui.search.qt_models import QtResultsModel
from app.gui.search.qt_results_view import MATCH_LABELS
from app.gui.search.qt_search_bar import result_count_text


def test_weaker_matches_follow_a_heading_and_are_counted_apart(qtbot, window, tmp_path):
    drop_and_wait(qtbot, window, [write_files(tmp_path / "c", HONEY_DOCS)])
    type_query(qtbot, window, "honey bees nectar")
    shown = listed_rows(window)
    assert shown[0] == ("bees.txt", False)
    assert shown[1] == (QtResultsModel.SEPARATOR_TEXT, True)
    assert ("wasps.txt", True) in shown[2:] and all(weak for _, weak in shown[1:])
    weak = len(shown) - 2
    assert window.search_bar.count_label.text().startswith(f"1 document matches  ·  {weak} weaker")
    heading = window.results.model().index(1, 0)
    assert window.results.model().flags(heading) == Qt.ItemFlag.NoItemFlags  # never selected
    assert window.results.context_menu(heading) is None
    # how each result matched is on its card
    assert [h.matched_by for h in window.results_model.hits()][:2] == ["both", "keywords"]
    assert all(h.matched_by in MATCH_LABELS for h in window.results_model.hits())


def test_the_cursor_steps_over_the_heading(qtbot, window, tmp_path):
    drop_and_wait(qtbot, window, [write_files(tmp_path / "c", HONEY_DOCS)])
    type_query(qtbot, window, "honey bees nectar")
    assert Path(window.results.current_hit().path).name == "bees.txt"
    window.results.move(1)
    assert window.results.current_hit() is not None and window.results.current_hit().weak
    window.results.move(-1)
    assert Path(window.results.current_hit().path).name == "bees.txt"


def test_only_strong_matches_show_no_heading(qtbot, window, tmp_path):
    drop_and_wait(qtbot, window, [write_files(tmp_path / "c", HONEY_DOCS)])
    type_query(qtbot, window, "Vladivostok steppe")
    assert listed_rows(window)[0] == ("trains.txt", False)
    assert QtResultsModel.SEPARATOR_TEXT not in [name for name, _ in listed_rows(window)]


def test_count_text():
    assert result_count_text(8, 8) == "8 documents match"
    assert result_count_text(2, 8) == "2 of 8 documents match"
    assert result_count_text(1, 1, 3) == "1 document matches  ·  3 weaker"
    assert result_count_text(0, 0, 2) == "No documents match  ·  2 weaker"
    assert result_count_text(0, 0) == "No documents match"
    assert result_count_text(2, 2, 0, (), (("car", 3),)) == "2 documents match  ·  3 left out for “car”"
    assert result_count_text(0, 0, 4, ("WordPress",)) == "Nothing mentions “WordPress”  ·  4 weaker"
    assert result_count_text(1, 1, 0, ("WordPress",)) == "1 document matches"  # in another language


def test_a_nonsense_query_says_no_documents_match(qtbot, window, tmp_path):
    drop_and_wait(qtbot, window, [write_files(tmp_path / "c", HONEY_DOCS)])
    type_query(qtbot, window, "qwzx vlorp bnarf")
    shown = listed_rows(window)
    assert window.search_bar.count_label.text().startswith("No documents match")
    # dense retrieval still returns the nearest passages: all under the heading
    assert shown[0] == (QtResultsModel.SEPARATOR_TEXT, True) and all(weak for _, weak in shown)
    assert window.search_bar.count_label.text().startswith(f"No documents match  ·  {len(shown) - 1} weaker")
    assert window.results.current_hit() is not None and window.results.current_hit().weak


def test_a_name_nothing_mentions_is_named_where_the_count_would_be(qtbot, window, tmp_path):
    drop_and_wait(qtbot, window, [write_files(tmp_path / "c", HONEY_DOCS)])
    type_query(qtbot, window, "honey bees and nectar on Kubernetes")
    shown = listed_rows(window)
    assert shown[0] == (QtResultsModel.SEPARATOR_TEXT, True) and ("bees.txt", True) in shown
    assert window.search_bar.count_label.text().startswith(f"Nothing mentions “Kubernetes”  ·  {len(shown) - 1} weaker")


def test_an_exclusion_says_what_it_left_out_where_the_count_would_be(qtbot, window, tmp_path):
    docs = dict(HONEY_DOCS, **{"linker.txt": "ld: cannot find -lhoney, so install the honey library package."})
    drop_and_wait(qtbot, window, [write_files(tmp_path / "c", docs)])
    type_query(qtbot, window, "insects that make honey -wasps")
    assert "wasps.txt" not in [name for name, _ in listed_rows(window)]
    assert window.search_bar.count_label.text().split("  ·  ")[-2] == "1 left out for “wasps”"
    # pasted from the linker's message: the library writes it as an option, so it is searched for and marked
    type_query(qtbot, window, "cannot find -lhoney")
    assert listed_rows(window)[0] == ("linker.txt", False)
    assert "left out" not in window.search_bar.count_label.text()
    assert "lhoney" in window.preview.terms.words
