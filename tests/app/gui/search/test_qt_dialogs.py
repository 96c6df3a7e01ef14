"""Settings and About dialogs over the real model registry; light and dark themes."""

from __future__ import annotations

import json

import pytest
from helpers import WordEncoder
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from app.gui.common.qt_theme import DARK, LIGHT, apply_theme, colours, icon
from app.gui.search import qt_settings
from app.gui.search.qt_about import QtAboutDialog
from app.gui.search.qt_main_window import QtMainWindow
from app.gui.search.qt_settings import QtSettingsDialog
from engine.config import data_paths, load_settings
from engine.library import Library
from engine.model_manifest import ModelManifest, write_manifest
from engine.models import model_dir


def _install_manifest(paths, name: str, dim: int, languages: tuple[str, ...], source: str, licence: str) -> None:
    folder = model_dir(name, paths)
    folder.mkdir(parents=True)
    manifest = ModelManifest(
        name=name, family="transformer", dim=dim, pooling="mean", max_length=128,
        languages=languages, source=source, licence=licence,
    )
    write_manifest(folder, manifest)


@pytest.fixture
def library(babelfind_home, monkeypatch):
    import app.first_run

    monkeypatch.setattr(app.first_run, "offered_models", lambda paths: [])  # the registry's models only
    paths = data_paths(babelfind_home)
    _install_manifest(paths, "test-words", 64, ("en", "de"), "hashed words, made in tests", "MIT")
    _install_manifest(paths, "other-model", 384, ("en", "fr", "es"), "https://example.org/other", "Apache-2.0")
    lib = Library.open(paths, encoder=WordEncoder())
    yield lib
    lib.close()


def test_settings_lists_registry_models_and_asks_to_switch(qtbot, library, monkeypatch):
    monkeypatch.setattr(qt_settings, "detected_providers", lambda: ["CPUExecutionProvider"])
    monkeypatch.setattr(qt_settings, "confirm_model_switch", lambda parent, status, manifest: True)
    dialog = QtSettingsDialog(library)
    qtbot.addWidget(dialog)
    rows = {dialog.models.item(r).name: r for r in range(dialog.models.rowCount())}
    assert set(rows) == {"test-words", "other-model"}
    active_row = rows["test-words"]
    assert dialog.models.index(active_row, 0).data() == "test-words (active)"
    other = rows["other-model"]
    assert [dialog.models.index(other, c).data() for c in range(4)] == [
        "other-model", "en, fr, es", "384", "https://example.org/other"
    ]
    dialog.models_view.selectRow(active_row)
    assert not dialog.use_button.isEnabled()  # the active model is already in use
    dialog.models_view.selectRow(other)
    with qtbot.waitSignal(dialog.model_activation_requested) as asked:
        dialog.use_button.click()
    assert asked.args == ["other-model"]


def test_settings_device_shows_what_was_detected(qtbot, library, monkeypatch):
    monkeypatch.setattr(qt_settings, "detected_providers", lambda: ["CPUExecutionProvider"])
    dialog = QtSettingsDialog(library)
    qtbot.addWidget(dialog)
    gpu = dialog.device.findData("cuda")
    assert not dialog.device.model().item(gpu).isEnabled()
    monkeypatch.setattr(qt_settings, "detected_providers", lambda: ["CUDAExecutionProvider", "CPUExecutionProvider"])
    with_gpu = QtSettingsDialog(library)
    qtbot.addWidget(with_gpu)
    assert with_gpu.device.model().item(gpu).isEnabled()


def test_settings_save_device_and_database_url(qtbot, library):
    dialog = QtSettingsDialog(library)
    qtbot.addWidget(dialog)
    dialog.device.setCurrentIndex(dialog.device.findData("cpu"))
    dialog.db_url.setText("not a url at all")
    dialog.save()
    assert "cannot be used" in dialog.error.text()
    assert "device" not in load_settings(library.paths)  # nothing saved from a bad form
    dialog.db_url.setText("postgresql+psycopg://me@db.example/babelfind")
    dialog.save()
    saved = json.loads(library.paths.settings_file.read_text())
    assert saved["device"] == "cpu"
    assert saved["db_url"] == "postgresql+psycopg://me@db.example/babelfind"
    assert library.paths.db_url == saved["db_url"]


def test_about_names_the_active_model_its_source_and_licence(qtbot, library):
    dialog = QtAboutDialog(library)
    qtbot.addWidget(dialog)
    text = dialog.text.text()
    assert "test-words" in text and "hashed words, made in tests" in text and "MIT" in text


def test_themes_switch_palette_and_are_remembered(qtbot, library):
    window = QtMainWindow(library, QSettings())
    qtbot.addWidget(window)
    window.show()
    app = QApplication.instance()
    try:
        light_key = window.preview.copy_button.icon().cacheKey()
        window.menus.themes["dark"].trigger()
        # icons are redrawn in the dark theme's text colour, menus included
        assert window.preview.copy_button.icon().cacheKey() != light_key
        assert window.menus.settings.icon().cacheKey() == icon("settings").cacheKey()
        assert colours() is DARK
        assert app.palette().color(QPalette.ColorRole.Window).name() == DARK.window
        assert DARK.accent in app.styleSheet()
        assert not icon("search").isNull()
        assert QSettings().value("appearance/theme") == "dark"
        window.menus.themes["light"].trigger()
        assert app.palette().color(QPalette.ColorRole.Base).name() == LIGHT.base
    finally:
        window.shutdown()
        apply_theme(app, "light")


