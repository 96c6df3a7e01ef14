"""Search field (debounced as you type, Enter at once) and the filter row.

    >>> bar = QtSearchBar(settings)
    >>> bar.search_requested.connect(run_search)     # after 150 ms of quiet, or on Enter
    >>> bar.set_language_counts({"en": 7, "de": 3})  # the facet over the current results
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from PySide6.QtCore import QEvent, QSettings, QStringListModel, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QCompleter,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from app.gui.common.qt_languages import language_label
from app.gui.common.qt_theme import icon, set_icon
from engine.query import QUERY_HELP

DEBOUNCE_MS = 150
RECENT_KEY = "search/recent"
RECENT_MAX = 20
UNKNOWN_LANGUAGE = "und"  # the facet's item for passages of no known language (ISO 639-2 "undetermined")
# The file type facet: an extension, or a kind the engine expands (engine.extract.dispatch.TYPE_GROUPS).
FILE_TYPES = (
    ("PDF", "pdf"), ("Word documents", "word"), ("Spreadsheets", "spreadsheet"),
    ("Presentations", "presentation"), ("E-mail", "email"), ("Images and scans (OCR)", "image"),
    ("EPUB", "epub"), ("HTML", "html"), ("TXT", "txt"), ("MD", "md"), ("RST", "rst"), ("CSV", "csv"),
    ("Source code", "code"), ("Subtitles", "subtitles"), ("Translations (PO)", "po"),
    ("Manual pages", "man"),
)


def language_item_text(code: str, count: int) -> str:
    """Example: language_item_text("el", 3) == "Greek · el (3)"."""
    return f"{language_label(code).replace(f' ({code})', f' · {code}')} ({count})"


class QtSearchBar(QWidget):
    """The query field and the language / folder / file type filters.

    Signals:
        search_requested(): the query or a filter that narrows the search changed.
        open_requested(): Enter on a query whose results are already shown: open the
            selected result (Enter while the debounce waits searches at once instead).
        language_changed(str): the language facet changed ('' for all); no new search.
        navigate(int): Up (-1) or Down (+1) typed in the field, for the results list.
    """

    search_requested = Signal()
    open_requested = Signal()
    language_changed = Signal(str)
    navigate = Signal(int)

    def __init__(self, settings: QSettings, parent=None):
        super().__init__(parent)
        self._settings = settings
        self.field = QLineEdit()
        self.field.setObjectName("searchField")
        self.field.setPlaceholderText("Search your documents by meaning, in any language  (Ctrl+F)")
        self.field.setClearButtonEnabled(True)
        self.field.setToolTip(
            "Type a question or a few words; results update as you type.\n"
            "Quotes, -word, lang:, type:, path:, after: and before: narrow it (click ? for help).\n"
            "Up/Down pick a result, Enter opens it, Tab moves to the results.\n"
            "Down in the empty field lists earlier searches."
        )
        self.help_action = self.field.addAction(icon("help"), QLineEdit.ActionPosition.TrailingPosition)
        self.help_action.setToolTip(query_help_html())
        self.help_action.triggered.connect(self.show_help)
        self._search_action = self.field.addAction(icon("search"), QLineEdit.ActionPosition.LeadingPosition)
        set_icon(self._search_action, "search")
        self.field.installEventFilter(self)
        self._recent = QStringListModel(self.recent_queries(), self)
        completer = QCompleter(self._recent, self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        # a list of matching earlier queries while typing; Down in the empty field shows all
        completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        completer.setMaxVisibleItems(RECENT_MAX)
        self.field.setCompleter(completer)
        self.debounce = QTimer(self)
        self.debounce.setSingleShot(True)
        self.debounce.setInterval(DEBOUNCE_MS)
        self.debounce.timeout.connect(self.search_requested)
        self.field.textChanged.connect(lambda _text: self.debounce.start())
        self.field.returnPressed.connect(self._on_enter)
        self.language = self._combo("Only results in this language; the numbers count every matching document")
        self.language.currentIndexChanged.connect(lambda _i: self.language_changed.emit(self.selected_language()))
        self.folder = self._combo("Search only in this indexed folder")
        self.folder.currentIndexChanged.connect(lambda _i: self.search_requested.emit())
        self.file_type = self._combo("Search only in files of this type")
        self.file_type.addItem("All file types", "")
        for label, value in FILE_TYPES:
            self.file_type.addItem(label, value)
        self.file_type.currentIndexChanged.connect(lambda _i: self.search_requested.emit())
        for combo in (self.language, self.folder, self.file_type):
            combo.installEventFilter(self)  # Up/Down open the list instead of changing the filter
        self.set_language_counts({})
        self.set_folders([])
        self.count_label = QLabel("")
        self.count_label.setObjectName("hint")
        # its text changes with every search; it must never change the window's minimum width
        self.count_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.count_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        filters = QHBoxLayout()
        filters.setContentsMargins(0, 0, 0, 0)
        for combo in (self.language, self.folder, self.file_type):
            filters.addWidget(combo)
        filters.addWidget(self.count_label, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.field)
        layout.addLayout(filters)

    def _combo(self, tip: str) -> QComboBox:
        combo = QComboBox()
        combo.setToolTip(tip)
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        return combo

    def show_help(self) -> None:
        """The query syntax in a popover under the field (the same text as `babelfind search --help`)."""
        QToolTip.showText(self.field.mapToGlobal(self.field.rect().bottomRight()), query_help_html(), self.field)

    # -- what the window reads -------------------------------------------------------

    def query(self) -> str:
        return self.field.text().strip()

    def selected_language(self) -> str:
        """The facet's item: "" for all languages, UNKNOWN_LANGUAGE or a code."""
        return self.language.currentData() or ""

    def selected_facet(self) -> str | None:
        """The facet as the engine takes it (`search_results(facet=...)`): None for all
        languages, "" for passages of no known language, else the code."""
        chosen = self.selected_language()
        if not chosen:
            return None
        return "" if chosen == UNKNOWN_LANGUAGE else chosen

    def path_prefix(self) -> str | None:
        return self.folder.currentData() or None

    def file_types(self) -> list[str] | None:
        ext = self.file_type.currentData()
        return [ext] if ext else None

    # -- what the window sets --------------------------------------------------------

    def set_language_counts(self, counts: Mapping[str, int]) -> None:
        """Fills the facet with the languages of the current results, keeping the choice.

        A document with matching passages in two languages counts under both, so the
        counts need not add up to the total: "All languages" carries none.
        """
        keep = self.selected_language()
        self.language.blockSignals(True)
        self.language.clear()
        self.language.addItem("All languages", "")
        for language, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            # "" (no known language) must not look like "All languages" (data "")
            self.language.addItem(language_item_text(language, count), language or UNKNOWN_LANGUAGE)
        if keep and self.language.findData(keep) < 0:  # a choice with no hits now stays visible
            self.language.addItem(language_item_text("" if keep == UNKNOWN_LANGUAGE else keep, 0), keep)
        self.language.setCurrentIndex(max(0, self.language.findData(keep)))
        self.language.blockSignals(False)

    def set_folders(self, folders: Sequence[str]) -> None:
        keep = self.path_prefix()
        self.folder.blockSignals(True)
        self.folder.clear()
        self.folder.addItem("All folders", "")
        for folder in sorted(folders, key=lambda f: Path(f).name.lower()):
            self.folder.addItem(icon("folder"), Path(folder).name or folder, folder)
            self.folder.setItemData(self.folder.count() - 1, folder, Qt.ItemDataRole.ToolTipRole)
        self.folder.setCurrentIndex(max(0, self.folder.findData(keep or "")))
        self.folder.blockSignals(False)

    def set_result_count(self, shown: int, total: int, elapsed_ms: float | None = None, weak: int = 0,
                         unknown_names: Sequence[str] = (), left_out: Sequence[tuple[str, int]] = ()) -> None:
        """`shown` of `total` documents that match, and `weak` weaker matches besides
        (result_count_text)."""
        if not self.query():
            self.count_label.setText("")
            return
        self.count_label.setToolTip("")
        text = result_count_text(shown, total, weak, unknown_names, left_out)
        self.count_label.setText(text + (f"  ·  {elapsed_ms:.0f} ms" if elapsed_ms is not None else ""))

    def show_query_error(self, message: str) -> None:
        """Says what in the query cannot be used, where the count would be."""
        self.count_label.setText(message)
        self.count_label.setToolTip(f"<p>{html.escape(message)}</p>{query_help_html()}")

    # -- recent queries --------------------------------------------------------------

    def recent_queries(self) -> list[str]:
        value = self._settings.value(RECENT_KEY, [])
        if isinstance(value, str):  # QSettings INI returns a lone item as a string
            value = [value]
        return [str(v) for v in value or []]

    def remember_query(self) -> None:
        query = self.query()
        if not query:
            return
        recent = [query] + [q for q in self.recent_queries() if q != query]
        recent = recent[:RECENT_MAX]
        self._settings.setValue(RECENT_KEY, recent)
        self._recent.setStringList(recent)

    # -- keys ------------------------------------------------------------------------

    def _on_enter(self) -> None:
        pending = self.debounce.isActive()
        self.debounce.stop()
        self.remember_query()
        if pending:
            self.search_requested.emit()
        else:
            self.open_requested.emit()

    def show_history(self) -> bool:
        """Pops up every remembered query; False when there is none."""
        completer = self.field.completer()
        if not self._recent.rowCount():
            return False
        completer.setCompletionPrefix("")
        completer.complete()
        return True

    def eventFilter(self, watched, event) -> bool:
        if (isinstance(watched, QComboBox) and event.type() == QEvent.Type.KeyPress
                and event.key() in (Qt.Key.Key_Up, Qt.Key.Key_Down)):
            watched.showPopup()  # a filter changes only by a choice made in its list
            return True
        if watched is self.field and event.type() == QEvent.Type.KeyPress:
            if event.key() == Qt.Key.Key_Down:
                if not self.field.text() and self.show_history():
                    return True
                self.navigate.emit(1)
                return True
            if event.key() == Qt.Key.Key_Up:
                self.navigate.emit(-1)
                return True
        return super().eventFilter(watched, event)


