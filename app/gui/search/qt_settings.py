"""Settings: models from the registry, device, OCR, data location and database URL.

    >>> dialog = QtSettingsDialog(library, parent=window)
    >>> dialog.model_activation_requested.connect(window.switch_model)
    >>> dialog.exec()

Choosing a model first says what it will re-encode and how long that may take
(`qt_model_switch`), then asks the window to run `library.switch_model(name)` in the
background; device and database URL are saved with engine.config.save_settings and
apply the next time the library opens.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableView,
    QVBoxLayout,
)

from app.gui.common import qt_files
from app.gui.search.qt_model_switch import confirm_model_switch
from app.gui.search.qt_models import QtModelsTableModel
from engine.config import load_settings, save_settings
from engine.library import indexer_config

log = logging.getLogger(__name__)

DEVICES = (("auto", "Automatic"), ("cpu", "CPU"), ("cuda", "GPU (CUDA)"))
OCR_ENGINES = (("auto", "Automatic (Tesseract; RapidOCR for Chinese)"), ("tesseract", "Tesseract"),
               ("rapidocr", "RapidOCR (Chinese and English)"))


def detected_providers() -> list[str]:
    """ONNX Runtime's execution providers on this machine, e.g. ['CPUExecutionProvider']."""
    try:
        import onnxruntime
    except ImportError:
        return []
    return list(onnxruntime.get_available_providers())


def has_gpu(providers: list[str]) -> bool:
    return "CUDAExecutionProvider" in providers


