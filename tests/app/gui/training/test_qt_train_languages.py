"""The wizard's "Improve search across my languages" mode end to end on a tiny BERT:
pairs mined from the library -> reviewed -> trained -> held-out before/after -> exported,
activated on request, and the previous model one click away."""

from __future__ import annotations

import csv
import json

import pytest
from gui_helpers import next_page, start_tiny_run_on_cpu
from PySide6.QtCore import Qt

from app.gui.training.qt_wizard import QtTrainWizard
from app.gui.common.qt_worker import running_workers
from engine.config import data_paths, save_settings
from engine.library import Library
from engine.models import get_manifest
from mining_fakes import TranslationEncoder
from tiny_models import register_tiny_model
from trainer.corpus import ALL_INDEXED
from train_helpers import tiny_training_inputs

TIMEOUT_MS = 240_000
CITIES = ["Berlin", "Hamburg", "Wien", "Zürich", "Paris", "Rom", "Prag", "Oslo", "Lyon"]


def translations() -> list[tuple[str, str]]:
    """German sentences and their English translations (language id tells them apart)."""
    pairs = []
    for i, city in enumerate(CITIES):
        for hour in (6, 9, 12, 18, 21):
            pairs.append((f"Der Zug nach {city} fährt heute um {hour} Uhr vom Hauptbahnhof ab.",
                          f"The train to {city} leaves the central station today at {hour} o'clock."))
    return pairs


@pytest.fixture
def library(babelfind_home, tmp_path):
    """A library whose encoder knows which sentences translate each other, over a German
    and an English document; the active model is a tiny BERT with torch weights."""
    paths = data_paths(babelfind_home)
    model, _ = tiny_training_inputs(tmp_path)
    register_tiny_model(paths, "tiny-base", training={"transformers_dir": str(model)})
    save_settings(paths, active_model="tiny-base")
    pairs = translations()
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "fahrplan.txt").write_text("\n\n".join(de for de, _ in pairs), encoding="utf-8")
    (docs / "timetable.txt").write_text("\n\n".join(en for _, en in pairs), encoding="utf-8")
    lib = Library.open(paths, encoder=TranslationEncoder(pairs))
    for _ in lib.index_paths([docs]):
        pass
    yield lib
    lib.close()


def test_pairs_from_the_library_train_the_active_model_and_it_can_be_undone(qtbot, library):
    wizard = QtTrainWizard(library, sts_dir=None)
    qtbot.addWidget(wizard)
    wizard.show()
    assert wizard.mode_page.across.isEnabled() and wizard.mode_page.across.isChecked()
    next_page(qtbot, wizard)

    page = wizard.pairs_page
    assert wizard.currentPage() is page and not page.isComplete()
    qtbot.mouseClick(page.find_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.mined is not None, timeout=TIMEOUT_MS)
    qtbot.waitUntil(page.isComplete, timeout=10_000)
    # the two languages are equally large, so either may be the pivot
    expected = {frozenset(pair) for pair in translations()}
    rows = [frozenset((page.table.item(r, 1).text(), page.table.item(r, 2).text()))
            for r in range(page.table.rowCount())]
    assert expected <= set(rows)
    assert "de-en" in page.status.text() or "en-de" in page.status.text()
    wrong = next((r for r, pair in enumerate(rows) if pair not in expected), 0)
    page.table.item(wrong, 0).setCheckState(Qt.CheckState.Unchecked)  # the reviewer says no
    ticked = page.accepted()
    assert len(ticked) == page.table.rowCount() - 1
    next_page(qtbot, wizard)

    assert wizard.currentPage() is wizard.hyper_page  # the active model is the base
    start_tiny_run_on_cpu(qtbot, wizard, lr=5e-3, batch_size=8, max_len=24, max_steps=4, eval_steps=2)

    with (wizard.work_dir / "reviewed-pairs.tsv").open(encoding="utf-8") as f:
        written = [(row[1], row[2]) for row in csv.reader(f, delimiter="\t")]
    assert written == [(src, tgt) for _, src, tgt in ticked]
    config = wizard.config()
    assert config.base == "tiny-base" and config.pairs and not config.corpus
    # the library's own sentences train beside the pairs, held near the base model
    assert config.collection == ALL_INDEXED and config.distill > 0
    run = wizard.run_page
    qtbot.waitUntil(run.isComplete, timeout=TIMEOUT_MS)
    saved = json.loads((wizard.finished.run_dir / "config.json").read_text(encoding="utf-8"))
    assert saved["collection"] == ALL_INDEXED and saved["pairs"]
    # the base model, then every 2 steps and the last (24 pairs after the 20 held out: 3 steps)
    assert [x for x, _ in run.dev_plot.points()] == [0, 2, 3] and wizard.finished.steps == 3
    assert run.dev_plot.title == "Held-out translations found first (%)"
    assert str(wizard.finished.run_dir) in run.run_folder.label.text()

    next_page(qtbot, wizard)
    results = wizard.results_page
    qtbot.waitUntil(results.isComplete, timeout=10_000)
    labels = [results.table.item(r, 0).text() for r in range(results.table.rowCount())]
    assert labels[0] == "Translations found first (held-out pairs)"
    assert "Same-language sentence ranked above the translation" in labels
    held = wizard.finished.held_out
    assert results.table.item(0, 1).text() == f"{held['base']['retrieval']:.1f}%"
    assert results.table.item(0, 2).text() == f"{held['best']['retrieval']:.1f}%"
    assert "Held-out translations found first" in results.status.text()

    next_page(qtbot, wizard)
    export = wizard.export_page
    export.name.setText("tiny-languages")
    assert not export.activate.isChecked()  # activating is the user's decision
    export.activate.setChecked(True)
    with qtbot.waitSignal(wizard.model_activation_requested, timeout=TIMEOUT_MS) as asked:
        qtbot.mouseClick(export.export_button, Qt.MouseButton.LeftButton)
    assert asked.args == ["tiny-languages"]
    qtbot.waitUntil(export.isComplete, timeout=10_000)
    manifest = get_manifest("tiny-languages", library.paths)
    assert manifest.training["held_out_pairs"] == held
    assert "on translation pairs" in manifest.source

    assert export.switch_back.isVisible() and "tiny-base" in export.switch_back.text()
    with qtbot.waitSignal(wizard.model_activation_requested, timeout=5_000) as back:
        qtbot.mouseClick(export.switch_back, Qt.MouseButton.LeftButton)
    assert back.args == ["tiny-base"] and not export.switch_back.isEnabled()
    assert "Switching back to tiny-base" in export.status.text()
    wizard.close()
    assert not running_workers()


