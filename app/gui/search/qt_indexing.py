"""Indexing feedback: a progress row with Cancel, and the list of skipped files.

    >>> row = QtProgressRow(); row.start("Indexing Documents"); row.show_event(IndexProgress(...))
    >>> panel = QtSkippedPanel(); panel.show_skipped(summary.skipped)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.first_run import InstallProgress
from app.gui.common.qt_theme import set_icon
from app.gui.common.texts import duration_text
from app.gui.search.qt_models import QtSkippedModel
from engine.events import IndexFinished, IndexProgress, IndexSummary, SkippedFile


def progress_text(event: IndexProgress) -> str:
    """One line for the progress row.

    Example: progress_text(IndexProgress(3, 10, 42, 21.5, 4.7)) ==
        "3 / 10 files  ·  42 passages  ·  22 passages/s  ·  about 5 s left"

    Files count once stored; a model switch counts passages (`event.unit`). The rate
    and the time left are the engine's (engine.throughput), not a count of files.
    """
    if event.waiting:
        return event.waiting
    unit = event.unit
    parts = [f"{event.files_done:,} / {event.files_total:,} {unit}"]
    if unit == "files":  # while re-encoding, the passages are what is counted already
        parts.append(f"{max(event.encoded, event.passages):,} passages")
    if event.rate > 0:
        parts.append(f"{event.rate:.1f} passages/s" if event.rate < 10 else f"{event.rate:,.0f} passages/s")
    # the last event says nothing of time: "about 0 s left" reads like a lie
    if event.files_done < event.files_total:
        parts.append(f"about {duration_text(event.eta_s)} left" if event.eta_s is not None
                     else "estimating the time left")
    return "  ·  ".join(parts)


def summary_text(summary: IndexSummary) -> str:
    """Example: "Indexed 12 files (340 passages), 3 unchanged, 1 skipped"; "Removed 2 documents"."""
    if summary.removed and not (summary.indexed or summary.unchanged or summary.skipped):
        # a forget job, or a watched folder whose files were only deleted
        return f"Removed {summary.removed:,} document{'' if summary.removed == 1 else 's'}"
    files = "file" if summary.indexed == 1 else "files"
    text = f"Indexed {summary.indexed:,} {files} ({summary.passages:,} passage{'' if summary.passages == 1 else 's'})"
    for count, word in ((summary.unchanged, "unchanged"), (summary.removed, "removed"), (len(summary.skipped), "skipped")):
        if count:
            text += f", {count:,} {word}"
    return text + (" - cancelled, what was done is kept" if summary.cancelled else "")


class QtProgressRow(QFrame):
    """Files done / total, rate, ETA and the current file, with a Cancel button."""

    cancel_requested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("progressRow")
        self.title = QLabel()
        self.title.setObjectName("sectionTitle")
        self.detail = QLabel()
        self.current = QLabel()
        self.current.setObjectName("hint")
        self.bar = QProgressBar()
        self.bar.setTextVisible(False)
        self.bar.setMaximumHeight(10)
        self.cancel_button = QPushButton("Cancel")
        set_icon(self.cancel_button, "cancel")
        self.cancel_button.setToolTip("Stop indexing; files already done stay searchable")
        self.cancel_button.clicked.connect(self._cancel)
        text = QVBoxLayout()
        text.setSpacing(2)
        top = QHBoxLayout()
        top.addWidget(self.title)
        top.addStretch(1)
        top.addWidget(self.detail)
        text.addLayout(top)
        text.addWidget(self.bar)
        text.addWidget(self.current)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.addLayout(text, 1)
        layout.addWidget(self.cancel_button, 0, Qt.AlignmentFlag.AlignVCenter)
        self.hide()

    def start(self, label: str) -> None:
        self.title.setText(label)
        self.detail.setText("starting...")
        self.current.setText("")
        self.bar.setRange(0, 0)  # busy until the first event gives a total
        self.cancel_button.setEnabled(True)
        self.cancel_button.setText("Cancel")
        self.show()

    def show_event(self, event: object) -> None:
        """Takes any job event; IndexProgress updates the bar, others are ignored."""
        if isinstance(event, IndexProgress):
            self.bar.setRange(0, max(event.files_total, 1))
            self.bar.setValue(event.files_done)
            self.detail.setText(progress_text(event))
            self.current.setText(Path(event.current).name if event.current else "")
            self.current.setToolTip(event.current or "")
        elif isinstance(event, InstallProgress):  # a model being built before a switch
            self.bar.setRange(0, 1000)
            self.bar.setValue(round(1000 * event.fraction))
            self.detail.setText(event.message)
            self.current.setText("")
        elif isinstance(event, IndexFinished):
            self.detail.setText(summary_text(event.summary))

    def finish(self) -> None:
        self.hide()

    def _cancel(self) -> None:
        self.cancel_button.setEnabled(False)
        self.cancel_button.setText("Cancelling...")
        self.cancel_requested.emit()


class QtSkippedPanel(QWidget):
    """Files the last indexing runs skipped, with the engine's reason for each.

    It opens after a run that skipped files and folds down to its title line at the
    next search (`collapse`), so the results get the room back; the title expands it.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = QtSkippedModel(self)
        self.title = QToolButton()
        self.title.setObjectName("sectionTitle")
        self.title.setAutoRaise(True)
        self.title.setCheckable(True)
        self.title.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.title.setToolTip("Show or hide the list of files that could not be indexed")
        self.title.toggled.connect(self._set_expanded)
        close = QToolButton()
        set_icon(close, "cancel")
        close.setToolTip("Hide this list")
        close.clicked.connect(self.hide)
        clear = QPushButton("Clear")
        clear.setToolTip("Empty the list of skipped files")
        clear.clicked.connect(lambda: self.show_skipped([], replace=True))
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        self.table.setMaximumHeight(120)  # a short list; it scrolls, the results keep the room
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Interactive)
        top = QHBoxLayout()
        top.addWidget(self.title)
        top.addStretch(1)
        top.addWidget(clear)
        top.addWidget(close)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.table)
        self.hide()

    def show_skipped(self, skipped: Sequence[SkippedFile], replace: bool = False) -> None:
        """Adds `skipped` to the list (newest run first); shows the panel when not empty."""
        known = set() if replace else {s.path for s in skipped}
        kept = [] if replace else [s for s in self.model.items() if s.path not in known]
        self.model.set_items(list(skipped) + kept)
        count = self.model.rowCount()
        self.title.setText(f"{count:,} file{'s' if count != 1 else ''} could not be indexed")
        self.setVisible(count > 0)
        self.expand()

    def expand(self) -> None:
        self.title.setChecked(True)

    def collapse(self) -> None:
        """Folds the list away, keeping the title line (and its count) in view."""
        self.title.setChecked(False)

    def is_expanded(self) -> bool:
        return self.table.isVisibleTo(self)

    def _set_expanded(self, expanded: bool) -> None:
        self.table.setVisible(expanded)
        self.title.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)
