"""What the results area shows when there is nothing to list.

    >>> state = QtEmptyState()
    >>> state.sample_requested.connect(window.index_sample)
    >>> state.show_welcome()                                   # the library holds nothing yet
    >>> state.show_no_results("bees", ["language: German"], None)

Three pages: `welcome` (no documents: drag and drop, the formats read, that nothing leaves
the machine, the sample corpus one click away), `ready` (documents, no query yet) and
`no_results` (a query that found nothing: what narrows it, the query syntax). The widget
only asks; QtEmptyStateActions, a mixin of the main window, picks the page and runs the
sample corpus through the window's indexing job queue.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.gui.common.qt_jobs import Job
from app.gui.common.qt_languages import language_label
from app.gui.common.qt_theme import set_icon
from engine.errors import BabelfindError
from engine.extract import FORMATS
from engine.query import ParsedQuery
from engine.resources import SAMPLE_QUERY, sample_corpus

PAGES = ("welcome", "ready", "no_results")
SAMPLE_JOB = "Indexing the sample documents"
# How the welcome page names each format the engine reads (engine.extract.FORMATS);
# containers first, the way people think of their documents.
FORMAT_NAMES = {
    "pdf": "PDF", "docx": "Word (DOCX)", "doc": "old Word (DOC)", "odt": "OpenDocument (ODT)",
    "rtf": "RTF", "epub": "EPUB", "xlsx": "Excel (XLSX)", "xls": "old Excel (XLS)",
    "ods": "OpenDocument spreadsheets (ODS)", "pptx": "PowerPoint (PPTX)", "odp": "OpenDocument slides (ODP)",
    "eml": "e-mail (EML/Maildir)", "msg": "Outlook (MSG)", "mbox": "mailboxes (mbox)",
    "zip": "ZIP", "tar": "tar", "compressed": "gzip/bzip2/xz", "image": "images and scans (OCR)",
    "html": "web pages (HTML)", "md": "Markdown", "rst": "reStructuredText", "txt": "plain text",
    "csv": "CSV", "po": "translation catalogues (PO)", "code": "source code and configuration",
    "subtitles": "subtitles", "man": "manual pages",
}


def formats_text(formats: Sequence[str] = FORMATS) -> str:
    """The formats the engine reads, in words.

    Example: formats_text(("txt", "pdf")) == "PDF and plain text"
    """
    ordered = [f for f in FORMAT_NAMES if f in formats] + sorted(f for f in formats if f not in FORMAT_NAMES)
    return _joined([FORMAT_NAMES.get(f, f.upper()) for f in ordered])


def _joined(items: Sequence[str]) -> str:
    """Example: _joined(["a", "b", "c"]) == "a, b and c"."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def active_filters(bar, parsed: ParsedQuery | None) -> list[str]:
    """What narrows the search now: the window's filters, then the query's own syntax
    (`parsed`: the last search's query, None when it did not parse).

    Example: with PDF chosen as the file type, active_filters(bar, parse_query('"honey bees" -wasps lang:de')) ==
        ["file type: PDF", "the phrase “honey bees”", "leaving out “wasps”", "lang:de"]
    """
    found = []
    if bar.selected_facet() is not None:
        found.append(f"language: {language_label(bar.selected_facet())}")
    if bar.path_prefix():
        found.append(f"folder: {bar.folder.currentText()}")
    if bar.file_types():
        found.append(f"file type: {bar.file_type.currentText()}")
    if parsed is None:
        return found  # the no-results page shows the syntax error itself
    found += [f"the phrase “{phrase}”" for phrase in parsed.phrases]
    found += [f"leaving out “{word}”" for word in parsed.excluded]
    found += [f"lang:{code}" for code in sorted(parsed.languages)]
    found += [f"type:{ext}" for ext in sorted(parsed.file_types)]
    if parsed.path_prefix:
        found.append(f"path:{parsed.path_prefix}")
    if parsed.modified_after is not None or parsed.modified_before is not None:
        found.append("the dates in after: / before:")
    return found


