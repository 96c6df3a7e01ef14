"""The results list: file name, folder, date and size, language badge, score, highlighted
snippet; a right-click menu per card and a "Sort by" choice above the list.

    >>> view = QtResultsView()
    >>> view.setModel(language_filter)         # a proxy over QtResultsModel
"""

from __future__ import annotations

import html
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import QModelIndex, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QGuiApplication, QPainter, QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListView,
    QMenu,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from app.gui.common.qt_files import display_path
from app.gui.common.qt_theme import colours
from app.gui.common.texts import size_text
from app.gui.search.qt_models import SORT_KEYS, QtResultsModel, document_title
from engine.events import DocumentHit
from engine.highlight import NO_TERMS, match_spans
from engine.scan import key_path

_PAD = 8
# The badge says how a result matched: its words, its meaning, or both.
MATCH_LABELS = {"keywords": "words", "meaning": "meaning", "both": "words + meaning"}
_SNIPPET_LINES = 2


def focus_snippet(snippet: str, spans: list[tuple[int, int]], lead: int = 40) -> tuple[str, list[tuple[int, int]]]:
    """Starts the snippet shortly before its first marked word, so two lines show it.

    Example: a mark at offset 300 comes back about 40 characters after a leading "…",
    cut at a space; spans are shifted to match.
    """
    if not spans or spans[0][0] <= 2 * lead:
        return snippet, spans
    cut = snippet.rfind(" ", 0, spans[0][0] - lead) + 1
    if cut <= 0:
        return snippet, spans
    shift = cut - 1  # "…" takes one character
    return "…" + snippet[cut:], [(s - shift, e - shift) for s, e in spans]


def snippet_html(snippet: str, spans: list[tuple[int, int]], background: str) -> str:
    """The snippet as HTML with `spans` marked.

    Example: snippet_html("a b c", [(2, 3)], "#ff0") == 'a <span style="...">b</span> c'
    """
    out, at = [], 0
    for start, end in sorted(spans):
        if start < at or not 0 <= start < end <= len(snippet):
            continue  # overlapping or out of range: leave unmarked
        out.append(html.escape(snippet[at:start]))
        out.append(f'<span style="background-color:{background}; font-weight:600">{html.escape(snippet[start:end])}</span>')
        at = end
    out.append(html.escape(snippet[at:]))
    return "".join(out)


def language_badge(hit: DocumentHit) -> str:
    """The shown passage's language, and the document's when most of it is in another.

    Example: "FR"; "FR in EN doc" for a French passage of a mostly English document.
    """
    passage, document = (hit.best.language or "?").upper(), (hit.language or "").upper()
    return passage if not document or document == passage else f"{passage} in {document} doc"


def card_facts(modified: float | None, size: int | None) -> str:
    """Example: card_facts(1.7e9, 34_000) == "14 Nov 2023  ·  34.0 KB"; "file not found" when gone."""
    if modified is None or size is None:
        return "file not found"
    return f"{datetime.fromtimestamp(modified).strftime('%d %b %Y')}  ·  {size_text(size)}"


