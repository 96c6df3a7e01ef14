"""The window with the bundled multilingual model over resources/sample/ (slow: real ONNX)."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
from gui_helpers import JOB_TIMEOUT_MS, drop_and_wait, type_query
from PySide6.QtCore import QSettings, Qt

from app.gui.search.qt_about import QtAboutDialog
from app.gui.search.qt_main_window import QtMainWindow
from engine.config import data_paths
from engine.library import Library

RESOURCES = Path(__file__).resolve().parents[4] / "resources"
SAMPLE = RESOURCES / "sample"


def sample_queries() -> dict[str, str]:
    """English query -> file name, read from the table in resources/README.md."""
    rows = re.findall(r"^\| `([^`]+)` \|.*\| ([^|]+?) \|$", (RESOURCES / "README.md").read_text(encoding="utf-8"), re.M)
    return {query: name for name, query in rows}


@pytest.fixture
def window(qtbot, default_models, babelfind_home):
    library = Library.open(data_paths(babelfind_home))
    win = QtMainWindow(library, QSettings())
    qtbot.addWidget(win)
    win.show()
    yield win
    win.shutdown()
    library.close()


@pytest.mark.slow
def test_drop_the_sample_folder_and_each_english_query_finds_its_document(qtbot, window):
    queries = sample_queries()
    assert len(queries) == len(list(SAMPLE.iterdir())) == 9
    drop_and_wait(qtbot, window, [SAMPLE])
    assert window.library.status().documents == 9
    assert window.skipped.model.rowCount() == 0
    for query, expected in queries.items():
        type_query(qtbot, window, query)
        hit = window.results.current_hit()
        shown = [h.path for h in window.results_model.hits()]
        assert Path(hit.path).name == expected, query  # the topic's document comes first
        assert hit.path == shown[0]
        # and the window shows the engine's own ranking
        assert shown[:3] == [h.path for h in window.library.search(query, 3)], query
        start, end = window.preview.highlighted_range()
        assert window.preview.editor.toPlainText()[start:end] == hit.best.text
        if expected.endswith(".pdf"):
            assert f"page {hit.best.page}" in window.preview.meta.text()
    # the facet lists the languages of the documents that match the last query, counted
    # over every match (the relevance floor leaves out the unrelated topics)
    languages = {window.search_bar.language.itemData(i) for i in range(1, window.search_bar.language.count())}
    assert "nl" in languages
    assert languages == set(window.library.search_results(query, 50).languages)


@pytest.mark.slow
def test_switching_model_reencodes_in_the_background_while_search_keeps_working(qtbot, window):
    drop_and_wait(qtbot, window, [SAMPLE])
    old_model = window.library.status().model
    paused, resume = threading.Event(), threading.Event()

    def hold_first_event(_event) -> None:  # runs in the worker thread, before the job resumes
        if not paused.is_set():
            paused.set()
            resume.wait(60)

    window.jobs.started.connect(
        lambda _job: window.jobs.worker().yielded.connect(hold_first_event, Qt.ConnectionType.DirectConnection)
    )
    window.switch_model("all-minilm-l6-v2")
    qtbot.waitUntil(paused.is_set, timeout=JOB_TIMEOUT_MS)
    # the re-encoding job is part way; the window searches the old index meanwhile
    type_query(qtbot, window, "bathing in volcanic hot springs in Japan")
    # the relevance floor keeps only the documents that really match, the topic's first
    answered_during = (window.library.status().model, Path(window.results_model.hits()[0].path).name)
    resume.set()
    qtbot.waitUntil(lambda: not window.jobs.busy(), timeout=JOB_TIMEOUT_MS)
    assert answered_during == (old_model, "onsen_ja.md")
    assert window.library.status().model == "all-minilm-l6-v2"
    assert window.last_error is None
    type_query(qtbot, window, "how do honey bees turn nectar into honey")
    assert Path(window.results.current_hit().path).name == "beekeeping_en.md"
    about = QtAboutDialog(window.library, window)
    assert "all-minilm-l6-v2" in about.text.text() and "Apache-2.0" in about.text.text()


@pytest.mark.slow
def test_the_welcome_pages_sample_button_ends_on_an_answer_in_another_language(qtbot, window):
    from engine.resources import SAMPLE_QUERY

    assert window.empty_state.page() == "welcome"
    window.empty_state.sample_button.click()
    qtbot.waitUntil(lambda: not window.jobs.busy() and window.results_model.query() == SAMPLE_QUERY, timeout=JOB_TIMEOUT_MS)
    assert window.library.status().documents == 9
    assert Path(window.results.current_hit().path).name == sample_queries()[SAMPLE_QUERY]
    assert window.results.current_hit().language != "en"
    assert window.results_splitter.isVisibleTo(window) and not window.empty_state.isVisibleTo(window)
