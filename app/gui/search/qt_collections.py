"""The collections sidebar: indexed folders with counts and status; re-index, remove, watch.

    >>> sidebar = QtCollections()
    >>> sidebar.set_roots(lib.roots())
    >>> sidebar.reindex_requested.connect(lambda path: ...)

The sidebar only asks; the main window makes the engine calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from app.gui.common.qt_theme import icon, set_icon
from app.gui.search.qt_models import QtRootsModel


class QtCollections(QWidget):
    """Indexed folders (engine RootInfo rows)."""

    add_requested = Signal()
    reindex_requested = Signal(str)  # folder path
    remove_requested = Signal(str)
    watch_toggled = Signal(str, bool)
    show_in_folder_requested = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = QtRootsModel(self)
        self.model.on_watch_toggled = self.watch_toggled.emit
        title = QLabel("Collections")
        title.setObjectName("sectionTitle")
        self.add_button = self._tool("folder-add", "Add a folder to search (or drop one on the window)", self.add_requested.emit)
        self.reindex_button = self._tool("refresh", "Re-index the selected folder", self._reindex)
        self.remove_button = self._tool("remove", "Remove the selected folder from the index (files stay on disk)", self._remove)
        self.view = QTreeView()
        self.view.setObjectName("collections")
        self.view.setModel(self.model)
        self.view.setRootIsDecorated(False)
        self.view.setUniformRowHeights(True)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._context_menu)
        self.view.setToolTip("Indexed folders. Tick a folder to watch it for changes.")
        header = self.view.header()
        header.setStretchLastSection(False)
        header.setMinimumSectionSize(40)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2, 3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.setMinimumWidth(220)
        self.view.selectionModel().selectionChanged.connect(lambda *_: self._update_buttons())
        self.empty_hint = QLabel("Drop folders here\nor use Add folder")
        self.empty_hint.setObjectName("hint")
        self.empty_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        top = QHBoxLayout()
        top.addWidget(title)
        top.addStretch(1)
        for button in (self.add_button, self.reindex_button, self.remove_button):
            top.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.empty_hint)
        self._update_buttons()

    def _tool(self, icon_name: str, tip: str, slot) -> QToolButton:
        button = QToolButton()
        set_icon(button, icon_name)
        button.setToolTip(tip)
        button.clicked.connect(lambda: slot())
        return button

    def set_roots(self, roots: Sequence) -> None:
        """Shows engine RootInfo rows, keeping the selected folder selected."""
        selected = self.selected_root()
        self.model.set_items(sorted(roots, key=lambda r: Path(r.path).name.lower()))
        for row, root in enumerate(self.model.items()):
            if root.path == selected:
                self.view.setCurrentIndex(self.model.index(row, 0))
        self.empty_hint.setVisible(not roots)
        self._update_buttons()

    def set_busy(self, paths: set[str]) -> None:
        self.model.set_busy(paths)

    def selected_root(self) -> str | None:
        index = self.view.currentIndex()
        if not index.isValid():
            return None
        return self.model.item(index.row()).path

    def _update_buttons(self) -> None:
        has = self.selected_root() is not None
        self.reindex_button.setEnabled(has)
        self.remove_button.setEnabled(has)

    def _reindex(self) -> None:
        root = self.selected_root()
        if root:
            self.reindex_requested.emit(root)

    def _remove(self) -> None:
        root = self.selected_root()
        if root:
            self.remove_requested.emit(root)

    def _context_menu(self, pos) -> None:
        index: QModelIndex = self.view.indexAt(pos)
        if not index.isValid():
            return
        root = self.model.item(index.row())
        menu = QMenu(self)
        menu.addAction(icon("refresh"), "Re-index", lambda: self.reindex_requested.emit(root.path))
        watch = menu.addAction("Watch for changes")
        watch.setCheckable(True)
        watch.setChecked(root.watch)
        watch.toggled.connect(lambda on: self.watch_toggled.emit(root.path, on))
        menu.addAction(icon("folder"), "Show in folder", lambda: self.show_in_folder_requested.emit(root.path))
        menu.addSeparator()
        menu.addAction(icon("remove"), "Remove from index", lambda: self.remove_requested.emit(root.path))
        menu.exec(self.view.viewport().mapToGlobal(pos))
