"""The results area's empty states: first run with the sample corpus one click away, a
ready hint, and a no-results page that says what narrows the search."""

from __future__ import annotations

from pathlib import Path

import pytest
from gui_helpers import drop_and_wait, type_query, write_files
from PySide6.QtWidgets import QToolTip

from app.gui.search import qt_empty_state
from app.gui.search.qt_empty_state import SAMPLE_JOB, formats_text
from engine.extract import FORMATS
from engine.query import parse_query
from engine.resources import SAMPLE_QUERY, sample_corpus

CORPUS = {
    "bees.txt": "Honey bees collect nectar from flowers. The hive stores honey for the winter.",
    "bienen.md": "Die Bienen sammeln Nektar. Honig für den Winter, honey bees.",
}


def wait_for_jobs(qtbot, window, timeout: int = 60_000) -> None:
    qtbot.waitUntil(lambda: not window.jobs.busy(), timeout=timeout)


def test_a_fresh_home_opens_on_the_welcome_page(window):
    state = window.empty_state
    assert state.isVisibleTo(window) and state.page() == "welcome"
    assert not window.results_splitter.isVisibleTo(window)
    text = " ".join(label.text() for label in state.currentWidget().findChildren(type(state.ready_text)))
    assert "Drop folders or files here" in text
    assert "stays on this computer" in text and "nothing is uploaded" in text
    assert f"Babelfind reads {formats_text()}." in text  # "... and manual pages.", not "pages files"
    assert state.sample_button.isVisibleTo(window) and state.sample_button.isEnabled()


def test_every_format_the_engine_reads_is_named():
    text = formats_text()
    for name in ("PDF", "Word (DOCX)", "EPUB", "Markdown", "plain text"):
        assert name in text
    assert formats_text(("txt", "pdf")) == "PDF and plain text"
    assert formats_text(("txt",)) == "plain text"
    assert text.count(",") == len(FORMATS) - 2 and " and " in text  # one name per format


def test_the_sample_button_indexes_in_the_background_and_suggests_a_query(qtbot, window, library):
    window.empty_state.sample_button.click()
    assert window.jobs.current().label == SAMPLE_JOB
    assert window.progress.isVisibleTo(window)  # progress and Cancel, like a dropped folder
    assert not window.empty_state.sample_button.isEnabled()  # no second click while it runs
    wait_for_jobs(qtbot, window)
    assert library.status().documents == len(list(sample_corpus().iterdir()))
    assert [Path(r.path) for r in library.roots()] == [sample_corpus()]
    assert window.search_bar.field.text() == SAMPLE_QUERY
    assert window.results_model.query() == SAMPLE_QUERY  # the suggested query ran
    assert window.empty_state.page() != "welcome"
    assert window.results_splitter.isVisibleTo(window) and window.results_model.rowCount() > 0
    assert "try this query" in window.statusBar().currentMessage()


def test_a_query_typed_while_the_sample_indexes_is_kept(qtbot, window):
    window.index_sample()
    window.search_bar.field.setText("honey")
    wait_for_jobs(qtbot, window)
    assert window.search_bar.field.text() == "honey"


def test_cancelling_the_sample_suggests_nothing(qtbot, window):
    window.index_sample()
    window.progress.cancel_button.click()
    wait_for_jobs(qtbot, window)
    assert window.search_bar.field.text() == ""
    assert "cancelled" in window.statusBar().currentMessage()


def test_a_missing_sample_corpus_is_said_in_the_status_bar(window, monkeypatch, tmp_path):
    monkeypatch.setenv("BABELFIND_RESOURCES", str(tmp_path / "nowhere"))
    window.index_sample()
    assert not window.jobs.busy()
    message = window.statusBar().currentMessage()
    assert "sample corpus" in message and str(tmp_path / "nowhere" / "sample") in message


def test_the_welcome_page_comes_and_goes_with_the_documents(qtbot, window, library, tmp_path):
    corpus = write_files(tmp_path / "corpus", CORPUS)
    drop_and_wait(qtbot, window, [corpus])
    assert window.empty_state.page() == "ready"
    assert "2 documents are indexed" in window.empty_state.ready_text.text()
    window.remove_root(library.roots()[0].path, confirm=False)
    wait_for_jobs(qtbot, window)
    assert window.empty_state.page() == "welcome"


def test_a_query_without_results_shows_the_no_results_page(qtbot, window, tmp_path):
    drop_and_wait(qtbot, window, [write_files(tmp_path / "corpus", CORPUS)])
    type_query(qtbot, window, '"purple elephants"')
    state = window.empty_state
    assert state.isVisibleTo(window) and state.page() == "no_results"
    assert not window.results_splitter.isVisibleTo(window)
    assert "purple elephants" in state.no_results_title.text()
    assert state.no_results_text.text() == ("The search is narrowed by the phrase “purple elephants”."
                                            " Remove one to search more widely.")
    assert not state.clear_button.isVisibleTo(window)  # nothing the window could clear
    type_query(qtbot, window, "honey bees")
    assert window.results_splitter.isVisibleTo(window) and not state.isVisibleTo(window)


def test_clear_filters_on_the_no_results_page_searches_everything_again(qtbot, window, tmp_path):
    drop_and_wait(qtbot, window, [write_files(tmp_path / "corpus", CORPUS)])
    file_type = window.search_bar.file_type
    file_type.setCurrentIndex(file_type.findData("pdf"))
    type_query(qtbot, window, "honey bees")
    state = window.empty_state
    assert state.page() == "no_results" and "file type: PDF" in state.no_results_text.text()
    assert state.clear_button.isVisibleTo(window)
    with qtbot.waitSignal(window.searched, timeout=5000):
        state.clear_button.click()
    assert file_type.currentIndex() == 0
    assert window.results_model.rowCount() == 2 and not state.isVisibleTo(window)


def test_a_query_the_syntax_cannot_read_says_so_and_links_the_help(qtbot, window, monkeypatch, tmp_path):
    drop_and_wait(qtbot, window, [write_files(tmp_path / "corpus", CORPUS)])
    type_query(qtbot, window, "honey colour:blue")
    state = window.empty_state
    assert state.page() == "no_results"
    assert state.no_results_text.text().startswith("Part of the query cannot be used:")
    assert "colour" in state.no_results_text.text()
    shown: list[str] = []
    monkeypatch.setattr(QToolTip, "showText", lambda pos, text, widget=None: shown.append(text))
    state.syntax_link.linkActivated.emit("#syntax")
    assert shown and "Query syntax" in shown[0]


@pytest.mark.parametrize("query, expected", [
    ("honey", []),
    ('-wasps "honey bees" lang:de type:pdf,md', ["the phrase “honey bees”", "leaving out “wasps”", "lang:de",
                                                 "type:md", "type:pdf"]),
    ("honey after:2024 path:/tmp", ["path:/tmp", "the dates in after: / before:"]),
])
def test_active_filters_name_what_the_query_itself_narrows(window, query, expected):
    assert qt_empty_state.active_filters(window.search_bar, parse_query(query)) == expected