def clear_filters(bar) -> bool:
    """Sets the language, folder and file type choices back to "all"; True if one changed.

    The caller runs the one search that follows (the choices change with signals blocked,
    so three changes do not make three searches).
    """
    changed = False
    for combo in (bar.language, bar.folder, bar.file_type):
        if combo.currentIndex() != 0:
            combo.blockSignals(True)
            combo.setCurrentIndex(0)
            combo.blockSignals(False)
            changed = True
    return changed


class QtEmptyState(QStackedWidget):
    """The welcome, ready and no-results pages.

    Signals:
        sample_requested(): "Try the sample documents" was clicked.
        add_folder_requested(): "Add a folder..." was clicked.
        clear_filters_requested(): "Clear filters" on the no-results page.
        syntax_help_requested(): the query syntax link on the no-results page.
    """

    sample_requested = Signal()
    add_folder_requested = Signal()
    clear_filters_requested = Signal()
    syntax_help_requested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("emptyState")
        self._pages: dict[str, QWidget] = {}
        for name, build in (("welcome", self._build_welcome), ("ready", self._build_ready),
                            ("no_results", self._build_no_results)):
            page = build()
            self._pages[name] = page
            self.addWidget(page)

    # -- what the window calls -------------------------------------------------------

    def page(self) -> str:
        """The page on show: one of PAGES."""
        current = self.currentWidget()
        return next(name for name, widget in self._pages.items() if widget is current)

    def show_welcome(self, sample_busy: bool = False) -> None:
        """The first-run page; `sample_busy` while the sample corpus is being indexed."""
        self.sample_button.setEnabled(not sample_busy)
        self.sample_button.setText("Indexing the sample documents..." if sample_busy else "Try the sample documents")
        self.setCurrentWidget(self._pages["welcome"])

    def show_ready(self, documents: int) -> None:
        self.ready_text.setText(
            "Type what you are looking for, in any language.\n"
            f"{documents:,} document{'s are' if documents != 1 else ' is'} indexed;"
            " drop more folders or files anywhere on this window."
        )
        self.setCurrentWidget(self._pages["ready"])

    def show_no_results(self, query: str, filters: Sequence[str], syntax_error: str | None) -> None:
        """Nothing found for `query`: the syntax error if any, else what narrows the search."""
        # a query with its own quotes ("a phrase") reads best without another pair around it
        shown = query if '"' in query else f"“{query}”"
        self.no_results_title.setText(f"No documents match {shown}")
        if syntax_error:
            self.no_results_text.setText(f"Part of the query cannot be used: {syntax_error}")
        elif filters:
            self.no_results_text.setText(f"The search is narrowed by {_joined(filters)}. Remove one to search more widely.")
        else:
            self.no_results_text.setText("Try other words, or ask a question: the search goes by meaning,"
                                         " so a document in another language can answer too.")
        self.clear_button.setVisible(not syntax_error and any(_is_window_filter(f) for f in filters))
        self.setCurrentWidget(self._pages["no_results"])

    # -- pages -----------------------------------------------------------------------

    def _build_welcome(self) -> QWidget:
        title = _label("Search your own documents by meaning, in any language", "emptyTitle")
        drop = QFrame()
        drop.setObjectName("dropZone")
        drop_text = _label("Drop folders or files here", "emptyHint")
        self.add_button = QPushButton("Add a folder...")
        set_icon(self.add_button, "folder-add")
        self.add_button.clicked.connect(self.add_folder_requested)
        drop_column = QVBoxLayout(drop)
        drop_column.setContentsMargins(24, 28, 24, 28)
        drop_column.addWidget(drop_text)
        drop_column.addWidget(_centred(self.add_button))
        formats = _label(f"Babelfind reads {formats_text()}.", "hint")
        private = _label("Everything stays on this computer: your documents are read, indexed and searched "
                         "here, and nothing is uploaded.", "hint")
        self.sample_button = QPushButton("Try the sample documents")
        self.sample_button.setObjectName("primary")
        self.sample_button.setToolTip("Indexes nine short texts in nine languages that come with Babelfind,"
                                      " then suggests a query to try")
        self.sample_button.clicked.connect(self.sample_requested)
        sample_hint = _label("Nine short texts in nine languages, to see a question find its answer"
                             " in another language.", "hint")
        return _page(title, drop, formats, private, _centred(self.sample_button), sample_hint)

    def _build_ready(self) -> QWidget:
        self.ready_text = _label("", "emptyHint")
        return _page(self.ready_text)

    def _build_no_results(self) -> QWidget:
        self.no_results_title = _label("", "emptyTitle")
        self.no_results_text = _label("", "emptyHint")
        self.clear_button = QPushButton("Clear filters")
        self.clear_button.setToolTip("Search all languages, folders and file types again")
        self.clear_button.clicked.connect(self.clear_filters_requested)
        self.syntax_link = QLabel('<a href="#syntax">How to write a query: phrases, -word, lang:, type:,'
                                  " path:, after:, before:</a>")
        self.syntax_link.setObjectName("hint")
        self.syntax_link.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.syntax_link.setWordWrap(True)
        self.syntax_link.linkActivated.connect(lambda _href: self.syntax_help_requested.emit())
        return _page(self.no_results_title, self.no_results_text, _centred(self.clear_button), self.syntax_link)


