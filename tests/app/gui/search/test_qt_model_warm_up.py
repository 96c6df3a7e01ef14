"""The window shows before the model is loaded; the load runs off the GUI thread."""

from __future__ import annotations

import threading

import pytest
from helpers import WordEncoder
from PySide6.QtCore import QSettings, QTimer

from app.gui.search.qt_main_window import LOADING_MESSAGE, QtMainWindow
from engine.config import data_paths
from engine.encoders.deferred import DeferredEncoder
from engine.errors import ModelError
from engine.library import Library


class GatedLoad:
    """A model load that waits for `release`, recording the thread it ran in."""

    def __init__(self, fail: bool = False):
        self.release = threading.Event()
        self.started = threading.Event()
        self.thread: threading.Thread | None = None
        self.fail = fail

    def __call__(self):
        self.thread = threading.current_thread()
        self.started.set()
        assert self.release.wait(30), "the test never released the load"
        if self.fail:
            raise ModelError("model file is missing: model.onnx")
        return WordEncoder()


@pytest.fixture
def gated(babelfind_home, tmp_path):
    """(library over a deferred encoder whose load waits for the test, the load, docs folder)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "bees.txt").write_text("Bees make honey in the hive.", encoding="utf-8")
    paths = data_paths(babelfind_home)
    ready = Library.open(paths, encoder=WordEncoder())  # index with a loaded encoder
    list(ready.index_paths([docs]))
    ready.close()
    load = GatedLoad()
    library = Library.open(paths, encoder=DeferredEncoder("test-words", 256, load))
    yield library, load
    load.release.set()
    library.close()


def _window(qtbot, library) -> QtMainWindow:
    win = QtMainWindow(library, QSettings(), watch_debounce_s=0.2)
    qtbot.addWidget(win)
    return win


def test_model_loads_in_a_worker_and_a_search_meanwhile_waits_without_freezing(qtbot, gated):
    library, load = gated
    win = _window(qtbot, library)
    win.show()
    assert load.started.wait(10)  # the warm-up began as the window showed...
    assert load.thread is not threading.main_thread()  # ...in another thread
    assert not win.model_ready()
    win.search_bar.field.setText("honey")
    win.run_search()  # returns at once: the search waits for the model, the window does not
    assert win.statusBar().currentMessage() == LOADING_MESSAGE
    assert win.results_model.rowCount() == 0
    ticks = []
    timer = QTimer(win, interval=10, timeout=lambda: ticks.append(1))
    timer.start()
    qtbot.waitUntil(lambda: len(ticks) >= 5, timeout=5000)  # the event loop keeps running
    load.release.set()
    qtbot.waitUntil(lambda: win.results_model.rowCount() == 1, timeout=10_000)
    assert win.model_ready() and win.statusBar().currentMessage() == ""
    win.shutdown()


def test_a_failed_load_is_shown_and_searches_report_it(qtbot, babelfind_home):
    load = GatedLoad(fail=True)
    library = Library.open(data_paths(babelfind_home), encoder=DeferredEncoder("test-words", 256, load))
    try:
        win = _window(qtbot, library)
        win.show()
        load.release.set()
        qtbot.waitUntil(win.model_ready, timeout=10_000)
        qtbot.waitUntil(lambda: "could not be loaded" in win.statusBar().currentMessage(), timeout=5000)
        win.search_bar.field.setText("honey")
        win.run_search()
        assert isinstance(win.last_error, ModelError)
        win.shutdown()
    finally:
        library.close()


def test_a_loaded_encoder_needs_no_warm_up(qtbot, library):
    win = _window(qtbot, library)
    win.show()
    assert win.model_ready() and win._warm_up is None
    win.shutdown()


def test_deferred_encoder_loads_once_and_knows_its_name_before(tmp_path):
    calls = []
    encoder = DeferredEncoder("test-words", 256, lambda: calls.append(1) or WordEncoder())
    assert (encoder.name, encoder.dim, encoder.loaded) == ("test-words", 256, False)
    threads = [threading.Thread(target=encoder.load) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == [1] and encoder.encode(["bees"]).shape == (1, 256)
    assert encoder.calls == 1  # attributes of the loaded encoder pass through


def test_the_warm_up_measures_hubness_penalties_a_library_lacks(qtbot, babelfind_home, tmp_path):
    """A library indexed before the penalties existed gets them off the GUI thread."""
    from engine.index.live_index import LiveIndex

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "bees.txt").write_text("Bees make honey in the hive.", encoding="utf-8")
    paths = data_paths(babelfind_home)
    ready = Library.open(paths, encoder=WordEncoder())
    list(ready.index_paths([docs]))
    generation = ready.live.generation.id
    ready.close()
    LiveIndex.hubness_file_for(paths.indexes, generation).unlink()
    library = Library.open(paths, encoder=DeferredEncoder("test-words", 256, WordEncoder))
    try:
        assert library.live.hubness is None
        win = _window(qtbot, library)
        win.show()
        qtbot.waitUntil(win.model_ready, timeout=10_000)
        assert library.live.hubness is not None and len(library.live.hubness) == 1
        win.shutdown()
    finally:
        library.close()


def test_after_shutdown_a_pending_debounce_searches_nothing(qtbot, babelfind_home, tmp_path):
    (tmp_path / "bees.txt").write_text("Bees make honey in the hive.", encoding="utf-8")
    library = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    list(library.index_paths([tmp_path / "bees.txt"]))
    win = _window(qtbot, library)
    win.show()
    win.search_bar.field.setText("honey")  # starts the debounce
    win.shutdown()
    library.close()
    win.search_bar.search_requested.emit()  # what the debounce would have sent
    qtbot.wait(50)  # any queued signal arrives now; a search would hit the closed index
    assert win.last_error is None
