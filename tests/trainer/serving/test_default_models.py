"""Bundled default models: installed once, offline, resumable, multilingual default active."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import trainer.serving.default_models as defaults
from engine.config import DataPaths, data_paths, save_settings
from engine.models import active_model_name, get_manifest, load_encoder
from trainer.serving.default_models import (
    DEFAULT_MODEL, ENGLISH_MODEL, ensure_default_models, install_default_models,
)


def _fake_install(calls):
    """Stands in for the slow conversion: writes a minimal registered folder."""
    from engine.model_manifest import ModelManifest, write_manifest

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


def _evidence_home(tmp_path, monkeypatch, gate_changes: dict, scheme: str = "dynamic-pc"
                   ) -> tuple[DataPaths, "Path"]:
    """A registry with the tiny model, a weights file and an evidence file naming it."""
    import json

    from engine.model_manifest import sha256_file
    from tiny_models import register_tiny_model
    from trainer.serving.int8_gate import Quality, evidence_record, judge_int8

    paths = DataPaths(tmp_path / "home")
    register_tiny_model(paths, "tiny")
    weights = tmp_path / "weights.bin"
    weights.write_bytes(b"the weight source")
    langs = {f"l{i:03d}": 10.0 for i in range(112)}
    fp32, int8 = Quality(langs, 80.0), Quality(langs | gate_changes, 80.0)
    record = evidence_record(fp32, int8, judge_int8(fp32, int8))
    entry = {"scheme": scheme, "weights_sha256": sha256_file(weights), **record}
    resources = tmp_path / "resources"
    (resources / "models").mkdir(parents=True)
    (resources / "models" / "int8_evidence.json").write_text(json.dumps({"models": {"tiny": [entry]}}))
    monkeypatch.setenv("BABELFIND_RESOURCES", str(resources))
    return paths, weights


def test_int8_refused_by_shipped_evidence_is_not_built_and_says_why(tmp_path, monkeypatch):
    from engine.errors import ModelError

    paths, weights = _evidence_home(tmp_path, monkeypatch, {"l007": 14.45})
    defaults.add_int8_by_evidence("tiny", weights, paths)
    info = get_manifest("tiny", paths).variants["int8"]
    assert info["file"] is None and info["gate"] == "refused"
    assert info["reason"] == "dynamic-pc: l007 +4.45 points Tatoeba error (gate: <= 2 per language)"
    assert info["tatoeba"]["int8"]["l007"] == 14.45  # the evidence travels with the model
    assert not (paths.models / "tiny" / "model.int8.onnx").exists()
    assert load_encoder("tiny", paths=paths, device="cpu").variant == "fp32"
    with pytest.raises(ModelError, match="no int8 variant: dynamic-pc: l007"):
        load_encoder("tiny", paths=paths, variant="int8")


@pytest.mark.parametrize("scheme", ["dynamic-pc", "rowwise", "rowwise-w7"])
def test_int8_passed_by_shipped_evidence_is_built_and_preferred(tmp_path, monkeypatch, scheme):
    import trainer.serving.quantise

    if not trainer.serving.quantise.SCHEMES[scheme].exact_here():
        pytest.skip("this CPU's int8 kernels saturate 8-bit weights (next test)")

    paths, weights = _evidence_home(tmp_path, monkeypatch, {"l007": 11.0}, scheme)
    # the tiny random model's int8 is far from fp32; its cosine check is not under test here
    monkeypatch.setattr(trainer.serving.quantise, "INT8_MIN_MEAN_COSINE", 0.5)
    monkeypatch.setattr(trainer.serving.quantise, "INT8_MIN_WORST_COSINE", 0.5)
    defaults.add_int8_by_evidence("tiny", weights, paths)
    manifest = get_manifest("tiny", paths)
    info = manifest.variants["int8"]
    assert info["gate"] == "passed" and info["scheme"] == scheme
    assert info["weight_levels"] == trainer.serving.quantise.SCHEMES[scheme].weight_levels
    assert info["file"] == "model.int8.onnx" and "model.int8.onnx" in manifest.files
    assert load_encoder("tiny", paths=paths, device="cpu").variant == "int8"
    assert not any(paths.models.glob(".export-int8-*"))


def test_8_bit_evidence_is_not_used_where_the_cpu_saturates_it(tmp_path, monkeypatch):
    """Evidence measured with 8-bit weights on a VNNI CPU says nothing of a CPU that adds
    pairs of products in 16 bits: nothing is built there, and the manifest says why."""
    from engine.encoders import int8_kernels

    monkeypatch.setattr(int8_kernels, "pair_sums_saturate", lambda: True)
    paths, weights = _evidence_home(tmp_path, monkeypatch, {"l007": 11.0}, "rowwise")
    defaults.add_int8_by_evidence("tiny", weights, paths)
    info = get_manifest("tiny", paths).variants["int8"]
    assert info["file"] is None and info["gate"] == "not used on this CPU"
    assert info["reason"].startswith("rowwise: passed, but not built: this CPU's int8 kernels saturate")
    assert not (paths.models / "tiny" / "model.int8.onnx").exists()
    assert load_encoder("tiny", paths=paths, device="cpu").variant == "fp32"


def test_int8_evidence_needs_the_exact_weights_and_a_faithful_rebuild(tmp_path, monkeypatch):
    import trainer.serving.quantise
    from engine.encoders import int8_kernels
    from trainer.serving.int8_evidence import apply_int8_decision, int8_decision

    paths, weights = _evidence_home(tmp_path, monkeypatch, {}, trainer.serving.quantise.usable_here()[0])
    monkeypatch.setattr(trainer.serving.quantise, "INT8_MIN_MEAN_COSINE", 1.01)  # rebuilt file differs
    defaults.add_int8_by_evidence("tiny", weights, paths)
    info = get_manifest("tiny", paths).variants["int8"]
    assert info["file"] is None and "differs from the measured file" in info["reason"]
    assert not (paths.models / "tiny" / "model.int8.onnx").exists()
    monkeypatch.setattr(int8_kernels, "pair_sums_saturate", lambda: False)  # a static scheme is 8-bit
    static = int8_decision("tiny", "x", {"models": {"tiny": [
        {"scheme": "static-qdq-pc", "weights_sha256": "x", "gate": "passed", "reason": "ok"}]}})
    manifest = apply_int8_decision(paths.models / "tiny", get_manifest("tiny", paths), static)
    assert manifest.variants["int8"]["file"] is None
    assert "needs its calibration sentences" in manifest.variants["int8"]["reason"]
    weights.write_bytes(b"other weights")
    defaults.add_int8_by_evidence("tiny", weights, paths)
    info = get_manifest("tiny", paths).variants["int8"]
    assert info["gate"] == "not run" and "no int8 gate evidence for these weights" in info["reason"]


def test_first_run_leaves_the_on_demand_model_and_builds_it_when_named(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(defaults, "_install", _fake_install(calls))
    paths = DataPaths(tmp_path / "home")
    assert defaults.ALIGNED_MODEL in {m.name for m in defaults.default_models()}
    assert install_default_models(paths) == [DEFAULT_MODEL, ENGLISH_MODEL]
    assert install_default_models(paths, name=defaults.ALIGNED_MODEL) == [defaults.ALIGNED_MODEL]
    assert active_model_name(paths) == DEFAULT_MODEL  # the library's model until the user switches


def _only_the_adapted_model(monkeypatch) -> None:
    """The installer knows only the adapted model (a first run's models count as none)."""
    every = defaults.default_models()
    monkeypatch.setattr(defaults, "default_models",
                        lambda: tuple(m for m in every if m.name == defaults.ALIGNED_MODEL))


def _shipped_adapter_copy(tmp_path, monkeypatch, change=None):
    """resources/ moved to a copy whose adapter file `change` may alter."""
    resources = tmp_path / "resources"
    shutil.copytree(defaults.adapter_path(defaults.E5_ADAPTER).parents[1], resources,
                    ignore=shutil.ignore_patterns("sample*", "icons", "style"))
    if change is not None:
        path = resources / "models" / defaults.E5_ADAPTER.file
        path.write_bytes(change(path.read_bytes()))
    monkeypatch.setenv("BABELFIND_RESOURCES", str(resources))


@pytest.mark.parametrize("change", [lambda data: data[:-1] + bytes([data[-1] ^ 1]), lambda data: data[:100]],
                         ids=["one bit", "truncated"])
def test_an_altered_adapter_is_refused_before_anything_is_built(tmp_path, monkeypatch, change):
    from engine.errors import ModelError

    _only_the_adapted_model(monkeypatch)
    _shipped_adapter_copy(tmp_path, monkeypatch, change)
    monkeypatch.setattr(defaults, "_e5_weights", lambda: pytest.fail("the weights were read"))
    paths = DataPaths(tmp_path / "home")
    with pytest.raises(ModelError, match="not the file this version of Babelfind ships"):
        install_default_models(paths, name=defaults.ALIGNED_MODEL)
    assert not (paths.models / defaults.ALIGNED_MODEL).exists()


def test_the_adapter_must_match_the_installed_base_weights(tmp_path, monkeypatch):
    from engine.errors import ModelError

    other = tmp_path / "other-weights.bin"
    other.write_bytes(b"another release of the base model")
    _only_the_adapted_model(monkeypatch)
    monkeypatch.setattr(defaults, "_weights_file", lambda name: other)
    monkeypatch.setattr(defaults, "_e5_weights", lambda: pytest.fail("the weights were read"))
    with pytest.raises(ModelError, match="made for other base weights"):
        install_default_models(DataPaths(tmp_path / "home"), name=defaults.ALIGNED_MODEL)


INSTALL_ALIGNED_WITHOUT_TORCH = """
import json, sys
from pathlib import Path
{blocker}
from engine.config import DataPaths
from engine.models import active_model_name, get_manifest
from trainer.serving.default_models import ALIGNED_MODEL, install_default_models

paths = DataPaths(Path(sys.argv[1]))
installed = install_default_models(paths, name=ALIGNED_MODEL)
leaked = sorted(m for m in sys.modules if m.partition(".")[0] in ("torch", "transformers"))
print(json.dumps({{"installed": installed, "adapter": get_manifest(ALIGNED_MODEL, paths).adapter,
                   "active": active_model_name(paths), "leaked": leaked}}))
"""


@pytest.mark.slow
def test_the_adapted_default_builds_without_torch_and_the_old_library_works_until_re_encoded(
        default_models, babelfind_home):
    import json
    import subprocess
    import sys

    from engine.library import Library
    from engine.resources import sample_corpus
    from helpers import NO_TORCH

    paths = data_paths(babelfind_home)
    library = Library.open(paths)
    list(library.index_paths([sample_corpus()]))
    query = "why are the glaciers in the Alps shrinking"
    before = [h.path for h in library.search(query)]
    script = INSTALL_ALIGNED_WITHOUT_TORCH.format(blocker=NO_TORCH)
    done = subprocess.run([sys.executable, "-c", script, str(babelfind_home)], capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["installed"] == [defaults.ALIGNED_MODEL] and result["leaked"] == []
    assert result["adapter"]["sha256"] == defaults.E5_ADAPTER.sha256 and int(result["adapter"]["parameters"]) > 0
    # installed beside the library's model, which stays active and keeps answering
    assert result["active"] == DEFAULT_MODEL
    assert library.status().model == DEFAULT_MODEL and [h.path for h in library.search(query)] == before
    # re-encoding, when the person asks for it, moves the library to the adapted model
    list(library.switch_model(defaults.ALIGNED_MODEL))
    assert library.status().model == defaults.ALIGNED_MODEL and active_model_name(paths) == defaults.ALIGNED_MODEL
    assert Path(library.search(query)[0].path).name == "gletscher_de.txt"
    base = load_encoder(DEFAULT_MODEL).encode([query], kind="query")
    adapted = load_encoder(defaults.ALIGNED_MODEL).encode([query], kind="query")
    assert np.abs(adapted - base).max() > 1e-3  # the adapter is in the weights
    library.close()
