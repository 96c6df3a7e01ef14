"""The window shows what the engine decided, in any order: strong matches before the
"Weaker matches" heading whatever the sort, the preview on the selected result after a
sort change, relevance again after a restart, a language label per passage and facet
counts that are what choosing the facet shows (real widgets, hashed-words encoder)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from gui_helpers import drop_and_wait, listed_rows, type_query, write_files
from PySide6.QtCore import QSettings
from search_corpora import HONEY_DOCS, NIGHT_TRAIN

from app.gui.search.qt_main_window import QtMainWindow
from app.gui.search.qt_models import SORT_KEYS, QtResultsModel, languages_text
from app.gui.search.qt_results_view import language_badge

ENGLISH, FRENCH = NIGHT_TRAIN["en"], NIGHT_TRAIN["fr"]


@pytest.fixture
def honey(qtbot, window, tmp_path):
    """HONEY_DOCS indexed, the weakly matching wasps.txt the newest file, bees.txt the oldest."""
    folder = write_files(tmp_path / "c", HONEY_DOCS)
    now = time.time()
    for age, name in enumerate(["wasps.txt", *[n for n in HONEY_DOCS if n not in ("wasps.txt", "bees.txt")], "bees.txt"]):
        os.utime(folder / name, (now - 3600 * age, now - 3600 * age))
    drop_and_wait(qtbot, window, [folder])
    type_query(qtbot, window, "honey bees nectar")
    return window


@pytest.mark.parametrize("label", [label for label, _, _ in SORT_KEYS])
def test_every_order_keeps_the_strong_matches_above_the_heading(honey, label):
    window = honey
    relevance = listed_rows(window)
    assert relevance[0] == ("bees.txt", False) and relevance[1] == (QtResultsModel.SEPARATOR_TEXT, True)
    window.results_pane.sort.setCurrentText(label)
    rows = listed_rows(window)
    heading = rows.index((QtResultsModel.SEPARATOR_TEXT, True))
    assert all(not weak for _, weak in rows[:heading]) and all(weak for _, weak in rows[heading:])
    assert rows[0] == ("bees.txt", False), "the one strong match stays first"
    assert sorted(rows) == sorted(relevance)  # nothing lost, nothing twice


def test_a_sort_orders_within_each_group(honey):
    window = honey
    window.results_pane.sort.setCurrentText("Newest first")
    model = window.results.model()
    weak_times = [model.index(r, 0).data(QtResultsModel.ModifiedRole) for r in range(model.rowCount())
                  if model.index(r, 0).data(QtResultsModel.WeakRole)
                  and not model.index(r, 0).data(QtResultsModel.SeparatorRole)]
    assert len(weak_times) >= 1 and weak_times == sorted(weak_times, reverse=True)
    window.results_pane.sort.setCurrentText("Oldest first")
    assert listed_rows(window)[0] == ("bees.txt", False)


def test_the_preview_follows_the_selection_through_sort_changes(honey):
    window = honey
    assert window.preview.hit().path == window.results.current_hit().path
    window.results_pane.sort.setCurrentText("Newest first")
    window.results.move(2)  # past the heading, onto a weaker match
    chosen = window.results.current_hit()
    assert chosen.weak and window.preview.hit().path == chosen.path
    for label in ("Relevance", "Name", "Largest first", "Relevance"):
        window.results_pane.sort.setCurrentText(label)
        current = window.results.current_hit()
        assert current.path == chosen.path, f"{label}: the selection moved to another document"
        assert window.preview.hit().path == current.path, f"{label}: the preview shows another document"
        selected = window.results.selectionModel().selectedIndexes()
        assert [i.data(QtResultsModel.PathRole) for i in selected] == [chosen.path]


def test_a_new_window_starts_in_relevance_order(qtbot, honey, library):
    honey.results_pane.sort.setCurrentText("Newest first")
    honey.save_state()
    again = QtMainWindow(library, QSettings(), watch_debounce_s=0.2)
    qtbot.addWidget(again)
    try:
        assert again.results_pane.sort.currentText() == "Relevance"
        assert again.language_filter.sort_key() == "Relevance"
    finally:
        again.shutdown()


def test_a_passage_in_another_language_than_its_document_says_both(qtbot, window, tmp_path):
    folder = write_files(tmp_path / "c", {"guide.txt": ENGLISH * 4 + "\n\n" + FRENCH,
                                          "french.txt": FRENCH * 2})
    drop_and_wait(qtbot, window, [folder])
    type_query(qtbot, window, "Innsbruck lang:fr")
    hits = {Path(h.path).name: h for h in window.results_model.hits()}
    assert language_badge(hits["french.txt"]) == "FR"
    assert language_badge(hits["guide.txt"]) == "FR in EN doc"
    assert languages_text(hits["guide.txt"]) == "Passage in French (fr) · document mostly in English (en)"
    row = next(r for r in range(window.results_model.rowCount())
               if window.results_model.index(r, 0).data(QtResultsModel.PathRole) == hits["guide.txt"].path)
    assert window.results_model.index(row, 0).data(QtResultsModel.LanguageRole) == "fr"


def test_choosing_a_facet_shows_as_many_documents_as_it_counted(qtbot, window, tmp_path):
    folder = write_files(tmp_path / "c", {"guide.txt": ENGLISH * 4 + "\n\n" + FRENCH,
                                          "chapter.txt": ENGLISH + "\n\n" + FRENCH * 4,
                                          "french.txt": FRENCH * 2, "english.txt": ENGLISH * 2})
    drop_and_wait(qtbot, window, [folder])
    type_query(qtbot, window, "Innsbruck")
    combo = window.search_bar.language
    counts = {combo.itemData(i): int(combo.itemText(i).rsplit("(", 1)[1].rstrip(")"))
              for i in range(1, combo.count())}
    assert counts == {"en": 3, "fr": 3}  # the two mixed documents count under both
    for language, count in counts.items():
        with qtbot.waitSignal(window.searched, timeout=10_000):
            combo.setCurrentIndex(combo.findData(language))
        strong = [h for h in window.results_model.hits() if not h.weak]
        assert len(strong) == count
        assert window.search_bar.count_label.text().startswith(f"{count} documents match")
        assert all(h.best.language == language for h in window.results_model.hits())


def test_passages_of_no_known_language_have_a_facet_of_their_own(qtbot, window, tmp_path):
    folder = write_files(tmp_path / "c", {"english.txt": ENGLISH * 2, "numbers.txt": "Innsbruck 4711 0815 2024 A7"})
    drop_and_wait(qtbot, window, [folder])
    type_query(qtbot, window, "Innsbruck")
    combo = window.search_bar.language
    unknown = next(i for i in range(combo.count()) if combo.itemText(i).startswith("Unknown language"))
    assert combo.itemData(unknown) != "" and combo.itemData(0) == ""  # not "All languages"
    with qtbot.waitSignal(window.searched, timeout=10_000):
        combo.setCurrentIndex(unknown)
    assert window.search_bar.selected_facet() == ""
    assert [Path(h.path).name for h in window.results_model.hits()] == ["numbers.txt"]
    assert combo.currentText().startswith("Unknown language (1)")