def _index_two_languages(library, tmp_path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "bees.txt").write_text("Honey bees collect nectar from the flowers in the garden every summer.")
    (corpus / "bienen.txt").write_text("Die Bienen sammeln im Sommer den Nektar von den Blumen im Garten.")
    (corpus / "abeilles.txt").write_text("Les abeilles récoltent le nectar des fleurs du jardin chaque été.")
    for _ in library.index_paths([corpus]):
        pass


def _answer_confirmation(qtbot, button_text: str, seen: list[str]) -> None:
    """Reads the model-switch question once it is up, then clicks `button_text`."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMessageBox

    def answer():
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(20, answer)
            return
        seen.append(box.text() + "\n" + box.informativeText())
        next(b for b in box.buttons() if b.text().replace("&", "") == button_text).click()

    QTimer.singleShot(0, answer)


def test_switching_to_an_english_only_model_asks_and_warns(qtbot, library, tmp_path):
    _install_manifest(library.paths, "english-only", 384, ("en",), "https://example.org/en", "MIT")
    _index_two_languages(library, tmp_path)
    dialog = QtSettingsDialog(library)
    qtbot.addWidget(dialog)
    rows = {dialog.models.item(r).name: r for r in range(dialog.models.rowCount())}
    dialog.models_view.selectRow(rows["english-only"])
    seen: list[str] = []
    _answer_confirmation(qtbot, "Cancel", seen)
    with qtbot.assertNotEmitted(dialog.model_activation_requested):
        dialog.use_button.click()
    status = library.status()
    text = seen[0]
    assert text.startswith("Switch to english-only?")
    assert f"{status.documents:,} documents, {status.passages:,} passages" in text
    assert "may take" in text and "searches keep using test-words" in text
    assert "english-only was trained on English only" in text
    assert "German (de)" in text and "French (fr)" in text
    assert dialog.use_button.isEnabled()  # nothing started
    _answer_confirmation(qtbot, "Re-encode", seen)
    with qtbot.waitSignal(dialog.model_activation_requested) as asked:
        dialog.use_button.click()
    assert asked.args == ["english-only"]


def test_a_multilingual_target_gets_no_language_warning(library, tmp_path):
    from app.gui.search.qt_model_switch import switch_plan, uncovered_languages
    from engine.models import get_manifest

    _install_manifest(library.paths, "many", 384, ("en", "de", "fr"), "https://example.org/many", "MIT")
    _index_two_languages(library, tmp_path)
    plan = switch_plan(library.status(), get_manifest("many", library.paths))
    assert plan.warning is None and "3 documents" in plan.summary
    assert uncovered_languages({"en": 2, "de": 1}, ()) == {}  # languages not stated: no claim made


def test_settings_model_columns_are_not_cut_off(qtbot, library):
    dialog = QtSettingsDialog(library)
    qtbot.addWidget(dialog)
    dialog.show()
    view, header = dialog.models_view, dialog.models_view.horizontalHeader()
    for column in (0, 2, 3):  # name, dimension, source are read whole
        assert header.sectionSize(column) >= view.sizeHintForColumn(column), column
    assert sum(header.sectionSize(c) for c in range(4)) <= view.viewport().width() + 1


def test_a_bundled_model_not_built_yet_is_offered_and_said_to_be_built_first(qtbot, library, monkeypatch, tmp_path):
    import app.first_run
    from app.first_run import OfferedModel
    from app.gui.search.qt_model_switch import switch_plan

    offered = OfferedModel("adapted", ("en", "de"), "the base with an adapter", "MIT", "knows translations")
    monkeypatch.setattr(app.first_run, "offered_models", lambda paths: [offered])
    _index_two_languages(library, tmp_path)
    dialog = QtSettingsDialog(library)
    qtbot.addWidget(dialog)
    rows = {dialog.models.item(r).name: r for r in range(dialog.models.rowCount())}
    assert list(rows)[-1] == "adapted"
    assert [dialog.models.index(rows["adapted"], c).data() for c in range(4)] == [
        "adapted (not installed)", "en, de", "-", "the base with an adapter"]
    assert "choosing it builds it" in dialog.models.index(rows["adapted"], 0).data(Qt.ItemDataRole.ToolTipRole)
    assert "is built first" in switch_plan(library.status(), offered).summary
    dialog.models_view.selectRow(rows["adapted"])
    seen: list[str] = []
    _answer_confirmation(qtbot, "Re-encode", seen)
    with qtbot.waitSignal(dialog.model_activation_requested) as asked:
        dialog.use_button.click()
    assert asked.args == ["adapted"] and "adapted is built first" in seen[0]


def test_the_window_builds_a_missing_bundled_model_then_re_encodes(qtbot, library, monkeypatch):
    import app.first_run
    from app.first_run import InstallProgress

    built, switched, shown = [], [], []
    monkeypatch.setattr(app.first_run, "models_missing", lambda paths, name: name not in built)

    def install(paths, name, report):
        report(InstallProgress(0.5, f"{name}: writing the ONNX graph"))
        built.append(name)
        return name

    monkeypatch.setattr(app.first_run, "install_model", install)
    monkeypatch.setattr(library, "switch_model", lambda name: iter(switched.append(name) or ()))
    window = QtMainWindow(library)
    qtbot.addWidget(window)
    window.progress.show_event = lambda event: shown.append(event)
    window.switch_model("adapted")
    qtbot.waitUntil(lambda: switched == ["adapted"], timeout=5000)
    assert built == ["adapted"]
    assert [e.message for e in shown if isinstance(e, InstallProgress)] == ["adapted: writing the ONNX graph"]
    window.switch_model("adapted")  # built now: straight to the re-encoding
    qtbot.waitUntil(lambda: switched == ["adapted", "adapted"], timeout=5000)
    assert built == ["adapted"]
