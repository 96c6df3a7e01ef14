"""The training wizard's set-up pages: corpus, base model, how long to train.

Each page reads and writes its part of the run through the wizard (`wizard().corpus`,
`wizard().config()`); nothing here trains. Counting the corpus sentences runs
`trainer.corpus.load_corpus` in a worker, so the window stays responsive on big folders.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
    QWizardPage,
)

from app.gui.common import qt_files
from app.gui.common.qt_theme import QtAdvancedSection, hint
from app.gui.training import qt_modes as modes
from trainer.config import FIELD_HELP, POOLINGS, TrainConfig

log = logging.getLogger(__name__)

DEFAULTS = TrainConfig()
FOLDER_CHOICE = "__folder__"


def corpus_counts_text(stats) -> str:
    """One line of `trainer.corpus.CorpusStats` counts, as the CLI prints them."""
    plural = "" if stats.files == 1 else "s"
    files = f"{stats.files:,} file{plural} ({stats.files_failed:,} unreadable), " if stats.files else ""
    return (f"{files}{stats.read:,} sentences read: {stats.duplicates:,} duplicates, {stats.too_short:,} too short, "
            f"{stats.too_long:,} too long; {stats.kept:,} kept for training")


def field_help(field: str) -> str:
    """trainer.config.FIELD_HELP's line for `field` as a sentence, without the "advanced: " tag."""
    text = FIELD_HELP[field].removeprefix("advanced: ")
    return text[0].upper() + text[1:] + "."


class QtCorpusPage(QWizardPage):
    """Files and folders, or an indexed collection; the sentences are counted before training."""

    def __init__(self, roots: list[str], parent=None):
        super().__init__(parent)
        self.setTitle("Sentences to learn from")
        self.setSubTitle("The model learns from sentences in your documents; nothing needs labelling.")
        self.use_files = QRadioButton("Files and folders")
        self.use_collection = QRadioButton("A folder you have indexed")
        group = QButtonGroup(self)
        group.addButton(self.use_files)
        group.addButton(self.use_collection)
        self.use_files.setChecked(True)
        self.paths = QListWidget()
        add_files = QPushButton("Add files...")
        add_files.clicked.connect(self._choose_files)
        add_folder = QPushButton("Add folder...")
        add_folder.clicked.connect(self._choose_folder)
        remove = QPushButton("Remove")
        remove.clicked.connect(self._remove_selected)
        self.collection = QComboBox()
        self.collection.addItems(roots)
        self.use_collection.setEnabled(bool(roots))
        self.count_button = QPushButton("Count sentences")
        self.count_button.clicked.connect(self.count)
        self.counts = hint("Choose the sentences, then count them.")
        buttons = QHBoxLayout()
        for button in (add_files, add_folder, remove):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.use_files)
        layout.addWidget(self.paths, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.use_collection)
        layout.addWidget(self.collection)
        row = QHBoxLayout()
        row.addWidget(self.count_button)
        row.addWidget(self.counts, 1)
        layout.addLayout(row)
        for signal in (group.buttonToggled, self.collection.currentIndexChanged):
            signal.connect(self._source_changed)

    def add_paths(self, paths) -> None:
        self.use_files.setChecked(True)
        for path in paths:
            self.paths.addItem(str(Path(path).expanduser().absolute()))
        self._source_changed()

    def use(self, collection: str) -> None:
        self.collection.setCurrentIndex(self.collection.findText(collection))
        self.use_collection.setChecked(True)

    def source(self):
        """The `trainer.corpus.CorpusSource` chosen on this page."""
        from trainer.corpus import CorpusSource

        if self.use_collection.isChecked():
            return CorpusSource(collection=self.collection.currentText() or None, db_url=self.wizard().db_url)
        return CorpusSource(paths=tuple(self.paths.item(i).text() for i in range(self.paths.count())))

    def count(self) -> None:
        """Reads, filters and counts the sentences in a worker; the result is the run's corpus."""
        from trainer.corpus import CorpusFilter, load_corpus

        source = self.source()
        if not (source.paths or source.collection):
            self.counts.setText("Add a file or folder first.")
            return
        filt = CorpusFilter(DEFAULTS.min_chars, DEFAULTS.max_chars, DEFAULTS.min_words, DEFAULTS.max_words)

        def read(progress):
            return load_corpus(source, filt, DEFAULTS.seed, progress=lambda done, path: progress((done, path)))

        self.count_button.setEnabled(False)
        self.counts.setText("Reading...")
        self.wizard().jobs.run_callback(read, yielded=self._on_progress, returned=self._on_counted,
                                        errored=self._on_error, done=lambda _worker: self.count_button.setEnabled(True))

    def _on_progress(self, event) -> None:
        done, path = event
        self.counts.setText(f"Reading {done:,} files... {Path(path).name}")

    def _on_counted(self, corpus) -> None:
        self.wizard().corpus = corpus
        self.counts.setText(corpus_counts_text(corpus.stats))
        self.completeChanged.emit()

    def _on_error(self, error) -> None:
        self.wizard().corpus = None
        self.counts.setText(str(error))
        self.completeChanged.emit()

    def _source_changed(self, *_args) -> None:
        if self.wizard() is not None:
            self.wizard().corpus = None
        self.counts.setText("Count the sentences to go on.")
        self.completeChanged.emit()

    def nextId(self) -> int:
        laser = self.wizard().mode_page.mode() == modes.MODE_LASER
        return modes.LASER_PAGE if laser else modes.BASE_PAGE

    def isComplete(self) -> bool:
        corpus = self.wizard().corpus
        return corpus is not None and corpus.stats.kept > 0

    def _choose_files(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, "Training documents", str(qt_files.documents_folder()))
        self.add_paths(files)

    def _choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Training documents", str(qt_files.documents_folder()))
        if folder:
            self.add_paths([folder])

    def _remove_selected(self) -> None:
        for item in self.paths.selectedItems():
            self.paths.takeItem(self.paths.row(item))
        self._source_changed()


