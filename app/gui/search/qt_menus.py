"""The window's menus. Only features that exist get an entry.

Later features (the training wizard, the parallel-sentence finder) register themselves
with `add_tool(window, action)`, which creates the Tools menu when the first one arrives;
until then there is no Tools menu at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QApplication, QFileDialog, QMainWindow, QMenu

from app.gui.common import qt_files
from app.gui.common.qt_theme import THEME_CHOICES, apply_theme, set_icon

THEME_KEY = "appearance/theme"


@dataclass
class Menus:
    file: QMenu
    view: QMenu
    help: QMenu
    add_folder: QAction
    add_files: QAction
    settings: QAction
    about: QAction
    themes: dict[str, QAction]
    tools: QMenu | None = None


def build_menus(window: QMainWindow) -> Menus:
    bar = window.menuBar()
    file_menu = bar.addMenu("&File")
    add_folder = file_menu.addAction("Add &folder...", window.choose_folder)
    set_icon(add_folder, "folder-add")
    add_folder.setShortcut(QKeySequence.StandardKey.Open)
    add_folder.setToolTip("Index a folder so its documents become searchable")
    add_files = file_menu.addAction("Add f&iles...", lambda: _choose_files(window))
    set_icon(add_files, "document")
    file_menu.addSeparator()
    settings = file_menu.addAction("&Settings...", lambda: open_settings(window))
    set_icon(settings, "settings")
    settings.setShortcut(QKeySequence.StandardKey.Preferences)
    settings.setMenuRole(QAction.MenuRole.PreferencesRole)
    file_menu.addSeparator()
    quit_action = file_menu.addAction("&Quit", window.close)
    quit_action.setShortcut(QKeySequence.StandardKey.Quit)

    view_menu = bar.addMenu("&View")
    theme_menu = view_menu.addMenu("&Theme")
    group = QActionGroup(window)
    themes = {}
    current = theme_choice(window)
    for choice in THEME_CHOICES:
        action = theme_menu.addAction({"system": "Follow the &system", "light": "&Light", "dark": "&Dark"}[choice])
        action.setCheckable(True)
        action.setChecked(choice == current)
        action.triggered.connect(lambda _checked, c=choice: set_theme(window, c))
        group.addAction(action)
        themes[choice] = action
    skipped = view_menu.addAction("S&kipped files", lambda: show_skipped(window))
    skipped.setToolTip("Files the indexer could not read, with the reason")

    help_menu = bar.addMenu("&Help")
    about = help_menu.addAction("&About Babelfind", lambda: show_about(window))
    set_icon(about, "babelfind")
    about.setMenuRole(QAction.MenuRole.AboutRole)

    return Menus(file_menu, view_menu, help_menu, add_folder, add_files, settings, about, themes)


def add_tool(window: QMainWindow, action: QAction) -> QMenu:
    """Adds a feature's entry to the Tools menu (made on first use, before Help)."""
    menus: Menus = window.menus
    if menus.tools is None:
        menus.tools = QMenu("&Tools", window)
        window.menuBar().insertMenu(menus.help.menuAction(), menus.tools)
    menus.tools.addAction(action)
    return menus.tools


def theme_choice(window: QMainWindow) -> str:
    choice = str(window.settings.value(THEME_KEY, "system"))
    return choice if choice in THEME_CHOICES else "system"


def set_theme(window: QMainWindow, choice: str) -> None:
    window.settings.setValue(THEME_KEY, choice)
    apply_theme(QApplication.instance(), choice)
    window.menus.themes[choice].setChecked(True)


def show_skipped(window: QMainWindow) -> None:
    """Shows the files indexing could not read: this session's list, else the engine's."""
    if not window.skipped.model.rowCount():
        window.skipped.show_skipped(window.library.skipped())
    if not window.skipped.model.rowCount():
        window.statusBar().showMessage("No files were skipped", 5000)


def open_settings(window: QMainWindow) -> None:
    from app.gui.search.qt_settings import QtSettingsDialog

    dialog = QtSettingsDialog(window.library, window)
    dialog.model_activation_requested.connect(window.switch_model)
    dialog.exec()


def show_about(window: QMainWindow) -> None:
    from app.gui.search.qt_about import QtAboutDialog

    QtAboutDialog(window.library, window).exec()


def _choose_files(window: QMainWindow) -> None:
    files, _ = QFileDialog.getOpenFileNames(window, "Add files to search", str(qt_files.documents_folder()))
    if files:
        window.index_paths([Path(f) for f in files])