def test_finding_translations_can_be_cancelled(qtbot, library):
    wizard = QtTrainWizard(library, sts_dir=None)
    qtbot.addWidget(wizard)
    wizard.show()
    next_page(qtbot, wizard)
    page = wizard.pairs_page
    qtbot.mouseClick(page.find_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(page.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.worker is None, timeout=TIMEOUT_MS)
    assert page.find_button.isEnabled() and not running_workers()
    assert page.mined is None or page.table.rowCount() > 0  # cancelled, or done before the click
    wizard.close()


def test_one_language_offers_only_the_classic_mode(qtbot, babelfind_home, tmp_path):
    from helpers import WordEncoder

    (tmp_path / "en.txt").write_text("The train leaves at nine. It is late again today.",
                                     encoding="utf-8")
    lib = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    try:
        for _ in lib.index_paths([tmp_path / "en.txt"]):
            pass
        wizard = QtTrainWizard(lib, sts_dir=None)
        qtbot.addWidget(wizard)
        assert not wizard.mode_page.across.isEnabled() and wizard.mode_page.within.isChecked()
        assert wizard.mode_page.nextId() == wizard.pageIds()[2]  # straight to the corpus
    finally:
        lib.close()


def test_a_cancelled_pair_run_resumes_from_its_last_checkpoint(qtbot, library):
    wizard = QtTrainWizard(library, sts_dir=None)
    qtbot.addWidget(wizard)
    wizard.show()
    next_page(qtbot, wizard)
    page = wizard.pairs_page
    qtbot.mouseClick(page.find_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(page.isComplete, timeout=TIMEOUT_MS)
    next_page(qtbot, wizard)
    # 3 steps an epoch, so 100 epochs: far more steps than the test waits for; and a
    # checkpoint every 10 steps
    start_tiny_run_on_cpu(qtbot, wizard, lr=5e-3, batch_size=8, max_len=24, epochs=100,
                          max_steps=60, eval_steps=10)

    run = wizard.run_page
    qtbot.waitUntil(lambda: run.run_config is not None, timeout=10_000)
    out = run.run_config.out_dir
    qtbot.waitUntil(lambda: (out / "latest.json").is_file(), timeout=TIMEOUT_MS)
    assert not run.resume_button.isVisible()
    qtbot.mouseClick(run.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not run.running(), timeout=TIMEOUT_MS)
    if wizard.finished is not None:
        pytest.skip("the run finished before the cancel reached it")
    assert run.resume_button.isVisible() and not run.isComplete()
    assert run.status.text().startswith("Stopped. Kept: the checkpoint of step ") and "Resume continues" in run.status.text()
    cancelled_at = max(x for x, _ in run.loss_plot.points())

    qtbot.mouseClick(run.resume_button, Qt.MouseButton.LeftButton)
    assert not run.resume_button.isVisible()
    qtbot.waitUntil(run.isComplete, timeout=TIMEOUT_MS)
    finished = wizard.finished
    assert finished.steps == 60 and finished.run_dir == out  # the same folder, continued
    steps = [x for x, _ in run.loss_plot.points()]
    assert steps == sorted(set(steps)) and steps[-1] == 60 and cancelled_at < 60  # no step twice
    assert run.status.text().startswith("Done: 60 steps")
    assert [x for x, _ in run.dev_plot.points()][0] == 0  # the base score from before the cancel
    assert finished.held_out["base"]["step"] == 0
    wizard.close()
    assert not running_workers()
