"""One side of the "Parallel sentences" window: a searchable document list, File..., language.

    >>> picker = QtDocumentPicker("Source")
    >>> picker.set_documents(indexed_documents(store))     # engine.mining.bitext_review
    >>> picker.combo.lineEdit().setText("bienen")          # the list narrows to matches
    >>> picker.set_file(Path("de.txt")); picker.path()     # Path('de.txt')

A library holds thousands of documents: the list is filtered by what is typed (any part
of the name or folder, any case). The language label has a fixed width, so the File...
button beside it never moves when the language becomes known.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QCompleter, QFileDialog, QHBoxLayout, QLabel, QPushButton, QWidget

from app.gui.common.qt_files import documents_folder
from app.gui.common.qt_languages import language_label

UNKNOWN_LANGUAGE = "language: detected when mining"


class QtDocumentPicker(QWidget):
    """Chooses an indexed document, or any file, for one side of a mining run."""

    def __init__(self, side_name: str, parent=None):
        super().__init__(parent)
        self.side_name = side_name
        self.combo = QComboBox()
        self.combo.setEditable(True)
        self.combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)  # typing searches, never adds
        self.combo.lineEdit().setPlaceholderText("Type to search the indexed documents")
        self.combo.setMinimumContentsLength(30)
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.combo.setToolTip("An indexed document (type any part of its name or folder), or a file chosen with File...")
        completer = QCompleter(self.combo.model(), self.combo)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        completer.setMaxVisibleItems(15)
        self.combo.setCompleter(completer)
        self.combo.currentIndexChanged.connect(lambda _i: self.show_language())
        self.choose_button = QPushButton("File...")
        self.choose_button.setToolTip("Pick any document Babelfind reads, or a text file with one sentence a line")
        self.choose_button.clicked.connect(self.choose_file)
        self.language = QLabel("", objectName="hint")
        # wide enough for the longest text it shows, so nothing beside it moves
        self.language.setFixedWidth(self.language.fontMetrics().horizontalAdvance(UNKNOWN_LANGUAGE) + 12)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.combo, 1)
        row.addWidget(self.choose_button)
        row.addWidget(self.language)

    def set_documents(self, documents, keep_side: int = 0) -> None:
        """Lists `documents` (path, language) after any chosen files; selects entry `keep_side`."""
        chosen = [(self.combo.itemText(i), self.combo.itemData(i)) for i in range(self.combo.count())
                  if self.combo.itemData(i) and self.combo.itemData(i)[1] == "file"]
        self.combo.clear()
        for text, data in chosen:
            self.combo.addItem(text, data)
        for document in documents:
            self.combo.addItem(f"{Path(document.path).name}  ({document.path})", (document.path, document.language))
        self.combo.setCurrentIndex(min(keep_side, self.combo.count() - 1))

    def set_file(self, path: Path) -> None:
        """Chooses a file (not necessarily indexed)."""
        self.combo.insertItem(0, f"{Path(path).name}  ({path})", (str(path), "file"))
        self.combo.setCurrentIndex(0)

    def path(self) -> Path | None:
        data = self.combo.currentData()
        return Path(data[0]) if data else None

    def choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, f"{self.side_name} document", str(documents_folder()))
        if path:
            self.set_file(Path(path))

    def show_language(self, detected: str | None = None) -> None:
        data = self.combo.currentData()
        language = detected or (data[1] if data and data[1] != "file" else None)
        self.language.setText(f"language: {language}" if language else UNKNOWN_LANGUAGE)
        self.language.setToolTip(language_label(language) if language else "")
