"""The painted curve and histogram: axis ranges, and the pixels they draw."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor

from app.gui.common.qt_plots import QtCurvePlot, QtHistogram, y_range
from app.gui.common.qt_theme import colours


def test_y_range_covers_the_data_and_widens_to_the_minimum_span():
    assert y_range([1.0, 2.0]) == (1.0, 2.0)
    assert y_range([93.1, 93.2], 2.0) == pytest.approx((92.15, 94.15))
    assert y_range([5.0, 5.0]) == (4.5, 5.5)
    assert y_range([0.0, 10.0], 2.0) == (0.0, 10.0)


def _has_colour(widget, colour: str) -> bool:
    image = widget.grab().toImage()
    target = QColor(colour).rgb()
    return any(image.pixel(x, y) == target for x in range(image.width()) for y in range(image.height()))


def test_the_curve_draws_its_line_only_once_it_has_points(qtbot):
    plot = QtCurvePlot("loss", colour="#ff0000")
    qtbot.addWidget(plot)
    plot.resize(300, 160)
    assert not _has_colour(plot, "#ff0000")
    plot.add_point(1, 2.0)
    plot.add_point(2, float("nan"))  # a NaN step is skipped, not drawn
    plot.add_point(3, 1.0)
    assert plot.points() == [(1.0, 2.0), (3.0, 1.0)]
    assert _has_colour(plot, "#ff0000")


def test_histogram_bars_left_of_the_threshold_are_muted(qtbot):
    hist = QtHistogram()
    qtbot.addWidget(hist)
    hist.resize(300, 160)
    hist.set_histogram([3, 5], [1.0, 1.1, 1.2])
    assert _has_colour(hist, colours().accent)
    hist.set_threshold(1.05)  # the first bar starts below it, the second above
    assert _has_colour(hist, colours().muted) and _has_colour(hist, colours().accent)
    hist.set_threshold(1.25)
    assert not _has_colour(hist, colours().accent)
