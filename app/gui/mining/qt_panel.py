"""The "Parallel sentences" window: mine two documents, review the pairs, export them.

    >>> panel = QtMiningPanel(library, parent=window)     # encoder: the library's model
    >>> panel.set_side(0, Path("de.pdf")); panel.set_side(1, Path("en.docx"))
    >>> panel.mine()                                       # background; cancel() stops it
    >>> panel.export_pairs(Path("pairs.tmx"))               # the kept pairs only

One engine call (`engine.mining.compare.iter_mine_with_models`: the chosen model, and a second
one when asked, whose speed is shown beside) runs in a QtWorker; the histogram,
slider and kept count come from `engine.mining.bitext_review`; files are written by
`engine.mining.bitext_io.write_pairs`.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSlider,
    QSpinBox,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.gui.mining.qt_document_picker import QtDocumentPicker
from app.gui.common.qt_files import documents_folder
from app.gui.mining.qt_model_choice import QtMiningModels
from app.gui.mining.qt_pairs_model import KEEP, SCORE, SOURCE, TARGET, QtPairsModel
from app.gui.common.qt_screen import fit_to_screen, use_sort_arrows
from app.gui.common.qt_plots import QtHistogram
from app.gui.common.qt_worker import QtWorker
from engine.mining.bitext_review import indexed_documents, score_histogram, slider_steps, slider_value
from engine.errors import BabelfindError

log = logging.getLogger(__name__)

SLIDER_STEPS = 200
PREFERRED_SIZE = (1100, 720)  # shrunk to fit smaller screens (`fit_to_screen`)
HISTOGRAM_BINS = 30
SIDES = ("Source", "Target")
MODES = (("max", "Best in either direction (max)"), ("intersect", "Both directions agree (intersect)"),
         ("forward", "Best target for each source (forward)"), ("backward", "Best source for each target (backward)"))
MARGINS = (("ratio", "Ratio margin"), ("distance", "Distance margin"), ("absolute", "Plain cosine"))
ALIGN = (("auto", "When the documents follow each other"), ("on", "Always (ordered alignment)"), ("off", "Never"))


class QtMiningPanel(QWidget):
    """Pick two documents, mine them in the background, review and export the pairs.

    Signals:
        mined(object): the MiningResult, once shown.
        failed(object): the error that ended mining (shown in the panel too).
    """

    mined = Signal(object)
    failed = Signal(object)

    def __init__(self, library, encoder=None, parent=None):
        super().__init__(parent, Qt.WindowType.Window)
        self.library = library
        self.encoder = encoder
        self.worker: QtWorker | None = None
        self.pairs = QtPairsModel(self)
        self._range = (0.0, 1.0)  # scores the slider spans, from the histogram's edges
        self.setWindowTitle("Parallel sentences")
        layout = QVBoxLayout(self)
        layout.addWidget(self._sides_box())
        layout.addWidget(self._options_box())
        self.model_row = QtMiningModels(library.paths, getattr(self.encoder or library.encoder, "name", None))
        layout.addWidget(self.model_row)
        layout.addLayout(self._run_row())
        self.speed = QLabel("", objectName="hint")
        layout.addWidget(self.speed)
        self.error = QLabel("")
        self.error.setObjectName("error")
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.error)
        layout.addWidget(self._review_area(), 1)
        layout.addLayout(self._export_row())
        self.pairs.review_changed.connect(self._show_counts)
        QShortcut(QKeySequence.StandardKey.Copy, self.table, activated=self.copy_selected)
        self.refresh_documents()
        self._set_running(False)
        self._show_counts()
        fit_to_screen(self, PREFERRED_SIZE)

    # -- layout -------------------------------------------------------------------

    def _sides_box(self) -> QGroupBox:
        box = QGroupBox("Documents")
        form = QFormLayout(box)
        self.pickers = [QtDocumentPicker(name) for name in SIDES]
        for name, picker in zip(SIDES, self.pickers):
            form.addRow(name, picker)
        self.side_combos = [p.combo for p in self.pickers]
        self.side_languages = [p.language for p in self.pickers]
        return box

    def _options_box(self) -> QGroupBox:
        box = QGroupBox("Options")
        row = QHBoxLayout(box)
        self.mode = _combo(MODES, "Which candidate pairs to keep (LASER's retrieval modes)")
        self.margin = _combo(MARGINS, "How a pair is scored against each side's nearest neighbours")
        self.k = QSpinBox(minimum=1, maximum=32, value=4)
        self.k.setToolTip("Neighbours averaged in the margin (4 in the paper)")
        self.align = _combo(ALIGN, "Pair sentences in document order when the documents translate each other")
        for label, widget in (("Mode", self.mode), ("Score", self.margin), ("k", self.k), ("Align", self.align)):
            row.addWidget(QLabel(label))
            # the combos share the room a wide window has; on a small screen they elide
            row.addWidget(widget, 0 if widget is self.k else 1)
        return box

    def _run_row(self) -> QHBoxLayout:
        self.run_button = QPushButton("Find pairs")
        self.run_button.setDefault(True)
        self.run_button.clicked.connect(self.mine)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = QProgressBar()
        self.progress.setTextVisible(False)
        self.stage = QLabel("", objectName="hint")
        row = QHBoxLayout()
        for widget, stretch in ((self.run_button, 0), (self.cancel_button, 0), (self.progress, 1), (self.stage, 0)):
            row.addWidget(widget, stretch)
        return row

    def _review_area(self) -> QSplitter:
        self.table = QTableView()
        self.table.setModel(self.pairs.proxy)
        # Fusion draws "highest first" as an up arrow; people read that as ascending
        use_sort_arrows(self.table.horizontalHeader())
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(SCORE, Qt.SortOrder.DescendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        for column, mode in ((KEEP, QHeaderView.ResizeMode.ResizeToContents),
                             (SCORE, QHeaderView.ResizeMode.ResizeToContents),
                             (SOURCE, QHeaderView.ResizeMode.Stretch), (TARGET, QHeaderView.ResizeMode.Stretch)):
            header.setSectionResizeMode(column, mode)
        self.histogram = QtHistogram("Scores of the pairs found")
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, SLIDER_STEPS)
        self.slider.setToolTip("Pairs scoring above the threshold are kept")
        self.slider.valueChanged.connect(self._on_slider)
        self.kept_label = QLabel("")
        side = QWidget()
        column = QVBoxLayout(side)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.histogram, 1)
        column.addWidget(QLabel("Threshold"))
        column.addWidget(self.slider)
        column.addWidget(self.kept_label)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.table)
        splitter.addWidget(side)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        return splitter

    def _export_row(self) -> QHBoxLayout:
        self.reject_button = QPushButton("Reject selected")
        self.reject_button.clicked.connect(lambda: self._mark_selected(True))
        self.accept_button = QPushButton("Accept selected")
        self.accept_button.clicked.connect(lambda: self._mark_selected(False))
        self.copy_button = QPushButton("Copy")
        self.copy_button.setToolTip("Copy the selected pairs as tab-separated lines")
        self.copy_button.clicked.connect(self.copy_selected)
        self.export_button = QPushButton("Export...")
        self.export_button.setToolTip("Save the kept pairs as TSV (score, source, target) or TMX 1.4")
        self.export_button.clicked.connect(self._choose_export)
        row = QHBoxLayout()
        for button in (self.accept_button, self.reject_button, self.copy_button):
            row.addWidget(button)
        row.addStretch(1)
        row.addWidget(self.export_button)
        return row

    # -- documents ----------------------------------------------------------------

    def refresh_documents(self) -> None:
        """Fills both pickers with the indexed documents (the files chosen stay)."""
        documents = indexed_documents(self.library.store)
        for side, picker in enumerate(self.pickers):
            picker.set_documents(documents, keep_side=side)

    def set_side(self, side: int, path: Path) -> None:
        """Chooses a file (not necessarily indexed) for side 0 (source) or 1 (target)."""
        self.pickers[side].set_file(path)

    def side_path(self, side: int) -> Path | None:
        return self.pickers[side].path()

    # -- mining -------------------------------------------------------------------

    def options(self):
        from engine.mining.bitext import MiningOptions

        # Candidates below the default threshold come too, so the slider can lower it.
        return MiningOptions(k=self.k.value(), margin=self.margin.currentData(), mode=self.mode.currentData(),
                             align=self.align.currentData(), keep_below_threshold=True)

    def mine(self) -> None:
        """Starts mining the two chosen documents in the background."""
        if self.worker is not None:
            return
        from engine.mining.compare import iter_mine_with_models

        src, tgt = self.side_path(0), self.side_path(1)
        if src is None or tgt is None:
            self.error.setText("Choose a source and a target document first.")
            return
        self.error.setText("")
        self.pairs.set_result(None)
        self._update_histogram()
        self.speed.setText("")
        models = self.model_row.models(self.encoder or self.library.encoder)
        self.worker = QtWorker(iter_mine_with_models(src, tgt, models, self.options()), self)
        self.worker.yielded.connect(self._on_progress)
        self.worker.returned.connect(self._on_finished)
        self.worker.cancelled.connect(lambda: self.stage.setText("Cancelled"))
        self.worker.errored.connect(self._on_error)
        self.worker.finished.connect(self._on_worker_done)
        self._set_running(True)
        self.worker.start()

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.cancel()

    def shutdown(self) -> None:
        """Stops mining and waits for the thread (closing the window does this)."""
        worker = self.worker
        if worker is not None:
            worker.cancel()
            worker.wait()

    def _on_progress(self, event) -> None:
        from engine.mining.bitext import MiningProgress, stage_label

        if isinstance(event, MiningProgress):
            self.progress.setRange(0, max(event.total, 1))
            self.progress.setValue(event.done)
            self.stage.setText(f"{stage_label(event.stage)} {event.done:,} / {event.total:,}")

    def _on_finished(self, last) -> None:
        from engine.mining.compare import ComparedFinished, speed_text

        if not isinstance(last, ComparedFinished):
            return
        self.speed.setText(f"Encoding speed: {speed_text(last.speeds)}")
        result = last.finished.result
        self.pairs.set_result(result)
        for picker, language in zip(self.pickers, (result.src_lang, result.tgt_lang)):
            picker.show_language(language)
        how = "pairs aligned in document order" if result.aligned else "candidate pairs mined"
        self.stage.setText(f"{len(result.pairs):,} {how} from {result.sentences_text()}")
        self._update_histogram(result)
        self.mined.emit(result)

    def _on_error(self, error) -> None:
        if not isinstance(error, BabelfindError):
            log.error("mining failed", exc_info=error)
        self.stage.setText("")
        self.error.setText(str(error))
        self.failed.emit(error)

    def _on_worker_done(self) -> None:
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.wait()
            worker.deleteLater()
        self._set_running(False)

    def _set_running(self, running: bool) -> None:
        self.run_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self.progress.setVisible(running)
        has_pairs = bool(self.pairs.pairs())
        for widget in (self.export_button, self.copy_button, self.slider, self.accept_button, self.reject_button):
            widget.setEnabled(has_pairs and not running)

    # -- review -------------------------------------------------------------------

    def _update_histogram(self, result=None) -> None:
        scores = self.pairs.scores()
        counts, edges = score_histogram(scores, HISTOGRAM_BINS)
        self.histogram.set_histogram(counts if scores else [], edges if scores else [])
        self._range = (float(edges[0]), float(edges[-1]))
        start = result.threshold if result is not None and result.threshold != float("-inf") else self._range[0]
        self.slider.blockSignals(True)
        self.slider.setValue(slider_steps(*self._range, SLIDER_STEPS, start))
        self.slider.blockSignals(False)
        self._on_slider(self.slider.value())

    def _on_slider(self, position: int) -> None:
        threshold = float(slider_value(*self._range, SLIDER_STEPS, position))
        self.histogram.set_threshold(threshold if self.pairs.pairs() else None)
        self.pairs.set_threshold(threshold)

    def threshold(self) -> float:
        return self.pairs.threshold

    def _show_counts(self) -> None:
        total = len(self.pairs.pairs())
        kept = len(self.pairs.kept_rows())
        rejected = self.pairs.shown() - kept
        text = f"{kept:,} of {total:,} pairs kept" if total else "No pairs yet"
        if total and rejected:
            text += f" ({rejected:,} rejected)"
        if total:
            text += f"; threshold {self.pairs.threshold:.3f}"
        self.kept_label.setText(text)

    def selected_rows(self) -> list[int]:
        """Rows of `pairs.result.pairs` selected in the table, in table order."""
        rows = sorted({i.row() for i in self.table.selectionModel().selectedRows()})
        return [self.pairs.proxy.mapToSource(self.pairs.proxy.index(r, 0)).row() for r in rows]

    def _mark_selected(self, rejected: bool) -> None:
        for row in self.selected_rows():
            self.pairs.set_rejected(row, rejected)

    def copy_selected(self) -> None:
        """Copies the selected pairs as "source<TAB>target" lines."""
        from engine.mining.bitext_io import escape_cell

        pairs = self.pairs.pairs()
        lines = [f"{escape_cell(pairs[r].src_text)}\t{escape_cell(pairs[r].tgt_text)}" for r in self.selected_rows()]
        if lines:
            QApplication.clipboard().setText("\n".join(lines) + "\n")

    def _choose_export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export pairs", str(documents_folder() / "pairs.tsv"),
                                              "Tab-separated (*.tsv);;TMX 1.4 (*.tmx)")
        if path:
            self.export_pairs(Path(path))

    def export_pairs(self, path: Path) -> Path | None:
        """Writes the kept pairs to `path` (.tsv or .tmx); a typed error is shown, not raised."""
        from engine.mining.bitext_io import write_pairs

        result = self.pairs.result
        rows = [(p.score, p.src_text, p.tgt_text) for p in self.pairs.kept()]
        try:
            written = write_pairs(Path(path), rows, src_lang=result.src_lang if result else None,
                                  tgt_lang=result.tgt_lang if result else None)
        except BabelfindError as e:
            self.error.setText(str(e))
            return None
        self.stage.setText(f"{len(rows):,} pairs written to {written}")
        return written

    def closeEvent(self, event) -> None:
        self.shutdown()
        super().closeEvent(event)


def _combo(choices, tip: str) -> QComboBox:
    combo = QComboBox()
    for value, label in choices:
        combo.addItem(label, value)
    combo.setToolTip(tip)
    # long labels are elided in the closed box (the list shows them whole), so the row
    # of options does not make the window wider than a small screen
    combo.setMinimumContentsLength(14)
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    return combo