class QtBaseModelPage(QWizardPage):
    """A registry model, or a transformers folder (BERT / XLM-R family) the user has."""

    def __init__(self, models: list[str], parent=None, *, default: str | None = None):
        super().__init__(parent)
        self.setTitle("Model to start from")
        self.setSubTitle("Training makes a new model from this one; the model you search with "
                         "now stays as it is until you choose the new one.")
        self.choice = QComboBox()
        for name in models:
            self.choice.addItem(name, name)
        self.choice.addItem("A model folder on this computer...", FOLDER_CHOICE)
        self.folder = QLineEdit()
        self.folder.setPlaceholderText("a folder with config.json, e.g. bert-base-uncased")
        browse = QPushButton("Browse...")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.folder, 1)
        row.addWidget(browse)
        layout = QFormLayout(self)
        layout.addRow("Start from", self.choice)
        layout.addRow("Folder", row)
        advanced = QtAdvancedSection()
        advanced.note("An installed model keeps its text prefixes and pooling. A folder is a "
                      "Hugging Face transformers model (BERT or XLM-R family, config.json "
                      "inside); a plain BERT trains with [CLS] pooling and an MLP head, as in "
                      "the MixCSE paper.")
        layout.addRow(advanced)
        self.choice.currentIndexChanged.connect(self._changed)
        self.folder.textChanged.connect(self._changed)
        if default in models:  # the active model: what the user searches with today
            self.choice.setCurrentIndex(self.choice.findData(default))
        self._changed()

    def use_folder(self, folder: Path) -> None:
        self.choice.setCurrentIndex(self.choice.findData(FOLDER_CHOICE))
        self.folder.setText(str(folder))

    def base(self) -> str:
        if self.choice.currentData() == FOLDER_CHOICE:
            return str(Path(self.folder.text().strip()).expanduser())
        return self.choice.currentData()

    def _changed(self, *_args) -> None:
        self.folder.setEnabled(self.choice.currentData() == FOLDER_CHOICE)
        self.completeChanged.emit()

    def isComplete(self) -> bool:
        if self.choice.currentData() != FOLDER_CHOICE:
            return True
        text = self.folder.text().strip()
        return bool(text) and (Path(text).expanduser() / "config.json").is_file()

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Transformers model folder")
        if folder:
            self.use_folder(Path(folder))


