"""The training wizard's first pages: what to improve, and (across languages) the pairs.

"Improve search across my languages" mines translation pairs out of the user's own
indexed documents (`engine.mining.collection`, in a worker with progress and cancel),
shows them for review, and trains the active model on the accepted ones. "Adapt to my
sentences" is the classic unsupervised MixCSE run on a corpus.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWizardPage,
)

from app.gui.common.qt_theme import QtAdvancedSection, hint

log = logging.getLogger(__name__)

# Page ids: the two modes branch after the first page and meet again at the settings.
MODE_PAGE, PAIRS_PAGE, CORPUS_PAGE, BASE_PAGE, HYPER_PAGE = range(5)
SUMMARY_PAGE, RUN_PAGE, RESULTS_PAGE, EXPORT_PAGE = range(5, 9)
LASER_PAGE = 10  # the LASER branch: corpus -> this page (app.gui.training.qt_laser)
MODE_LANGUAGES = "languages"
MODE_SENTENCES = "sentences"
MODE_LASER = "laser"
ALL_DOCUMENTS = "All indexed documents"
PAIRS_FILE = "reviewed-pairs.tsv"  # the accepted pairs, in the wizard's work folder


class QtModePage(QWizardPage):
    """Across languages (pairs from the library) or within them (the user's sentences)."""

    def __init__(self, active_model: str | None, languages: dict[str, int], parent=None):
        super().__init__(parent)
        self.setTitle("What should training improve?")
        self.setSubTitle(f"Each makes a new model from the one you use now ({active_model or 'none'}), "
                         "which stays as it is.")
        self.across = QRadioButton("Find documents across my languages better")
        self.within = QRadioButton("Fit the model to my documents")
        self.laser = QRadioButton("A faster model for this computer")
        self.laser.setEnabled(active_model is not None)
        group = QButtonGroup(self)
        for button in (self.across, self.within, self.laser):
            group.addButton(button)
        several = sum(1 for count in languages.values() if count) >= 2
        self.across.setEnabled(several)
        (self.across if several else self.within).setChecked(True)
        found = ", ".join(f"{lang} ({count:,})" for lang, count in
                          sorted(languages.items(), key=lambda kv: -kv[1])) or "none yet"
        layout = QVBoxLayout(self)
        layout.addWidget(self.across)
        layout.addWidget(hint(
            "Babelfind finds sentences in your documents that translate each other and lets you "
            "check them; the model then learns that translations mean the same, so a question in "
            "one language finds documents in the others. Needs documents in two or more "
            f"languages; yours are in: {found}."))
        layout.addWidget(self.within)
        layout.addWidget(hint(
            "The model learns the words and topics of your own sentences; nothing needs labelling."))
        layout.addWidget(self.laser)
        layout.addWidget(hint(
            "Trains a small model to give the same results as the one you use now: searching and "
            "finding translations then run several times faster on a computer without a graphics "
            "card, at some cost in quality. About half an hour for 20,000 sentences."))
        advanced = QtAdvancedSection("Advanced: how each one works")
        advanced.note(
            "Across languages: MixCSE contrastive training on translation pairs found by margin-based "
            "mining (as in LASER), beside your sentences held near the base model. Fit: unsupervised "
            "MixCSE (SimCSE's dropout views with mixed hard negatives; Zhang et al., 2022). Faster: a "
            "BiLSTM encoder of the LASER architecture, distilled from the active model's vectors.")
        layout.addWidget(advanced)
        layout.addStretch(1)

    def mode(self) -> str:
        if self.across.isChecked():
            return MODE_LANGUAGES
        return MODE_LASER if self.laser.isChecked() else MODE_SENTENCES

    def nextId(self) -> int:
        return PAIRS_PAGE if self.mode() == MODE_LANGUAGES else CORPUS_PAGE


class QtPairsPage(QWizardPage):
    """Mines the library for translation pairs, then shows them to accept or reject."""

    def __init__(self, roots: list[str], parent=None):
        super().__init__(parent)
        self.setTitle("Translations in your documents")
        self.setSubTitle("Untick pairs that are not translations; training learns from the ticked ones.")
        self.collection = QComboBox()
        self.collection.addItems([ALL_DOCUMENTS, *roots])
        self.find_button = QPushButton("Find translations")
        self.find_button.clicked.connect(self.find)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = QProgressBar()
        self.status = hint("Find the translations to go on.")
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["Score", "Sentence", "Translation"])
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        for column in (1, 2):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
        self.table.itemChanged.connect(self._on_ticked)
        self.worker = None
        self.mined = None  # engine.mining.collection.CollectionMined
        row = QHBoxLayout()
        row.addWidget(self.collection, 1)
        row.addWidget(self.find_button)
        row.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(self.table, 1)

    def root(self) -> str | None:
        text = self.collection.currentText()
        return None if text == ALL_DOCUMENTS else text

    def find(self) -> None:
        from engine.mining.collection import iter_mine_collection

        library = self.wizard().library
        self.mined = None
        self.table.setRowCount(0)
        self.progress.setRange(0, 0)
        self.status.setText("Reading the stored passages...")
        self.find_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        job = iter_mine_collection(library.store, library.encoder, self.root())
        self.worker = self.wizard().jobs.run(
            job, yielded=self._on_event, cancelled=self._on_cancelled, errored=self._on_error,
            done=self._on_done)
        self.completeChanged.emit()

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.cancel()

    def _on_event(self, event) -> None:
        from engine.mining.collection import CollectionMined

        if isinstance(event, CollectionMined):
            self._on_mined(event)
        else:
            self._on_progress(event)

    def _on_progress(self, event) -> None:
        self.progress.setRange(0, max(1, event.total))
        self.progress.setValue(event.done)
        self.status.setText(f"{event.stage}: {event.done:,} / {event.total:,}")

    def _on_mined(self, mined) -> None:
        self.mined = mined
        rows = mined.rows()
        self.table.blockSignals(True)
        self.table.setRowCount(len(rows))
        for r, (score, source, target) in enumerate(rows):
            score_item = QTableWidgetItem(f"{score:.3f}")
            score_item.setFlags(Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled)
            score_item.setCheckState(Qt.CheckState.Checked)
            self.table.setItem(r, 0, score_item)
            for c, text in ((1, source), (2, target)):
                item = QTableWidgetItem(text)
                item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
                item.setToolTip(text)
                self.table.setItem(r, c, item)
        self.table.blockSignals(False)
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        self._on_ticked()

    def _on_cancelled(self) -> None:
        self.status.setText("Cancelled; nothing was found yet.")

    def _on_error(self, error) -> None:
        self.status.setText(str(error))

    def _on_done(self, _worker) -> None:
        self.worker = None
        self.find_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        if self.progress.maximum() == 0:
            self.progress.setRange(0, 1)
        self.completeChanged.emit()

    def _on_ticked(self, *_args) -> None:
        if self.mined is None:
            return
        kept, total = len(self.accepted()), self.table.rowCount()
        per_language = ", ".join(f"{r.src_lang}-{r.tgt_lang}" for r in self.mined.results)
        skipped = "".join(f"; {lang} left out: {why}" for lang, why in self.mined.skipped.items())
        self.status.setText(f"{kept:,} of {total:,} pairs ticked ({per_language}, pivot "
                            f"{self.mined.pivot}){skipped}.")
        self.completeChanged.emit()

    def accepted(self) -> list[tuple[float, str, str]]:
        """(score, sentence, translation) of the ticked rows."""
        rows = []
        for r in range(self.table.rowCount()):
            score = self.table.item(r, 0)
            if score.checkState() == Qt.CheckState.Checked:
                rows.append((float(score.text()), self.table.item(r, 1).text(),
                             self.table.item(r, 2).text()))
        return rows

    def isComplete(self) -> bool:
        return self.worker is None and len(self.accepted()) >= 2

    def validatePage(self) -> bool:
        """Writes the accepted pairs where the run reads them (and keeps them for resume)."""
        from engine.mining.bitext_io import write_pairs

        folder = Path(self.wizard().work_dir)
        folder.mkdir(parents=True, exist_ok=True)
        write_pairs(folder / PAIRS_FILE, self.accepted())
        return True

    def pairs_file(self) -> Path:
        return Path(self.wizard().work_dir) / PAIRS_FILE

    def nextId(self) -> int:
        return HYPER_PAGE  # the active model is the base: no corpus or base model to choose