class QtResultDelegate(QStyledItemDelegate):
    """Paints one DocumentHit as a card of three parts: title line, folder, snippet; the
    row heading the weaker matches as a muted caption over a rule."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:
        line = QFontMetrics(option.font).lineSpacing()
        if index.data(QtResultsModel.SeparatorRole):
            return QSize(0, line + 2 * _PAD)
        # width 0: the card takes the viewport's width and never asks for a scroll bar
        return QSize(0, _PAD * 2 + line * (2 + _SNIPPET_LINES) + 6)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        if index.data(QtResultsModel.SeparatorRole):
            self._paint_separator(painter, option, index)
            return
        hit: DocumentHit | None = index.data(QtResultsModel.HitRole)
        if hit is None:
            return
        c = colours()
        painter.save()
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        if selected:
            painter.fillRect(option.rect, QColor(c.alt))
            painter.fillRect(QRect(option.rect.left(), option.rect.top(), 3, option.rect.height()), QColor(c.accent))
        painter.setPen(QColor(c.border))
        painter.drawLine(option.rect.bottomLeft(), option.rect.bottomRight())
        area = option.rect.adjusted(_PAD + 4, _PAD, -_PAD, -_PAD)
        line = QFontMetrics(option.font).lineSpacing()
        right = self._paint_score_and_badge(painter, option, area, hit, line)
        self._paint_title(painter, option, QRect(area.left(), area.top(), right - area.left() - 6, line), hit)
        painter.setPen(QColor(c.muted))
        self._paint_folder_and_facts(painter, option, QRect(area.left(), area.top() + line, area.width(), line), hit, index)
        snippet_rect = QRect(area.left(), area.top() + 2 * line + 4, area.width(), line * _SNIPPET_LINES + 2)
        self._paint_snippet(painter, option, snippet_rect, hit, index)
        painter.restore()

    def _paint_separator(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        c = colours()
        painter.save()
        font = QFont(option.font)
        font.setBold(True)
        painter.setFont(font)
        painter.setPen(QColor(c.muted))
        area = option.rect.adjusted(_PAD + 4, 0, -_PAD, 0)
        text = str(index.data(Qt.ItemDataRole.DisplayRole))
        painter.drawText(area, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)
        painter.setPen(QColor(c.border))
        x = area.left() + QFontMetrics(font).horizontalAdvance(text) + 8
        y = option.rect.center().y()
        painter.drawLine(x, y, area.right(), y)
        painter.restore()

    def _paint_folder_and_facts(self, painter, option, rect: QRect, hit: DocumentHit, index: QModelIndex) -> None:
        """The folder on the left (elided in the middle), date and size on the right."""
        metrics = QFontMetrics(option.font)
        facts = card_facts(index.data(QtResultsModel.ModifiedRole), index.data(QtResultsModel.SizeRole))
        facts_w = metrics.horizontalAdvance(facts)
        painter.drawText(rect, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, facts)
        folder_w = max(0, rect.width() - facts_w - 12)
        folder = metrics.elidedText(str(Path(hit.path).parent), Qt.TextElideMode.ElideMiddle, folder_w)
        painter.drawText(QRect(rect.left(), rect.top(), folder_w, rect.height()),
                         Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, folder)

    def _paint_title(self, painter, option, rect: QRect, hit: DocumentHit) -> None:
        font = QFont(option.font)
        font.setBold(not hit.weak)  # a weaker match's name is not bold
        painter.setFont(font)
        painter.setPen(QColor(colours().muted if hit.weak else colours().text))
        name = QFontMetrics(font).elidedText(document_title(hit), Qt.TextElideMode.ElideRight, rect.width())
        painter.drawText(rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, name)
        painter.setFont(option.font)

    def _paint_score_and_badge(self, painter, option, area: QRect, hit: DocumentHit, line: int) -> int:
        """Draws score then badge from the right edge; returns the x where they begin."""
        c = colours()
        metrics = QFontMetrics(option.font)
        score = f"{hit.score:.2f}"
        score_w = metrics.horizontalAdvance(score)
        x = area.right() - score_w
        painter.setPen(QColor(c.muted))
        painter.drawText(QRect(x, area.top(), score_w, line), Qt.AlignmentFlag.AlignVCenter, score)
        label = f"{language_badge(hit)} · {MATCH_LABELS.get(hit.matched_by, hit.matched_by)}"
        badge_w = metrics.horizontalAdvance(label) + 12
        x -= badge_w + 8
        badge = QRectF(x, area.top() + 1, badge_w, line - 2)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setBrush(QColor(c.badge))
        painter.setPen(Qt.PenStyle.NoPen)
        painter.drawRoundedRect(badge, 4, 4)
        painter.setPen(QColor(c.text))
        painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, label)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        return x

    def _paint_snippet(self, painter, option, rect: QRect, hit: DocumentHit, index: QModelIndex) -> None:
        if not hit.passages:
            return
        best = hit.best
        doc = QTextDocument()
        doc.setDefaultFont(option.font)
        doc.setDocumentMargin(0)
        doc.setTextWidth(rect.width())
        colour = colours().text
        # the query's words as the keyword index reads them (engine.highlight): whole words or
        # identifier parts; cross-language hits share no words with the query and get no marks
        terms = index.data(QtResultsModel.TermsRole) or NO_TERMS
        snippet, spans = focus_snippet(best.snippet, match_spans(best.snippet, terms))
        doc.setHtml(f'<div style="color:{colour}">{snippet_html(snippet, spans, colours().highlight)}</div>')
        # clip after the last whole line that fits: fallback fonts (CJK) make lines taller
        # than the view font's metrics, and half a line of glyphs looks broken
        doc.size()  # lays the document out now, so its lines can be measured
        layout = doc.firstBlock().layout()
        height = rect.height()
        for i in range(layout.lineCount()):
            bottom = layout.lineAt(i).rect().bottom()
            if bottom > rect.height():
                height = int(layout.lineAt(i - 1).rect().bottom()) if i > 0 else rect.height()
                break
        painter.save()
        painter.translate(rect.topLeft())
        painter.setClipRect(QRect(0, 0, rect.width(), height))
        doc.drawContents(painter, QRectF(0, 0, rect.width(), height))
        painter.restore()


class QtResultsView(QListView):
    """A list of result cards; Enter or double click opens, selection shows the preview.

    The right-click menu (or the Menu key) acts on the card under it: Open, Show in
    folder, Copy path, Copy passage, Forget this document.
    """

    activated_hit = Signal(object)  # DocumentHit to open
    current_hit_changed = Signal(object)  # DocumentHit or None
    show_in_folder_requested = Signal(str)  # path
    forget_requested = Signal(str)  # path of a document to drop from the index

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("results")
        self.setItemDelegate(QtResultDelegate(self))
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setUniformItemSizes(False)  # the weaker matches' heading is shorter than a card
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setMouseTracking(True)
        self.setToolTip("Search results, best first. Enter or double click opens the file.")
        self.activated.connect(lambda index: self.activated_hit.emit(index.data(QtResultsModel.HitRole)))
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._show_context_menu)

    def setModel(self, model) -> None:
        super().setModel(model)
        self.selectionModel().currentChanged.connect(self._on_current)
        model.modelReset.connect(self._select_first)
        model.layoutChanged.connect(self._select_first)
        model.rowsRemoved.connect(self._select_first)
        model.rowsInserted.connect(self._select_first)

    def current_hit(self) -> DocumentHit | None:
        index = self.currentIndex()
        return index.data(QtResultsModel.HitRole) if index.isValid() else None

    def select_path(self, path: str) -> bool:
        """Selects the row showing document `path`; False when it is not in the list."""
        model = self.model()
        for row in range(model.rowCount()):
            index = model.index(row, 0)
            if index.data(QtResultsModel.PathRole) == path:
                if index != self.currentIndex():
                    self.setCurrentIndex(index)
                return True
        return False

    def move(self, step: int) -> None:
        """Moves the selection by `step` rows (Up/Down typed in the search field)."""
        rows = self.model().rowCount()
        if rows == 0:
            return
        row = min(max(self.currentIndex().row() + step, 0), rows - 1)
        if self.model().index(row, 0).data(QtResultsModel.SeparatorRole):  # step over the heading
            row = row + (1 if step > 0 else -1)
            if not 0 <= row < rows:
                return
        self.setCurrentIndex(self.model().index(row, 0))

    def keyPressEvent(self, event) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.currentIndex().isValid():
            self.activated_hit.emit(self.current_hit())
            return
        super().keyPressEvent(event)

    def context_menu(self, index: QModelIndex) -> QMenu | None:
        """The menu for the card at `index` (made current first); None off the cards."""
        if not index.isValid() or index.data(QtResultsModel.SeparatorRole):
            return None
        self.setCurrentIndex(index)
        hit: DocumentHit = index.data(QtResultsModel.HitRole)
        menu = QMenu(self)
        menu.setObjectName("resultMenu")
        menu.addAction("Open", lambda: self.activated_hit.emit(hit))
        menu.addAction("Show in folder", lambda: self.show_in_folder_requested.emit(hit.path))
        menu.addSeparator()
        # the file's own name (hit.path is the engine's key), bytes that are not UTF-8 as U+FFFD
        menu.addAction("Copy path", lambda: QGuiApplication.clipboard().setText(display_path(key_path(hit.path))))
        copy_passage = menu.addAction("Copy passage", lambda: QGuiApplication.clipboard().setText(hit.best.text))
        copy_passage.setEnabled(bool(hit.passages))
        menu.addSeparator()
        menu.addAction("Forget this document", lambda: self.forget_requested.emit(hit.path))
        return menu

    def _show_context_menu(self, pos) -> None:
        menu = self.context_menu(self.indexAt(pos) if self.indexAt(pos).isValid() else self.currentIndex())
        if menu is not None:
            menu.exec(self.viewport().mapToGlobal(pos))

    def _select_first(self, *args) -> None:
        model = self.model()
        first = next((model.index(row, 0) for row in range(model.rowCount())
                      if not model.index(row, 0).data(QtResultsModel.SeparatorRole)), None)
        if first is not None and not self.currentIndex().isValid():
            self.setCurrentIndex(first)
        elif first is None:
            self.current_hit_changed.emit(None)

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self.current_hit_changed.emit(current.data(QtResultsModel.HitRole) if current.isValid() else None)


class QtResultsPane(QWidget):
    """The results list under a "Sort by" choice (relevance, date, name, path, size).

    >>> pane = QtResultsPane(); pane.view.setModel(language_filter)
    >>> pane.sort.currentTextChanged.connect(language_filter.set_sort_key)
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.view = QtResultsView()
        self.sort = QComboBox()
        self.sort.setObjectName("resultsSort")
        self.sort.setToolTip("Order of the results: best match first, or by date, name, folder or size")
        for label, _role, _order in SORT_KEYS:
            self.sort.addItem(label)
        label = QLabel("Sort by")
        label.setObjectName("hint")
        label.setBuddy(self.sort)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addStretch(1)
        row.addWidget(label)
        row.addWidget(self.sort)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(row)
        layout.addWidget(self.view, 1)
