"""Two small painted charts: a curve (training loss, dev STS) and a score histogram.

    >>> loss = QtCurvePlot("Training loss")
    >>> loss.add_point(1, 2.31)                    # x, y; repaints
    >>> hist = QtHistogram()
    >>> hist.set_histogram(counts, edges)          # from engine.mining.bitext_review.score_histogram
    >>> hist.set_threshold(1.06)                   # bars above it are drawn in the accent colour

Plain QPainter polylines and rectangles: PySide6-Essentials has no QtCharts, and two
charts do not justify matplotlib.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPen, QPolygonF
from PySide6.QtWidgets import QSizePolicy, QWidget

from app.gui.common.qt_theme import colours

MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 40, 12, 24, 22  # left grows with the labels


def _nice(value: float) -> str:
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def y_range(values: Sequence[float], min_span: float = 0.0) -> tuple[float, float]:
    """(low, high) of the y axis: the data's range widened about its middle to `min_span`
    (and to 1 when every value is equal)."""
    low, high = min(values), max(values)
    span = max(high - low, min_span) or 1.0
    middle = (low + high) / 2 if high - low < span else None
    return (middle - span / 2, middle + span / 2) if middle is not None else (low, high)


class _Plot(QWidget):
    """Shared frame: title, plot rectangle, y-axis labels."""

    def __init__(self, title: str, parent=None):
        super().__init__(parent)
        self.title = title
        self.setMinimumSize(240, 140)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def sizeHint(self) -> QSize:
        return QSize(420, 200)

    def plot_rect(self, left: float = MARGIN_LEFT) -> QRectF:
        return QRectF(left, MARGIN_TOP, max(1, self.width() - left - MARGIN_RIGHT),
                      max(1, self.height() - MARGIN_TOP - MARGIN_BOTTOM))

    def _frame(self, painter: QPainter, y_lo: float, y_hi: float, x_lo: str, x_hi: str) -> QRectF:
        c = colours()
        labels = (_nice(y_hi), _nice(y_lo))
        width = max(painter.fontMetrics().horizontalAdvance(text) for text in labels)
        rect = self.plot_rect(max(MARGIN_LEFT, width + 10))
        painter.fillRect(self.rect(), QColor(c.base))
        painter.setPen(QColor(c.text))
        painter.drawText(QRectF(rect.left(), 2, rect.width(), MARGIN_TOP - 4),
                         Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, self.title)
        painter.setPen(QPen(QColor(c.border), 1))
        painter.drawRect(rect)
        painter.setPen(QColor(c.muted))
        left = QRectF(0, 0, rect.left() - 6, 16)
        painter.drawText(left.translated(0, rect.top() - 8), Qt.AlignmentFlag.AlignRight, labels[0])
        painter.drawText(left.translated(0, rect.bottom() - 8), Qt.AlignmentFlag.AlignRight, labels[1])
        below = rect.bottom() + 3
        painter.drawText(QRectF(rect.left(), below, 80, 16), Qt.AlignmentFlag.AlignLeft, x_lo)
        painter.drawText(QRectF(rect.right() - 80, below, 80, 16), Qt.AlignmentFlag.AlignRight, x_hi)
        return rect


class QtCurvePlot(_Plot):
    """A growing y(x) curve, e.g. the loss per step; the y range follows the data.

    `min_span`: the y axis covers at least this range around the data, so a score moving
    by 0.1 on a 0-100 scale does not look like a cliff.
    """

    def __init__(self, title: str, parent=None, *, colour: str | None = None, min_span: float = 0.0):
        super().__init__(title, parent)
        self.xs: list[float] = []
        self.ys: list[float] = []
        self._colour = colour
        self.min_span = min_span

    def add_point(self, x: float, y: float) -> None:
        if math.isfinite(y):
            self.xs.append(float(x))
            self.ys.append(float(y))
            self.update()

    def clear(self) -> None:
        self.xs, self.ys = [], []
        self.update()

    def points(self) -> list[tuple[float, float]]:
        return list(zip(self.xs, self.ys))

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if not self.ys:
            rect = self._frame(painter, 0, 1, "", "")
            painter.setPen(QColor(colours().muted))
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, "waiting for the first value")
            return
        y_lo, y_hi = y_range(self.ys, self.min_span)
        x_lo, x_hi = self.xs[0], max(self.xs[-1], self.xs[0] + 1)
        rect = self._frame(painter, y_lo, y_hi, _nice(x_lo), _nice(x_hi))
        line = QPolygonF([
            QPointF(rect.left() + rect.width() * (x - x_lo) / (x_hi - x_lo),
                    rect.bottom() - rect.height() * (y - y_lo) / (y_hi - y_lo))
            for x, y in zip(self.xs, self.ys)
        ])
        painter.setPen(QPen(QColor(self._colour or colours().accent), 2))
        if len(line) == 1:
            painter.drawEllipse(line[0], 3, 3)
        else:
            painter.drawPolyline(line)


class QtHistogram(_Plot):
    """Bars of a histogram with a threshold line; bars above it in the accent colour."""

    def __init__(self, title: str = "Scores", parent=None):
        super().__init__(title, parent)
        self.counts: list[int] = []
        self.edges: list[float] = []
        self.threshold: float | None = None

    def set_histogram(self, counts: Sequence[int], edges: Sequence[float]) -> None:
        self.counts, self.edges = [int(c) for c in counts], [float(e) for e in edges]
        self.update()

    def set_threshold(self, threshold: float | None) -> None:
        self.threshold = threshold
        self.update()

    def paintEvent(self, event) -> None:
        c = colours()
        painter = QPainter(self)
        top = max(self.counts, default=0) or 1
        lo, hi = (self.edges[0], self.edges[-1]) if self.edges else (0.0, 1.0)
        rect = self._frame(painter, 0, top, _nice(lo), _nice(hi))
        if not self.counts:
            painter.setPen(QColor(c.muted))
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, "no pairs yet")
            return
        x_of = lambda value: rect.left() + rect.width() * (value - lo) / (hi - lo)  # noqa: E731
        for count, left, right in zip(self.counts, self.edges, self.edges[1:]):
            if not count:
                continue
            kept = self.threshold is None or left >= self.threshold
            colour = QColor(c.accent if kept else c.muted)
            height = rect.height() * count / top
            painter.fillRect(QRectF(x_of(left) + 1, rect.bottom() - height, max(1.0, x_of(right) - x_of(left) - 2),
                                    height), colour)
        if self.threshold is not None and lo <= self.threshold <= hi:
            x = x_of(self.threshold)
            painter.setPen(QPen(QColor(c.text), 2, Qt.PenStyle.DashLine))
            painter.drawLine(QPointF(x, rect.top()), QPointF(x, rect.bottom()))