def query_help_html(text: str = QUERY_HELP) -> str:
    """The query syntax as rich text: its two columns in a table, since a tooltip's
    proportional font cannot line up the spaces of the plain text (`babelfind search --help`).

    Example: "  lang:de   only passages..." becomes <tr><td><code>lang:de</code></td><td>only passages...</td></tr>
    """
    parts, rows = [], []  # rows: [syntax, meaning] of the table being read

    def close_table() -> None:
        cells = "".join(f'<tr><td style="padding-right:12px"><code>{html.escape(syntax)}</code></td>'
                        f"<td>{html.escape(meaning)}</td></tr>" for syntax, meaning in rows)
        parts.append(f"<table cellspacing=0>{cells}</table>")
        rows.clear()

    for line in text.splitlines():
        if rows and _HELP_CONTINUED.match(line):  # the description goes on below its row
            rows[-1][1] += " " + line.strip()
            continue
        column = _HELP_ROW.match(line)
        if column:
            rows.append(list(column.groups()))
            continue
        if rows:  # a line after the table closes it
            close_table()
        if line.strip():
            parts.append(f"<p>{html.escape(line.strip())}</p>")
    if rows:
        close_table()
    return "".join(parts)


# "  syntax   what it does": two leading spaces, two or more before the description (the
# syntax may hold double spaces itself: "-word  -\"a b\"")
_HELP_ROW = re.compile(r"^ {2}(\S.*\S|\S) {2,}(\S(?:(?! {2}).)*)$")
_HELP_CONTINUED = re.compile(r"^ {6,}\S")  # only spaces where the syntax column stands


def result_count_text(shown: int, total: int, weak: int = 0, unknown_names: Sequence[str] = (),
                      left_out: Sequence[tuple[str, int]] = ()) -> str:
    """Example: result_count_text(2, 8, 5) == "2 of 8 documents match  ·  5 weaker"; with
    `unknown_names` (names in the query the library never mentions) and no match,
    "Nothing mentions “WordPress”  ·  5 weaker"; with `left_out` (each excluded word and
    the documents holding it), "...  ·  17 left out for “kernel”"."""
    if total == 0 and unknown_names:
        text = "Nothing mentions " + ", ".join(f"“{name}”" for name in unknown_names)
    elif total == 0:
        text = "No documents match"
    else:
        noun, verb = ("document", "matches") if total == 1 else ("documents", "match")
        text = f"{shown} of {total} {noun} {verb}" if shown != total else f"{total} {noun} {verb}"
    text += f"  ·  {weak} weaker" if weak else ""
    return text + "".join(f"  ·  {count} left out for “{word}”" for word, count in left_out)
