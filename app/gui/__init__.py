"""Babelfind's desktop window (PySide6): `babelfind-gui`, or `python -m app`.

    >>> from app.gui import main
    >>> main([])        # opens the window; returns the exit code when it closes

Qt modules are `qt_*.py` and their classes `Qt*`; they only call engine/ and show what
it returns. Long engine jobs run in `common.qt_worker.QtWorker`. The folders:

    search/     the search window: search bar, results, preview, indexing, menus, settings
    training/   Tools > Train a model: the training wizard's pages
    mining/     Tools > Find parallel sentences: the mining panel
    common/     what they share: workers and jobs, theme, plots, file and language helpers
"""

from __future__ import annotations

import argparse
import logging
import sys

ORGANISATION = "Babelfind"
APPLICATION = "Babelfind"

log = logging.getLogger(__name__)


def main(argv: list[str] | None = None) -> int:
    """Opens the window; logs, warnings and Qt's messages go to BABELFIND_HOME/logs."""
    args = _parse(sys.argv[1:] if argv is None else argv)
    if not platform_ready():
        return 1
    from app.gui.common.qt_logging import qt_messages_to_log
    from app.logging_setup import logging_to_file, verbose_requested
    from engine.config import data_paths

    try:
        home = data_paths().home
    except OSError as e:  # an unwritable BABELFIND_HOME: say so where the user looks
        print(f"babelfind-gui: error: {e}", file=sys.stderr)
        return 1
    with logging_to_file(home, verbose_requested(args.verbose)), qt_messages_to_log():
        return _open_window(args)


def _open_window(args: argparse.Namespace) -> int:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication, QMessageBox

    from app.gui.common.qt_theme import app_icon, apply_theme, follow_system
    from app.gui.qt_tools import install_tools
    from app.gui.search.qt_main_window import QtMainWindow
    from app.gui.search.qt_menus import THEME_KEY
    from engine.config import data_paths
    from engine.errors import BabelfindError

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setOrganizationName(ORGANISATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationDisplayName("Babelfind")
    app.setDesktopFileName("babelfind")
    app.setWindowIcon(app_icon())
    settings = QSettings()
    theme = lambda: str(settings.value(THEME_KEY, "system"))  # noqa: E731 - read at each change
    apply_theme(app, theme())
    follow_system(app, theme)
    try:
        paths = data_paths()
        if not ensure_models(paths):
            return 1
        library = open_library(paths, args.db)
    except BabelfindError as e:
        QMessageBox.critical(None, "Babelfind cannot start", str(e))
        return 1
    window = QtMainWindow(library, settings)
    install_tools(window)
    window.show()
    if args.paths:
        window.index_paths(args.paths)
    try:
        return app.exec()
    finally:
        window.shutdown()
        library.close()


def platform_ready() -> bool:
    """False, after one line on stderr naming the packages to install, when Qt's
    platform plugin would abort the process for want of system libraries."""
    from app.qt_platform import plugin_check

    check = plugin_check()
    if not check.missing:
        return True
    print(f"babelfind-gui: error: Qt's '{check.platform}' platform needs "
          f"{', '.join(check.missing)}; on Debian/Ubuntu: sudo apt-get install "
          f"{' '.join(check.packages)} (babelfind doctor checks everything)", file=sys.stderr)
    return False


def ensure_models(paths) -> bool:
    """At first start, installs the default models in the background with a progress dialog.

    Cheap (no dialog shown) when the active model is installed. Returns False when the
    user cancelled or installation failed; the app then quits.
    """
    from PySide6.QtWidgets import QMessageBox, QProgressDialog

    from app.first_run import ensure_models as ensure_installed
    from app.gui.common.qt_worker import QtWorker

    dialog = QProgressDialog("Preparing the models (first start only)...", "Cancel", 0, 1000)
    dialog.setWindowTitle("Babelfind")
    dialog.setMinimumDuration(500)  # a quick check on later starts shows nothing

    def install(report) -> str:
        # the installer reports (fraction, message); the worker carries one object per event
        return ensure_installed(paths, lambda fraction, message: report((fraction, message)))

    worker = QtWorker.for_callback(install)
    worker.yielded.connect(lambda event: _show_install_progress(dialog, *event))
    dialog.canceled.connect(worker.cancel)
    outcome = _run_to_end(worker)
    dialog.close()
    if "error" in outcome:
        QMessageBox.critical(None, "Babelfind", f"The default models could not be installed:\n{outcome['error']}")
    return bool(outcome.get("value"))


def open_library(paths, db_url: str | None = None):
    """Library.open in the background, behind a busy dialog when it takes over a second: a
    keyword index written by an earlier version is rebuilt in this one's format (5 s for
    21,500 passages, docs/benchmarks.md "Keyword stems"), a damaged one from the database. The dialog
    shows what is being done (engine.repairs); what Library.open raises is raised here.
    No Cancel: an index rebuilt halfway would only be rebuilt again at the next start.
    """
    import logging

    from PySide6.QtWidgets import QProgressDialog

    from app.gui.common.qt_repairs import QtRepairNotes
    from app.gui.common.qt_worker import QtWorker
    from engine.library import Library

    dialog = QProgressDialog("Opening the library...", None, 0, 0)  # 0, 0: busy, no fraction
    dialog.setWindowTitle("Babelfind")
    dialog.setValue(0)  # at its minimum, so that the next line restarts its show timer
    dialog.setMinimumDuration(1000)
    notes = QtRepairNotes(dialog, level=logging.INFO)
    notes.noted.connect(lambda text: dialog.setLabelText(f"Opening the library...\n{_wrapped(text[:1].upper() + text[1:])}"))
    # the model loads in the background once the window shows (QtMainWindow.showEvent)
    worker = QtWorker.for_callback(lambda _report: Library.open(paths, db_url=db_url, defer_encoder=True))
    outcome = _run_to_end(worker)
    notes.detach()
    dialog.close()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _run_to_end(worker) -> dict[str, object]:
    """Runs a QtWorker to its end in a local event loop (before the window exists), its
    dialog live meanwhile: {"value": what it returned} or {"error": what it raised}, or
    {} when it was cancelled."""
    from PySide6.QtCore import QEventLoop

    outcome: dict[str, object] = {}
    worker.returned.connect(lambda value: outcome.setdefault("value", value))
    worker.errored.connect(lambda error: outcome.setdefault("error", error))
    loop = QEventLoop()
    worker.finished.connect(loop.quit)
    worker.start()
    loop.exec()
    worker.wait()
    return outcome


def _wrapped(text: str, width: int = 70) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width, break_on_hyphens=False))  # a path breaks at a space


def _show_install_progress(dialog, fraction: float, message: str) -> None:
    dialog.setValue(int(1000 * fraction))
    dialog.setLabelText(f"Preparing the models (first start only)\n{message}")


def _parse(argv: list[str]) -> argparse.Namespace:
    from pathlib import Path

    parser = argparse.ArgumentParser(prog="babelfind-gui", description="Babelfind's desktop window.")
    parser.add_argument("paths", nargs="*", type=Path, help="files or folders to index at start")
    parser.add_argument("--db", help="SQLAlchemy database URL (default: from settings)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="show the log on stderr too (it is always in BABELFIND_HOME/logs)")
    return parser.parse_args(argv)