class QtEmptyStateActions:
    """The window's side of the empty state: which page fits, and the sample corpus job.

    A mixin of QtMainWindow (it uses `library`, `jobs`, `search_bar`, `results_model`,
    `language_filter`, `results_splitter`, `empty_state`, `_syntax_error`, `_parsed_query`, `_report`,
    `_show_summary`, `focus_search` and `run_search`).
    """

    def _show_results_area(self) -> None:
        """Results and preview for a search that found something; otherwise the empty state
        that fits: welcome (nothing indexed), ready (no query) or no results."""
        query = self.results_model.query()  # the last search's, not a half-typed one
        found = self.language_filter.rowCount() > 0
        self.results_splitter.setVisible(bool(query) and found)
        self.empty_state.setVisible(not (query and found))
        if query and found:
            return
        documents = self.library.status().documents
        if not documents:
            self.empty_state.show_welcome(sample_busy=self._sample_busy())
        elif not query:
            self.empty_state.show_ready(documents)
        else:
            self.empty_state.show_no_results(query, active_filters(self.search_bar, self._parsed_query),
                                             self._syntax_error)

    def _clear_filters(self) -> None:
        if clear_filters(self.search_bar):
            self.run_search()

    def index_sample(self) -> None:
        """Indexes the sample corpus like a dropped folder (progress, Cancel), then suggests a query."""
        try:
            folder = sample_corpus()
        except BabelfindError as e:
            self._report(e)
            return
        self.jobs.submit(Job(SAMPLE_JOB, lambda: self.library.index_paths([folder]), frozenset({str(folder)}),
                             on_success=self._suggest_sample_query))
        self._show_results_area()  # the button says it is busy

    def _sample_busy(self) -> bool:
        return any(job is not None and job.label == SAMPLE_JOB for job in [self.jobs.current(), *self.jobs.pending()])

    def _suggest_sample_query(self, last) -> None:
        """Puts a query the sample answers in the search field, unless the user typed one
        meanwhile; it runs when the job queue goes idle (the window's refresh searches)."""
        self._show_summary(last)
        if self.search_bar.query():
            return
        self.search_bar.field.setText(SAMPLE_QUERY)
        self.search_bar.debounce.stop()  # the idle refresh searches once
        self.focus_search()
        self.statusBar().showMessage("The sample documents are indexed: try this query, or type your own", 10_000)


def _is_window_filter(description: str) -> bool:
    return description.startswith(("language:", "folder:", "file type:"))


def _label(text: str, name: str) -> QLabel:
    label = QLabel(text)
    label.setObjectName(name)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setWordWrap(True)  # a long line must not widen the window
    return label


def _centred(widget: QWidget, stretch: int = 0) -> QWidget:
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addStretch(1)
    layout.addWidget(widget, stretch)
    layout.addStretch(1)
    return row


def _page(*widgets: QWidget) -> QWidget:
    """The widgets in a centred column of readable width."""
    column = QWidget()
    column.setMaximumWidth(560)
    # as wide as the maximum allows: word-wrapped labels alone would ask for a narrow column
    column.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
    inner = QVBoxLayout(column)
    inner.setSpacing(14)
    for widget in widgets:
        inner.addWidget(widget)
    page = QWidget()
    outer = QVBoxLayout(page)
    outer.addStretch(1)
    outer.addWidget(_centred(column, stretch=100))
    outer.addStretch(2)
    return page
