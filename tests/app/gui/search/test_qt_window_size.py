"""At its first-start size (1200 x 760) the window leaves the results list room to read:
a card's file name, folder and snippet fit, and a long name in the preview never widens
the window (real widgets)."""

from __future__ import annotations

from gui_helpers import drop_and_wait, type_query, write_files
from PySide6.QtGui import QFontMetrics

from app.gui.search.qt_main_window import RESULTS_MIN_WIDTH

LONG_NAME = "a-rather-long-file-name-of-a-chapter-about-glaciers-and-their-retreat-in-the-alps.txt"


def test_the_default_size_leaves_the_results_readable(qtbot, window, tmp_path):
    assert (window.width(), window.height()) == (1200, 760)  # no saved geometry: the first start
    folder = write_files(tmp_path / "deep" / "folder" / "names", {
        LONG_NAME: "Glaciers in the Alps are shrinking because summers are warmer. " * 20,
        "notes.txt": "The glaciers of the Alps have lost a tenth of their ice in two summers.",
    })
    drop_and_wait(qtbot, window, [folder])
    type_query(qtbot, window, "glaciers Alps shrinking")
    qtbot.wait(50)
    view = window.results
    assert window.width() == 1200, "the preview's header widened the window"
    assert view.width() >= RESULTS_MIN_WIDTH - 30 and view.viewport().width() >= 300
    metrics = QFontMetrics(view.font())
    # the card's title: the name left of the badge and score (about 140 px); notes.txt whole
    title_room = view.viewport().width() - 140
    assert metrics.horizontalAdvance("notes.txt") < title_room
    assert metrics.horizontalAdvance("glaciers of the Alps have lost a tenth") < view.viewport().width()
    window.results.select_path(str(folder / LONG_NAME))
    qtbot.wait(50)
    assert window.width() == 1200 and window.preview.title.text() == LONG_NAME
