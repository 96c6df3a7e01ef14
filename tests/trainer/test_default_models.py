"""Bundled default models: installed once, offline, resumable, multilingual default active."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import trainer.default_models as defaults
from engine.config import DataPaths, data_paths, save_settings
from engine.models import active_model_name, get_manifest, load_encoder
from trainer.default_models import (
    DEFAULT_MODEL, ENGLISH_MODEL, ensure_default_models, install_default_models,
)


def _fake_install(calls):
    """Stands in for the slow conversion: writes a minimal registered folder."""
    from engine.models import ModelManifest, write_manifest

    def install(model, paths, progress, tatoeba_dir):
        calls.append(model.name)
        folder = paths.models / model.name
        folder.mkdir(parents=True)
        (folder / "model.onnx").write_bytes(b"x")
        # current format (the table outside the graph), so the install check leaves it be
        write_manifest(folder, ModelManifest(model.name, "transformer", 4, "mean", 8,
                                             variants={"fp32": {"file": "model.onnx"}},
                                             embeddings={"file": "embeddings.npy"}))
        progress(1.0, "done")
    return install


def test_install_is_done_once_resumes_and_activates_the_multilingual_model(monkeypatch, tmp_path):
    calls, messages = [], []
    monkeypatch.setattr(defaults, "_install", _fake_install(calls))
    paths = DataPaths(tmp_path / "home")
    paths.models.mkdir(parents=True)
    (paths.models / ".export-all-minilm-l6-v2-abc").mkdir()  # an interrupted earlier run
    installed = install_default_models(paths, lambda f, m: messages.append((f, m)))
    assert installed == calls == [DEFAULT_MODEL, ENGLISH_MODEL]
    assert active_model_name(paths) == DEFAULT_MODEL
    assert not (paths.models / ".export-all-minilm-l6-v2-abc").exists()
    fractions = [f for f, _ in messages]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    # second run: nothing to do; after losing one model, only that one is redone
    assert install_default_models(paths) == []
    shutil.rmtree(paths.models / ENGLISH_MODEL)
    assert install_default_models(paths) == [ENGLISH_MODEL]
    assert calls == [DEFAULT_MODEL, ENGLISH_MODEL, ENGLISH_MODEL]


def test_ensure_is_cheap_when_installed_and_keeps_the_users_choice(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(defaults, "_install", _fake_install(calls))
    paths = DataPaths(tmp_path / "home")
    assert ensure_default_models(paths) == DEFAULT_MODEL
    save_settings(paths, active_model=ENGLISH_MODEL)
    monkeypatch.setattr(defaults, "install_default_models", lambda *a, **k: pytest.fail("reinstall"))
    assert ensure_default_models(paths) == ENGLISH_MODEL
    assert calls == [DEFAULT_MODEL, ENGLISH_MODEL]


@pytest.mark.slow
def test_installed_default_models_say_what_they_are(default_models):
    paths = data_paths()
    e5 = get_manifest(DEFAULT_MODEL, paths)
    assert "dequantised 4-bit" in e5.notes and e5.licence.startswith("MIT")
    assert e5.prefixes == {"query": "query: ", "passage": "passage: "}
    assert e5.dim == 384 and e5.export_parity["min_cosine"] >= 0.9999
    assert len(e5.languages) > 90
    minilm = get_manifest(ENGLISH_MODEL, paths)
    assert minilm.licence == "Apache-2.0" and minilm.languages == ("en",)
    for manifest in (e5, minilm):
        int8 = manifest.variants["int8"]
        assert int8.get("file") or int8.get("reason")
    assert ensure_default_models(paths) == DEFAULT_MODEL


@pytest.mark.slow
def test_default_model_matches_translations_across_languages(default_models):
    encoder = load_encoder(DEFAULT_MODEL, variant="fp32")
    english = ["Where is the train station?", "The cat is sleeping on the sofa.",
               "I would like a cup of coffee."]
    others = ["¿Dónde está la estación de tren?", "Die Katze schläft auf dem Sofa.",
              "我想要一杯咖啡。"]
    sims = encoder.encode(others, kind="query") @ encoder.encode(english, kind="query").T
    assert np.array_equal(sims.argmax(axis=1), np.arange(3))
