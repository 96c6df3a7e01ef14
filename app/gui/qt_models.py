"""Qt item models over engine results; they wrap the engine's objects, never copy logic.

    >>> model = QtResultsModel()
    >>> model.set_hits(lib.search("rent increase"))
    >>> model.data(model.index(0), QtResultsModel.HitRole)      # the DocumentHit
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QAbstractListModel, QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt

from engine.events import DocumentHit, SkippedFile

_DISPLAY = Qt.ItemDataRole.DisplayRole
_TOOLTIP = Qt.ItemDataRole.ToolTipRole
_USER = Qt.ItemDataRole.UserRole


class QtResultsModel(QAbstractListModel):
    """One row per DocumentHit, best first."""

    HitRole = _USER + 1
    LanguageRole = _USER + 2
    PathRole = _USER + 3
    QueryRole = _USER + 4  # the query the hits answer (the delegate marks its words)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._hits: list[DocumentHit] = []
        self._query = ""

    def set_hits(self, hits: Sequence[DocumentHit], query: str = "") -> None:
        self.beginResetModel()
        self._hits = list(hits)
        self._query = query
        self.endResetModel()

    def hits(self) -> list[DocumentHit]:
        return list(self._hits)

    def query(self) -> str:
        return self._query

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._hits)

    def data(self, index: QModelIndex, role: int = _DISPLAY):
        if not index.isValid() or not 0 <= index.row() < len(self._hits):
            return None
        hit = self._hits[index.row()]
        if role == _DISPLAY:
            return Path(hit.path).name
        if role == _TOOLTIP:
            return f"{hit.path}\nscore {hit.score:.3f}"
        if role == self.HitRole:
            return hit
        if role == self.LanguageRole:
            return hit.language or ""
        if role == self.PathRole:
            return hit.path
        if role == self.QueryRole:
            return self._query
        return None


class QtLanguageFilter(QSortFilterProxyModel):
    """Keeps the results in one language (the facet the user picked); '' keeps all."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._language = ""
        self.setFilterRole(QtResultsModel.LanguageRole)

    def set_language(self, language: str) -> None:
        self.beginFilterChange()
        self._language = language
        self.endFilterChange()

    def language(self) -> str:
        return self._language

    def filterAcceptsRow(self, row: int, parent: QModelIndex) -> bool:
        if not self._language:
            return True
        index = self.sourceModel().index(row, 0, parent)
        return index.data(QtResultsModel.LanguageRole) == self._language


class _TableModel(QAbstractTableModel):
    """A read-only table over a list of frozen engine objects."""

    HEADERS: tuple[str, ...] = ()
    ItemRole = _USER + 1

    def __init__(self, parent=None):
        super().__init__(parent)
        self._items: list = []

    def set_items(self, items: Sequence) -> None:
        self.beginResetModel()
        self._items = list(items)
        self.endResetModel()

    def items(self) -> list:
        return list(self._items)

    def item(self, row: int):
        return self._items[row]

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._items)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation, role: int = _DISPLAY):
        if role == _DISPLAY and orientation == Qt.Orientation.Horizontal:
            return self.HEADERS[section]
        return None

    def data(self, index: QModelIndex, role: int = _DISPLAY):
        if not index.isValid() or not 0 <= index.row() < len(self._items):
            return None
        item = self._items[index.row()]
        if role == self.ItemRole:
            return item
        return self.cell(item, index.column(), role)

    def cell(self, item, column: int, role: int):
        raise NotImplementedError


class QtSkippedModel(_TableModel):
    """Files an indexing run could not read, with the engine's reason."""

    HEADERS = ("File", "Reason", "Folder")

    def cell(self, item: SkippedFile, column: int, role: int):
        path = Path(item.path)
        if role == _DISPLAY:
            return (path.name, item.reason, str(path.parent))[column]
        if role == _TOOLTIP:
            return f"{item.path}\n{item.reason}"
        return None


class QtRootsModel(_TableModel):
    """Indexed folders (engine RootInfo) with counts, status and a watch checkbox."""

    HEADERS = ("Folder", "Docs", "Passages", "Status")
    WATCH_COLUMN = 0

    def __init__(self, parent=None):
        super().__init__(parent)
        self._busy: set[str] = set()
        self.on_watch_toggled = None  # callable(path: str, watch: bool), set by the sidebar

    def set_busy(self, paths: set[str]) -> None:
        """Folders an indexing job is working on now (shown as 'indexing...')."""
        self._busy = set(paths)
        if self._items:
            self.dataChanged.emit(self.index(0, 3), self.index(len(self._items) - 1, 3))

    def status_text(self, item) -> str:
        if item.path in self._busy:
            return "indexing..."
        parts = []
        if item.failed:
            parts.append(f"{item.failed} skipped")
        if item.watch:
            parts.append("watching")
        return ", ".join(parts) or "up to date"

    def cell(self, item, column: int, role: int):
        if role == _DISPLAY:
            name = Path(item.path).name or item.path
            return (name, f"{item.documents:,}", f"{item.passages:,}", self.status_text(item))[column]
        if role == _TOOLTIP:
            return (
                f"{item.path}\n{item.documents:,} documents, {item.passages:,} passages"
                f"\n{self.status_text(item)}\nTick the box to re-index changes automatically"
            )
        if role == Qt.ItemDataRole.CheckStateRole and column == self.WATCH_COLUMN:
            return Qt.CheckState.Checked if item.watch else Qt.CheckState.Unchecked
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (1, 2):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def flags(self, index: QModelIndex):
        flags = super().flags(index)
        if index.column() == self.WATCH_COLUMN:
            flags |= Qt.ItemFlag.ItemIsUserCheckable
        return flags

    def setData(self, index: QModelIndex, value, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.CheckStateRole or index.column() != self.WATCH_COLUMN:
            return False
        watch = Qt.CheckState(value) == Qt.CheckState.Checked
        if self.on_watch_toggled is not None:
            self.on_watch_toggled(self._items[index.row()].path, watch)
        return True


class QtModelsTableModel(_TableModel):
    """Encoder models from the registry (engine.models.ModelManifest)."""

    HEADERS = ("Model", "Languages", "Dimension", "Source")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.active = ""

    def set_active(self, name: str) -> None:
        self.active = name
        if self._items:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._items) - 1, 0))

    def cell(self, item, column: int, role: int):
        if role == _DISPLAY:
            langs = ", ".join(item.languages[:8]) + (" ..." if len(item.languages) > 8 else "")
            name = f"{item.name} (active)" if item.name == self.active else item.name
            return (name, langs or "-", str(item.dim), item.source or "-")[column]
        if role == _TOOLTIP:
            return f"{item.name}: {len(item.languages)} languages, licence {item.licence or 'unknown'}"
        if role == Qt.ItemDataRole.FontRole and column == 0 and item.name == self.active:
            from PySide6.QtGui import QFont

            font = QFont()
            font.setBold(True)
            return font
        return None