class QtHyperPage(QWizardPage):
    """How long to train, in plain words; the paper's settings (learning rate, batch,
    lambda, tau, pooling) folded under Advanced, each with one line on what it does."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setTitle("How long to train")
        self.setSubTitle("The usual settings suit most documents; a first try can stop early.")
        self.epochs = QSpinBox(minimum=1, maximum=100, value=DEFAULTS.epochs)
        self.epochs.setSuffix(" pass")
        self.epochs.valueChanged.connect(lambda n: self.epochs.setSuffix(" pass" if n == 1 else " passes"))
        self.max_steps = QSpinBox(minimum=0, maximum=10_000_000, value=0, singleStep=100)
        self.max_steps.setSpecialValueText("no limit: every pass")
        self.max_steps.setSuffix(" steps")
        self.problem = hint("")
        form = QFormLayout(self)
        form.addRow("Read your sentences", self.epochs)
        form.addRow("", hint("Each pass shows the model every sentence once; one pass is usually enough."))
        form.addRow("Stop early after", self.max_steps)
        form.addRow("", hint("A step learns from one batch of sentences. A first try of a few hundred "
                             "steps shows whether training helps your documents."))
        self.advanced = QtAdvancedSection("Advanced: the training method's settings")
        self._build_advanced(self.advanced.body)
        form.addRow(self.advanced)
        form.addRow(self.problem)

    def _build_advanced(self, body: QWidget) -> None:
        self.lr = QDoubleSpinBox(decimals=6, minimum=1e-6, maximum=1e-2, singleStep=1e-5, value=DEFAULTS.lr)
        self.batch_size = QSpinBox(minimum=2, maximum=4096, value=DEFAULTS.batch_size)
        self.max_len = QSpinBox(minimum=8, maximum=512, value=DEFAULTS.max_len)
        self.eval_steps = QSpinBox(minimum=1, maximum=1_000_000, value=DEFAULTS.eval_steps)
        self.simcse = QCheckBox("Plain SimCSE (no mixed negatives)")
        self.lam = QDoubleSpinBox(decimals=2, minimum=0.01, maximum=0.99, singleStep=0.05, value=DEFAULTS.lam)
        self.tau = QDoubleSpinBox(decimals=3, minimum=0.001, maximum=1.0, singleStep=0.01, value=DEFAULTS.tau)
        self.pooling = QComboBox()
        self.pooling.addItems(POOLINGS)
        self.simcse.toggled.connect(lambda on: self.lam.setEnabled(not on))
        form = QFormLayout(body)
        form.setContentsMargins(12, 0, 0, 0)
        form.addRow("", hint("MixCSE (Zhang et al., 2022): contrastive learning with mixed hard "
                             "negatives; the defaults are the paper's."))
        for label, widget, field in (
            ("Learning rate", self.lr, "lr"), ("Batch size", self.batch_size, "batch_size"),
            ("Max tokens", self.max_len, "max_len"), ("Evaluate every (steps)", self.eval_steps, "eval_steps"),
        ):
            form.addRow(label, widget)
            form.addRow("", hint(field_help(field)))
        form.addRow("", self.simcse)
        form.addRow("Lambda (λ)", self.lam)
        form.addRow("", hint(field_help("lam")))
        form.addRow("Tau (τ)", self.tau)
        form.addRow("", hint(field_help("tau")))
        form.addRow("Pooling", self.pooling)
        form.addRow("", hint(field_help("pooling") + " Auto: the mean for e5-style models, [CLS] for BERT."))

    def lam_value(self) -> float | None:
        return None if self.simcse.isChecked() else round(self.lam.value(), 4)

    def validatePage(self) -> bool:
        from trainer.pairs import PairFilter, load_pairs

        wizard = self.wizard()
        needed = 2 * self.batch_size.value()
        if wizard.across_languages():  # read as training will read them
            stats = load_pairs([wizard.pairs_page.pairs_file()], PairFilter.of(DEFAULTS), DEFAULTS.seed,
                               holdout=DEFAULTS.pair_holdout, min_pairs=0).stats
            have = stats.trained
            what = f"{stats.kept:,} ticked pairs ({have:,} after the held-out ones) are"
        else:
            have = wizard.corpus.stats.kept if wizard.corpus is not None else needed
            what = f"{have:,} sentences are"
        if have < needed:
            self.problem.setText(f"{what} too few for batches of {self.batch_size.value()} "
                                 f"(Advanced): training needs at least {needed:,}. Lower the batch "
                                 "size or add documents.")
            return False
        self.problem.setText("")
        return True
