"""Settings: models from the registry, device, data location and database URL.

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

log = logging.getLogger(__name__)

DEVICES = (("auto", "Automatic"), ("cpu", "CPU"), ("cuda", "GPU (CUDA)"))


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
        from engine.models import list_models

        box = QGroupBox("Models")
        self.models = QtModelsTableModel(self)
        self.models.set_items(list_models(self.paths))
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
        rows = self.models_view.selectionModel().selectedRows()
        return self.models.item(rows[0].row()).name if rows else None

    def _update_use_button(self) -> None:
        name = self.selected_model()
        self.use_button.setEnabled(bool(name) and name != self.models.active)

    def _use_selected(self) -> None:
        from engine.models import get_manifest

        name = self.selected_model()
        if name and confirm_model_switch(self, self.library.status(), get_manifest(name, self.paths)):
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
        save_settings(self.paths, device=self.device.currentData(), db_url=None if url == self.paths.default_db_url else url)
        self.accept()
