"""Qt item models over engine results; they wrap the engine's objects, never copy logic.

    >>> model = QtResultsModel()
    >>> model.set_hits(lib.search("rent increase"))
    >>> model.data(model.index(0), QtResultsModel.HitRole)      # the DocumentHit
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import QAbstractListModel, QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt

from app.gui.common.qt_languages import language_label
from app.gui.common.texts import size_text
from engine.events import DocumentHit, SkippedFile
from engine.highlight import NO_TERMS, HighlightTerms
from engine.scan import key_path

_DISPLAY = Qt.ItemDataRole.DisplayRole
_TOOLTIP = Qt.ItemDataRole.ToolTipRole
_USER = Qt.ItemDataRole.UserRole


MESSAGE_FORMATS = ("eml", "msg")


def document_title(hit: DocumentHit) -> str:
    """What a result is called: a message by its subject, anything else by its file name.

    Example: document_title(hit) == "Budget" for ".../Inbox/message-3.eml" with subject "Budget"
    """
    if hit.title and hit.format in MESSAGE_FORMATS:
        return hit.title
    return Path(hit.path).name


class QtResultsModel(QAbstractListModel):
    """One row per DocumentHit, best first; the weaker matches (DocumentHit.weak) come
    after a separator row ("Weaker matches": HitRole None, SeparatorRole True, not
    selectable) that the view draws as a heading."""

    HitRole = _USER + 1
    LanguageRole = _USER + 2
    PathRole = _USER + 3
    TermsRole = _USER + 4  # the words of the query the hits answer (HighlightTerms; the delegate marks them)
    ModifiedRole = _USER + 5  # the file's modification time (POSIX seconds), None if gone
    SizeRole = _USER + 6  # the file's size in bytes, None if gone
    RankRole = _USER + 7  # position in the engine's order, best first
    NameRole = _USER + 8  # file name, case-folded, for sorting
    SeparatorRole = _USER + 9  # True on the row that heads the weaker matches
    WeakRole = _USER + 10  # True on a weaker match (and on its separator)
    SEPARATOR_TEXT = "Weaker matches"

    def __init__(self, parent=None):
        super().__init__(parent)
        self._hits: list[DocumentHit | None] = []  # None: the separator before the weak ones
        self._facts: list[os.stat_result | None] = []
        self._query = ""
        self._terms = NO_TERMS

    def set_hits(self, hits: Sequence[DocumentHit], query: str = "", terms: HighlightTerms = NO_TERMS) -> None:
        """The hits of the search for `query`; `terms` are its words to mark (ParsedQuery.highlight)."""
        self.beginResetModel()
        strong = [h for h in hits if not h.weak]
        weak = [h for h in hits if h.weak]
        self._hits = strong + ([None] + weak if weak else [])
        # the file as it is now (the list shows what opening it would show), read once
        self._facts = [None if h is None else _stat(h.path) for h in self._hits]
        self._query = query
        self._terms = terms
        self.endResetModel()

    def hits(self) -> list[DocumentHit]:
        return [h for h in self._hits if h is not None]

    def flags(self, index: QModelIndex) -> Qt.ItemFlag:
        if index.isValid() and 0 <= index.row() < len(self._hits) and self._hits[index.row()] is None:
            return Qt.ItemFlag.NoItemFlags  # a heading: never selected, skipped by the cursor
        return super().flags(index)

    def query(self) -> str:
        return self._query

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._hits)

    def data(self, index: QModelIndex, role: int = _DISPLAY):
        if not index.isValid() or not 0 <= index.row() < len(self._hits):
            return None
        hit = self._hits[index.row()]
        if hit is None:
            return self._separator_data(index, role)
        if role == self.WeakRole:
            return hit.weak
        if role == self.SeparatorRole:
            return False
        if role == _DISPLAY:
            return Path(hit.path).name
        if role == _TOOLTIP:
            why = hit.best.explanation  # the engine's parts of the score, when it explained them
            score = f"why: {why.text()}" if why is not None else f"score {hit.score:.3f}"
            return f"{hit.path}\n{file_facts_text(self._facts[index.row()])}\n{languages_text(hit)}\n{score}"
        if role == self.HitRole:
            return hit
        if role in (self.ModifiedRole, self.SizeRole):
            facts = self._facts[index.row()]
            return None if facts is None else (facts.st_mtime if role == self.ModifiedRole else facts.st_size)
        if role == self.RankRole:
            return index.row()
        if role == self.NameRole:
            return Path(hit.path).name.casefold()
        if role == self.LanguageRole:
            return hit.best.language or ""  # the passage shown: a document may mix languages
        if role == self.PathRole:
            return hit.path
        if role == self.TermsRole:
            return self._terms
        return None

    def _separator_data(self, index: QModelIndex, role: int):
        if role == _DISPLAY:
            return self.SEPARATOR_TEXT
        if role == _TOOLTIP:
            return "Documents far below the best match, or matches of a query nothing answers well"
        if role in (self.SeparatorRole, self.WeakRole):
            return True
        if role == self.RankRole:
            return index.row()
        return None


def languages_text(hit: DocumentHit) -> str:
    """The shown passage's language, and the document's (most of its text) when it differs.

    Example: "Passage in French · document mostly in English"; "English".
    """
    passage, document = hit.best.language or "", hit.language or ""
    if passage == document or not document:
        return language_label(passage)
    return f"Passage in {language_label(passage)} · document mostly in {language_label(document)}"


def _stat(path: str) -> os.stat_result | None:
    """The file's facts; for an archive member or attachment, those of the file holding it."""
    real = key_path(path)  # a stored key: names that are not UTF-8 are escaped
    for candidate in (real, *real.parents):
        try:
            facts = os.stat(candidate)
        except OSError:
            continue
        # a folder above means the file itself is gone (a member's archive is a file)
        return facts if candidate == real or stat.S_ISREG(facts.st_mode) else None
    return None