def check_db_url(url: str) -> str | None:
    """None when SQLAlchemy can parse `url`, else the reason it cannot."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        make_url(url)
    except ArgumentError as e:
        return str(e)
    return None


class QtSettingsDialog(QDialog):
    """Models, device, data location and database URL."""

    model_activation_requested = Signal(str)

    def __init__(self, library, parent=None):
        super().__init__(parent)
        self.library = library
        self.paths = library.paths
        self.setWindowTitle("Settings")
        self.setMinimumWidth(820)
        saved = load_settings(self.paths)
        layout = QVBoxLayout(self)
        layout.addWidget(self._models_box())
        layout.addWidget(self._device_box(saved.get("device", "auto")))
        layout.addWidget(self._ocr_box(bool(saved.get("ocr", True)), saved.get("ocr_engine", "auto")))
        layout.addWidget(self._storage_box(saved.get("db_url") or self.paths.default_db_url))
        self.error = QLabel("")
        self.error.setObjectName("hint")
        self.error.setWordWrap(True)
        layout.addWidget(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def _models_box(self) -> QGroupBox:
        from app.first_run import offered_models
        from engine.models import list_models

        box = QGroupBox("Models")
        self.models = QtModelsTableModel(self)
        self.models.set_items(list_models(self.paths) + offered_models(self.paths))
        status = self.library.status()
        self.models.set_active(status.model)
        self.models_view = QTableView()
        self.models_view.setModel(self.models)
        self.models_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.models_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.models_view.verticalHeader().hide()
        header = self.models_view.horizontalHeader()
        # names, dimensions and sources are read whole; the language list takes what is left
        for column in range(self.models.columnCount()):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.models_view.setWordWrap(False)
        # every model in sight (up to five rows) rather than a one-row strip to scroll
        rows = min(max(self.models.rowCount(), 2), 5)
        self.models_view.setMinimumHeight(self.models_view.verticalHeader().defaultSectionSize() * rows
                                          + header.sizeHint().height() + 2 * self.models_view.frameWidth()
                                          + self.models_view.horizontalScrollBar().sizeHint().height())
        self.models_view.selectionModel().selectionChanged.connect(lambda *_: self._update_use_button())
        self.use_button = QPushButton("Use this model")
        self.use_button.setToolTip(
            "Re-encode every indexed passage with this model, in the background;\n"
            "searches keep using the current model until it is done"
        )
        self.use_button.clicked.connect(self._use_selected)
        note = QLabel(f"Active: {status.model} ({status.dim} dimensions)")
        if status.pending_model:
            note.setText(note.text() + f"; switching to {status.pending_model} is not finished")
        note.setObjectName("hint")
        row = QHBoxLayout()
        row.addWidget(note, 1)
        row.addWidget(self.use_button)
        layout = QVBoxLayout(box)
        layout.addWidget(self.models_view)
        layout.addLayout(row)
        self._update_use_button()
        return box

    def _device_box(self, device: str) -> QGroupBox:
        box = QGroupBox("Device")
        providers = detected_providers()
        self.device = QComboBox()
        for value, label in DEVICES:
            self.device.addItem(label, value)
        gpu_index = self.device.findData("cuda")
        if not has_gpu(providers):
            # a GPU choice that cannot work is shown greyed out, not hidden
            self.device.model().item(gpu_index).setEnabled(False)
        self.device.setCurrentIndex(max(0, self.device.findData(device)))
        self.device.setToolTip("Where the model runs; Automatic uses a GPU when one is found")
        found = "GPU (CUDA) and CPU" if has_gpu(providers) else "CPU only"
        detected = QLabel(f"Detected: {found}  ({', '.join(providers) or 'ONNX Runtime not found'})")
        detected.setObjectName("hint")
        detected.setWordWrap(True)
        form = QFormLayout(box)
        form.addRow("Run models on", self.device)
        form.addRow("", detected)
        return box

    def _ocr_box(self, enabled: bool, engine: str) -> QGroupBox:
        from engine.extract.ocr import rapidocr_installed
        from engine.extract.tools import find_tool

        box = QGroupBox("Images and scans")
        self.ocr = QCheckBox("Read the text of images and scanned PDF pages (OCR)")
        self.ocr.setChecked(enabled)
        self.ocr.setToolTip("OCR runs after the other files of a folder, a few seconds a page;\n"
                            "turned off, images are skipped and scanned pages stay without text")
        self.ocr_engine = QComboBox()
        available = {"tesseract": find_tool("tesseract") is not None, "rapidocr": rapidocr_installed()}
        for value, label in OCR_ENGINES:
            self.ocr_engine.addItem(label, value)
            if value in available and not available[value]:
                self.ocr_engine.model().item(self.ocr_engine.count() - 1).setEnabled(False)
        self.ocr_engine.setCurrentIndex(max(0, self.ocr_engine.findData(engine)))
        self.ocr_engine.setEnabled(enabled)
        self.ocr.toggled.connect(self.ocr_engine.setEnabled)
        found = [name for name, here in (("Tesseract", available["tesseract"]), ("RapidOCR", available["rapidocr"])) if here]
        note = QLabel(f"Installed: {', '.join(found)}" if found else
                      "No OCR engine is installed: sudo apt-get install tesseract-ocr (and tesseract-ocr-LANG), "
                      "or pip install 'babelfind[ocr]'")
        note.setObjectName("hint")
        note.setWordWrap(True)
        form = QFormLayout(box)
        form.addRow(self.ocr)
        form.addRow("Engine", self.ocr_engine)
        form.addRow("", note)
        return box

    def _storage_box(self, db_url: str) -> QGroupBox:
        box = QGroupBox("Storage")
        home = QLabel(str(self.paths.home))
        home.setToolTip("Set the BABELFIND_HOME environment variable to keep Babelfind's data elsewhere")
        open_home = QPushButton("Open")
        open_home.setToolTip("Show the data folder")
        open_home.clicked.connect(lambda: qt_files.show_in_folder(self.paths.home))
        home_row = QHBoxLayout()
        home_row.addWidget(home, 1)
        home_row.addWidget(open_home)
        self.db_url = QLineEdit(db_url)
        self.db_url.setToolTip(
            "SQLAlchemy URL of the database, e.g. postgresql+psycopg://user@host/babelfind;\n"
            "applies the next time Babelfind starts"
        )
        hint = QLabel("Database changes apply the next time Babelfind starts.")
        hint.setObjectName("hint")
        form = QFormLayout(box)
        form.addRow("Data location", home_row)
        form.addRow("Database URL", self.db_url)
        form.addRow("", hint)
        return box

    def selected_model(self) -> str | None:
        item = self._selected_item()
        return item.name if item is not None else None

    def _selected_item(self):
        rows = self.models_view.selectionModel().selectedRows()
        return self.models.item(rows[0].row()) if rows else None

    def _update_use_button(self) -> None:
        name = self.selected_model()
        self.use_button.setEnabled(bool(name) and name != self.models.active)

    def _use_selected(self) -> None:
        item = self._selected_item()  # a manifest, or a bundled model not built yet
        name = item.name if item is not None else None
        if name and confirm_model_switch(self, self.library.status(), item):
            self.model_activation_requested.emit(name)
            self.use_button.setEnabled(False)
            self.error.setText(f"Re-encoding with {name} in the background; searches keep working meanwhile.")

    def save(self) -> None:
        url = self.db_url.text().strip() or self.paths.default_db_url
        problem = check_db_url(url)
        if problem:
            self.error.setText(f"The database URL cannot be used: {problem}")
            return
        # the default URL is not stored, so moving BABELFIND_HOME moves the database too
        save_settings(self.paths, device=self.device.currentData(), db_url=None if url == self.paths.default_db_url else url,
                      ocr=self.ocr.isChecked(), ocr_engine=self.ocr_engine.currentData())
        self.library.config = indexer_config(self.paths)  # OCR choices apply to the next indexing
        self.accept()
