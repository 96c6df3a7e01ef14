"""The main window: search, results, preview, collections, indexing feedback.

    >>> window = QtMainWindow(Library.open(), QSettings("Babelfind", "Babelfind"))
    >>> window.show()

Every user action becomes one engine call: searches run in the GUI thread (they take
milliseconds), indexing jobs run in the QtJobQueue's worker thread.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import shiboken6
from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QLabel, QMainWindow, QSplitter, QVBoxLayout, QWidget

from app.gui.common import qt_files
from app.gui.search.qt_collections import QtCollections
from app.gui.search.qt_empty_state import QtEmptyState, QtEmptyStateActions
from app.gui.search.qt_indexing import QtProgressRow, QtSkippedPanel, summary_text
from app.gui.common.qt_jobs import Job, QtJobQueue
from app.gui.common.qt_repairs import QtRepairNotes
from app.gui.search.qt_menus import build_menus
from app.gui.search.qt_models import QtLanguageFilter, QtResultsModel
from app.gui.search.qt_preview import QtPreview
from app.gui.search.qt_result_actions import QtResultActions
from app.gui.search.qt_results_view import QtResultsPane
from app.gui.search.qt_search_bar import QtSearchBar
from app.gui.common.qt_theme import app_icon, is_palette_change, refresh_icons
from app.gui.search.qt_watch import QtFolderWatch
from app.gui.common.qt_worker import QtWorker
from engine.encoders.deferred import DeferredEncoder
from engine.errors import BabelfindError, QuerySyntaxError
from engine.events import IndexFinished, SearchResults
from engine.highlight import NO_TERMS
from engine.locking import LockHolder
from engine.query import ParsedQuery, parse_query
from engine.scan import key_path

log = logging.getLogger(__name__)

RESULT_LIMIT = 50  # documents shown per search; counts and the language facet cover every match
RESULTS_MIN_WIDTH = 360  # px: a card's name, folder, date and snippet stay readable
ROOTS_REFRESH_MS = 1000  # sidebar counts refresh at most this often while indexing
OTHER_WRITERS_POLL_MS = 2000  # how often the window looks for another process's changes
OTHER_WRITERS_QUIET_S = 6.0  # ...and searches again once they have stopped this long
LOADING_MESSAGE = "Loading the model..."


class QtMainWindow(QtResultActions, QtEmptyStateActions, QMainWindow):
    """The Babelfind window over one engine Library."""

    searched = Signal(float)  # milliseconds the last search took (the benchmark listens)

    def __init__(self, library, settings: QSettings | None = None, parent=None, *, watch_debounce_s: float = 2.0):
        super().__init__(parent)
        self.library = library
        self.settings = settings or QSettings()
        self.jobs = QtJobQueue(self)
        self.watch = QtFolderWatch(watch_debounce_s, self)
        self.last_error: BabelfindError | Exception | None = None
        self._warm_up: QtWorker | None = None  # loads a deferred encoder after the first show
        self._search_waiting = False
        self._shut_down = False  # the library may be closed: queued timers and signals search nothing
        self._syntax_error: str | None = None  # of the last search, for the no-results page
        self._parsed_query: ParsedQuery | None = None  # the last search's query, likewise
        self.setWindowTitle("Babelfind")
        self.setWindowIcon(app_icon())
        self.setAcceptDrops(True)
        self._build()
        # a line edit takes any drop with text, and file managers add the paths as text:
        # the field refuses drops so they reach the window and get indexed
        self.search_bar.field.setAcceptDrops(False)
        self.menus = build_menus(self)
        # Tools > ... windows by key, opened by whoever added the entries (app.gui.qt_tools)
        self.tool_windows: dict[str, QWidget] = {}
        self._connect()
        self._roots_timer = QTimer(self, singleShot=True, interval=ROOTS_REFRESH_MS)
        self._roots_timer.timeout.connect(self.refresh_library_view)
        # what another process does to the library (_follow_other_writers)
        self._other_writer: LockHolder | None = None  # writing now, as its lock says
        self._changed_elsewhere_at: float | None = None  # its last change the results have not seen
        self.refresh_library_view()
        self._others_timer = QTimer(self, interval=OTHER_WRITERS_POLL_MS)
        self._others_timer.timeout.connect(self._follow_other_writers)
        self._others_timer.start()
        self.watch.set_watched(key_path(r.path) for r in self.library.roots() if r.watch)
        self._restore_state()

    # -- layout ----------------------------------------------------------------------

    def _build(self) -> None:
        self.collections = QtCollections()
        self.search_bar = QtSearchBar(self.settings)
        self.results_model = QtResultsModel(self)
        self.language_filter = QtLanguageFilter(self)
        self.language_filter.setSourceModel(self.results_model)
        self.results_pane = QtResultsPane()
        self.results = self.results_pane.view
        self.results.setModel(self.language_filter)
        self.preview = QtPreview(self.library.document_text)
        self.empty_state = QtEmptyState()
        self.progress = QtProgressRow()
        self.skipped = QtSkippedPanel()

        # A result card needs room for its name, folder and two lines of snippet: without
        # a floor the preview's width hint left the list 150 px at the default 1200 x 760.
        self.results_pane.setMinimumWidth(RESULTS_MIN_WIDTH)
        self.results_splitter = QSplitter(Qt.Orientation.Horizontal)
        self.results_splitter.addWidget(self.results_pane)
        self.results_splitter.addWidget(self.preview)
        self.results_splitter.setChildrenCollapsible(False)
        self.results_splitter.setStretchFactor(0, 2)
        self.results_splitter.setStretchFactor(1, 3)
        self.results_splitter.setSizes([440, 520])
        centre = QWidget()
        column = QVBoxLayout(centre)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.search_bar)
        column.addWidget(self.empty_state, 1)
        column.addWidget(self.results_splitter, 1)
        column.addWidget(self.progress)
        column.addWidget(self.skipped)

        self.main_splitter = QSplitter(Qt.Orientation.Horizontal)
        self.main_splitter.addWidget(self.collections)
        self.main_splitter.addWidget(centre)
        self.main_splitter.setStretchFactor(0, 0)
        self.main_splitter.setStretchFactor(1, 1)
        self.main_splitter.setSizes([250, 950])
        outer = QWidget()
        layout = QVBoxLayout(outer)
        layout.setContentsMargins(10, 10, 10, 6)
        layout.addWidget(self.main_splitter)
        self.setCentralWidget(outer)
        self.status_label = QLabel()
        self.statusBar().addPermanentWidget(self.status_label)
        self.repair_notes = QtRepairNotes(self)  # a damaged index rebuilt: say so, as the CLI does
        self.repair_notes.noted.connect(lambda text: self.statusBar().showMessage(text, 15_000))
        self._set_tab_order()

    def _set_tab_order(self) -> None:
        """Search -> results -> preview, then the filters: Tab reaches the results at once."""
        bar = self.search_bar
        chain = [bar.field, self.results, self.preview.editor, self.results_pane.sort,
                 bar.language, bar.folder, bar.file_type]
        for first, second in zip(chain, chain[1:]):
            QWidget.setTabOrder(first, second)

    def _connect(self) -> None:
        bar = self.search_bar
        bar.search_requested.connect(self.run_search)
        bar.language_changed.connect(self._on_language)
        bar.navigate.connect(self.results.move)
        bar.open_requested.connect(self._open_current_or_search)
        self.results_pane.sort.currentTextChanged.connect(self.language_filter.set_sort_key)
        self.results.current_hit_changed.connect(self.preview.show_hit)
        self.results.activated_hit.connect(self._open_hit)
        self.results.show_in_folder_requested.connect(self.show_in_folder)
        self.results.forget_requested.connect(self.forget_document)
        self.preview.open_requested.connect(self.open_path)
        self.preview.show_in_folder_requested.connect(self.show_in_folder)
        self.collections.add_requested.connect(self.choose_folder)
        self.collections.reindex_requested.connect(self.reindex_root)
        self.collections.remove_requested.connect(self.remove_root)
        self.collections.watch_toggled.connect(self.set_watch)
        self.collections.show_in_folder_requested.connect(self.show_in_folder)
        self.empty_state.sample_requested.connect(self.index_sample)
        self.empty_state.add_folder_requested.connect(self.choose_folder)
        self.empty_state.clear_filters_requested.connect(self._clear_filters)
        self.empty_state.syntax_help_requested.connect(self.search_bar.show_help)
        self.progress.cancel_requested.connect(self.jobs.cancel)
        self.jobs.started.connect(self._on_job_started)
        self.jobs.progress.connect(self._on_job_progress)
        self.jobs.succeeded.connect(self._on_job_succeeded)
        self.jobs.cancelled.connect(self._on_job_cancelled)
        self.jobs.failed.connect(self._on_job_failed)
        self.jobs.idle.connect(self._on_jobs_idle)
        self.watch.changes.connect(self._on_watched_changes)
        self.watch.failed.connect(lambda folder, reason: self.statusBar().showMessage(reason, 8000))
        QShortcut(QKeySequence.StandardKey.Find, self, activated=self.focus_search)

    # -- searching -------------------------------------------------------------------

    def focus_search(self) -> None:
        self.search_bar.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search_bar.field.selectAll()

    def run_search(self) -> None:
        """One engine search for the current query and folder / file type filters."""
        if self._shut_down:
            return
        bar = self.search_bar
        query = bar.query()
        if query and not self.model_ready():
            self._search_waiting = True  # runs when the warm-up finishes; the window stays live
            self.statusBar().showMessage(LOADING_MESSAGE)
            return
        started = time.perf_counter()
        results, syntax_error, parsed = SearchResults((), 0, {}), None, None
        if query:
            try:
                parsed = parse_query(query)  # once: both facet searches and the marks use it
                results = self._search(parsed)
                if results.query is not None:  # as searched: "-lfoo" may be a word after all
                    parsed = replace(parsed, words=results.query.words, excluded=results.query.excluded)
            except QuerySyntaxError as e:  # often half typed ("lang:d", an open quote): a hint, not an alarm
                syntax_error = e
            except BabelfindError as e:
                self._report(e)
        # the same query again (a refresh after indexing, a filter change) keeps the
        # document being read; a new query starts at its best hit
        keep = self.results.current_hit() if query == self.results_model.query() else None
        terms = parsed.highlight.stemmed(results.language) if parsed is not None else NO_TERMS
        self.preview.terms = terms
        hits = list(results.hits)
        self.results_model.set_hits(hits, query, terms)
        self._parsed_query = parsed
        if keep is not None:
            self.results.select_path(keep.path)
        bar.set_language_counts(results.languages)
        elapsed_ms = (time.perf_counter() - started) * 1000
        strong_shown = sum(1 for hit in hits if not hit.weak)
        bar.set_result_count(strong_shown, results.total, elapsed_ms if query else None, results.weak_total,
                             results.unknown_names, results.left_out)
        if syntax_error is not None:
            bar.show_query_error(str(syntax_error))
        self._syntax_error = str(syntax_error) if syntax_error is not None else None
        self._show_results_area()
        if query:
            self.skipped.collapse()  # the list of skipped files gives the results their room back
        self.searched.emit(elapsed_ms)

    # -- model warm-up -----------------------------------------------------------------

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._warm_up is None:
            self._start_warm_up()

    def _start_warm_up(self) -> None:
        """Loads a deferred encoder in a worker thread, so the window shows at once."""
        encoder = self.library.encoder
        if not isinstance(encoder, DeferredEncoder) or encoder.loaded:
            return
        self._warm_up = QtWorker.for_callback(lambda report: self._load_model(encoder), self)
        self._warm_up.errored.connect(lambda error: self._report(error, "The model could not be loaded"))
        self._warm_up.finished.connect(self._on_model_ready)
        self._warm_up.start()

    def _load_model(self, encoder: DeferredEncoder) -> None:
        """In the warm-up thread: the model, then what the first search would pay for."""
        encoder.load()
        self.library.warm_up(encoder)

    def model_ready(self) -> bool:
        """True once no warm-up is running (searches would wait for it)."""
        return self._warm_up is None or self._warm_up.isFinished()

    def _on_model_ready(self) -> None:
        if self.statusBar().currentMessage() == LOADING_MESSAGE:  # not an error shown meanwhile
            self.statusBar().clearMessage()
        if self._search_waiting:
            self._search_waiting = False
            self.run_search()

    def _search(self, query: ParsedQuery) -> SearchResults:
        """The search the window shows: the engine narrows to the chosen facet (documents
        with a matching passage in that language) among every match, so the facet's count
        is what choosing it shows."""
        bar = self.search_bar
        # explained: a result's tooltip says why it stands where it does
        results = self.library.search_results(query, RESULT_LIMIT, path_prefix=bar.path_prefix(),
                                              file_types=bar.file_types(), facet=bar.selected_facet(),
                                              explain=True)
        if not results.complete:
            log.info("search %r: counting stopped at %d documents", query, results.total)
        return results

    def _on_language(self, _language: str) -> None:
        self.run_search()  # the language filters inside retrieval, not over the shown 50

    def _open_hit(self, hit) -> None:
        if hit is not None:
            self.search_bar.remember_query()
            self.open_path(hit.path)

    def _open_current_or_search(self) -> None:
        """Enter in the search field: open the selected result of the query on screen."""
        hit = self.results.current_hit()
        if hit is None or self.results_model.query() != self.search_bar.query():
            self.run_search()
        else:
            self._open_hit(hit)

    # -- indexing --------------------------------------------------------------------

    def index_paths(self, paths: Sequence[Path]) -> None:
        """Queues one engine index_paths call for dropped or chosen files and folders."""
        paths = [Path(p) for p in paths]
        if not paths:
            return
        label = f"Indexing {paths[0].name}" + (f" and {len(paths) - 1} more" if len(paths) > 1 else "")
        roots = frozenset(str(p) for p in paths if p.is_dir())
        self.jobs.submit(Job(label, lambda: self.library.index_paths(paths), roots))

    def reindex_root(self, root: str) -> None:
        folder = key_path(root)  # a stored key: the exact folder name back
        self.jobs.submit(Job(f"Re-indexing {qt_files.display_path(folder.name)}", lambda: self.library.reindex(folder),
                             frozenset({root})))

    def switch_model(self, name: str) -> None:
        """Re-encodes everything with model `name`; searches keep using the old index meanwhile.

        A bundled model not built yet (app.first_run.offered_models) is built first, as a
        job of its own: cancelling it leaves the current model and index as they were."""
        from app.first_run import install_model, models_missing

        def re_encode(_last=None) -> None:
            self.jobs.submit(Job(f"Switching to model {name}", lambda: self.library.switch_model(name)))

        if not models_missing(self.library.paths, name):
            re_encode()
            return
        self.jobs.submit(Job(f"Building model {name}", lambda report: install_model(self.library.paths, name, report),
                             callback_style=True, on_success=re_encode,
                             cancel_note=f"nothing changed: searches keep using {self.library.status().model}"))

    def choose_folder(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        folder = QFileDialog.getExistingDirectory(self, "Add a folder to search", str(qt_files.documents_folder()))
        if folder:
            self.index_paths([Path(folder)])

    def dragEnterEvent(self, event) -> None:
        if _local_paths(event.mimeData()):
            event.acceptProposedAction()

    def dragMoveEvent(self, event) -> None:
        if _local_paths(event.mimeData()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        paths = _local_paths(event.mimeData())
        if paths:
            event.acceptProposedAction()
            self.index_paths(paths)

    def _on_job_started(self, job: Job) -> None:
        self.progress.start(job.label)
        self.collections.set_busy(self.jobs.busy_roots())

    def _on_job_progress(self, event) -> None:
        self.progress.show_event(event)
        if not self._roots_timer.isActive():
            self._roots_timer.start()  # counts grow in the sidebar while indexing

    def _on_job_succeeded(self, job: Job, last) -> None:
        if job.on_success is not None:
            job.on_success(last)
        else:
            self._show_summary(last)

    def _show_summary(self, last) -> None:
        if isinstance(last, IndexFinished):
            self.skipped.show_skipped(last.summary.skipped)
            self.statusBar().showMessage(summary_text(last.summary), 10_000)

    def _on_job_cancelled(self, job: Job) -> None:
        self.statusBar().showMessage(f"{job.label}: cancelled; {job.cancel_note}", 10_000)

    def _on_job_failed(self, job: Job, error) -> None:
        self._report(error, prefix=job.label)

    def _on_jobs_idle(self) -> None:
        self.progress.finish()
        self.collections.set_busy(set())
        self.refresh_library_view()
        if self.search_bar.query():
            self.run_search()  # the new documents join the results on screen

    # -- collections -----------------------------------------------------------------

    def refresh_library_view(self) -> None:
        """Sidebar, folder filter and status line from the engine's current counts."""
        self._library_state = self.library.stored_state()  # before the counts: none newer is missed
        roots = self.library.roots()
        self.collections.set_roots(roots)
        self.collections.set_busy(self.jobs.busy_roots())
        self.search_bar.set_folders([r.path for r in roots])
        status = self.library.status()
        documents = "1 document" if status.documents == 1 else f"{status.documents:,} documents"
        passages = "1 passage" if status.passages == 1 else f"{status.passages:,} passages"
        self._counts_text = f"{documents}  ·  {passages}  ·  model {status.model}"
        self._show_status_text()
        self._show_results_area()

    def _show_status_text(self) -> None:
        text = self._counts_text
        if self._other_writer is not None:
            text += f"  ·  another Babelfind process (pid {self._other_writer.pid}) is {self._other_writer.activity}"
        self.status_label.setText(text)

    def _follow_other_writers(self) -> None:
        """Another process (the command line, a second window) changed the library: the
        counts follow at once, and the results on screen are searched again once it has
        been quiet a while, so that they do not move under the reader at every batch."""
        if self._shut_down or self.jobs.busy():
            return  # this window's own jobs refresh the view as they go
        writer = self.library.lock.holder() if self.library.lock.held_elsewhere() else None
        if writer != self._other_writer:
            self._other_writer = writer
            self._show_status_text()
        if self.library.stored_state() != self._library_state:
            self._changed_elsewhere_at = time.monotonic()
            self.refresh_library_view()
        elif (self._changed_elsewhere_at is not None
              and time.monotonic() - self._changed_elsewhere_at >= OTHER_WRITERS_QUIET_S):
            self._changed_elsewhere_at = None
            if self.search_bar.query():
                self.run_search()

    def set_watch(self, root: str, watch: bool) -> None:
        self.library.set_watch(key_path(root), watch)
        self.watch.set_watched(key_path(r.path) for r in self.library.roots() if r.watch)
        self.refresh_library_view()

    def _on_watched_changes(self, batch) -> None:
        """A watched folder changed: one job drops the deleted files and re-indexes the rest
        (in the worker: another process may hold the write lock)."""
        deleted, changed = sorted(batch.deleted), sorted(batch.changed)

        def update():
            if deleted:  # files never indexed, or whose folder went first, are passed over
                yield from self.library.forgetting(deleted, missing_ok=True)
            if changed:
                yield from self.library.index_paths(changed, keep_exclusions=True)

        if deleted or changed:
            self.jobs.submit(Job(f"Updating {batch.root.name}", update))

    # -- errors, state ---------------------------------------------------------------

    def _report(self, error: Exception, prefix: str = "") -> None:
        self.last_error = error
        if not isinstance(error, BabelfindError):
            log.error("unexpected error", exc_info=error)
        text = f"{prefix}: {error}" if prefix else str(error)
        self.statusBar().showMessage(text, 15_000)

    def _restore_state(self) -> None:
        geometry = self.settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1200, 760)
        for name, splitter in (("window/main_splitter", self.main_splitter), ("window/results_splitter", self.results_splitter)):
            state = self.settings.value(name)
            if state is not None:
                splitter.restoreState(state)

    def save_state(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/main_splitter", self.main_splitter.saveState())
        self.settings.setValue("window/results_splitter", self.results_splitter.saveState())
        self.settings.sync()

    def changeEvent(self, event) -> None:
        if is_palette_change(event):
            refresh_icons(self)  # every set_icon() button and action in the window
        super().changeEvent(event)

    def closeEvent(self, event) -> None:
        self.save_state()
        self.shutdown()
        super().closeEvent(event)

    def shutdown(self) -> None:
        """Stops indexing (keeping what is done) and folder watching."""
        # The warm-up's queued `finished` and a pending debounce of the search field still
        # arrive after the caller closed the library: from here on they search nothing.
        self._shut_down = True
        self.repair_notes.detach()
        self.search_bar.debounce.stop()
        self._others_timer.stop()
        if self._warm_up is not None:
            self._warm_up.wait()  # a model load cannot be interrupted; it takes a second
        for tool in self.tool_windows.values():
            if shiboken6.isValid(tool):
                tool.shutdown()  # stops its background work
        self.jobs.shutdown()
        self.watch.stop()


def _local_paths(mime) -> list[Path]:
    if not mime.hasUrls():
        return []
    return [qt_files.local_path(url) for url in mime.urls() if url.isLocalFile()]