def file_facts_text(facts: os.stat_result | None) -> str:
    """Example: "12 Mar 2026 14:05  ·  34.0 KB"; "file not found" when it is gone."""
    if facts is None:
        return "file not found"
    when = datetime.fromtimestamp(facts.st_mtime).strftime("%d %b %Y %H:%M")
    return f"{when}  ·  {size_text(facts.st_size)}"


# (label, role, order) for each way the results can be sorted; relevance is the engine's
SORT_KEYS = (
    ("Relevance", QtResultsModel.RankRole, Qt.SortOrder.AscendingOrder),
    ("Newest first", QtResultsModel.ModifiedRole, Qt.SortOrder.DescendingOrder),
    ("Oldest first", QtResultsModel.ModifiedRole, Qt.SortOrder.AscendingOrder),
    ("Name", QtResultsModel.NameRole, Qt.SortOrder.AscendingOrder),
    ("Folder path", QtResultsModel.PathRole, Qt.SortOrder.AscendingOrder),
    ("Largest first", QtResultsModel.SizeRole, Qt.SortOrder.DescendingOrder),
)


class QtLanguageFilter(QSortFilterProxyModel):
    """Keeps the results in one language (the facet the user picked); '' keeps all.

    It also orders them (`set_sort_key`, one of SORT_KEYS): relevance by default. Whatever
    the order, the strong matches come first and the weaker ones after their heading: a
    sort orders within each group, so sorting by date never lifts a weak match above the
    one real answer.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self._language = ""
        self._sort_label = SORT_KEYS[0][0]
        self.setFilterRole(QtResultsModel.LanguageRole)
        self.setDynamicSortFilter(True)
        self.set_sort_key(SORT_KEYS[0][0])

    def set_sort_key(self, label: str) -> None:
        """Sorts by the SORT_KEYS entry named `label`."""
        _, role, order = next(k for k in SORT_KEYS if k[0] == label)
        self._sort_label = label
        self.setSortRole(role)
        self.sort(0, order)

    def sort_key(self) -> str:
        return self._sort_label

    def lessThan(self, left: QModelIndex, right: QModelIndex) -> bool:
        ascending = self.sortOrder() == Qt.SortOrder.AscendingOrder
        group_a, group_b = _group(left), _group(right)
        if group_a != group_b:  # strong, heading, weak: in that order either way
            return group_a < group_b if ascending else group_a > group_b
        a, b = left.data(self.sortRole()), right.data(self.sortRole())
        if a is None or b is None:  # a vanished file sorts last in either order
            if ascending:
                return a is not None and b is None
            return a is None and b is not None
        return a < b  # ties: neither is less, and the stable sort keeps the engine's order

    def set_language(self, language: str) -> None:
        self.beginFilterChange()
        self._language = language
        self.endFilterChange()

    def language(self) -> str:
        return self._language

    def filterAcceptsRow(self, row: int, parent: QModelIndex) -> bool:
        index = self.sourceModel().index(row, 0, parent)
        if index.data(QtResultsModel.SeparatorRole):
            return self._any_weak_shown(parent)
        if not self._language:
            return True
        return index.data(QtResultsModel.LanguageRole) == self._language

    def _any_weak_shown(self, parent: QModelIndex) -> bool:
        source = self.sourceModel()
        for row in range(source.rowCount(parent)):
            index = source.index(row, 0, parent)
            if index.data(QtResultsModel.WeakRole) and not index.data(QtResultsModel.SeparatorRole):
                if not self._language or index.data(QtResultsModel.LanguageRole) == self._language:
                    return True
        return False


def _group(index: QModelIndex) -> int:
    """0 for a strong match, 1 for the weaker matches' heading, 2 for a weaker match."""
    if index.data(QtResultsModel.SeparatorRole):
        return 1
    return 2 if index.data(QtResultsModel.WeakRole) else 0


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
    """Encoder models from the registry (engine.model_manifest.ModelManifest), then the
    bundled ones that are not built yet (app.first_run.OfferedModel)."""

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
            return (self._name(item), langs or "-", str(item.dim) if item.dim else "-", item.source or "-")[column]
        if role == _TOOLTIP:
            built = "" if _installed(item) else "\nNot installed yet: choosing it builds it here (about a minute)."
            return (f"{item.name}: {len(item.languages)} languages, licence {item.licence or 'unknown'}"
                    f"\n{item.notes}{built}").rstrip()
        if role == Qt.ItemDataRole.FontRole and column == 0 and item.name == self.active:
            from PySide6.QtGui import QFont

            font = QFont()
            font.setBold(True)
            return font
        return None

    def _name(self, item) -> str:
        if item.name == self.active:
            return f"{item.name} (active)"
        return item.name if _installed(item) else f"{item.name} (not installed)"


def _installed(item) -> bool:
    """A registry model (ModelManifest), not one offered to be built (app.first_run.OfferedModel)."""
    from app.first_run import OfferedModel

    return not isinstance(item, OfferedModel)
