"""Every command on an empty BABELFIND_HOME: the bundled models install once, then it works.

The installer is replaced by links to the session's installed models (`fake_installer`);
ensure_default_models is the real one, so "install only when missing" is what is tested.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import run_cli as run
from mining_fakes import ENGLISH, GERMAN

SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "sample"


@pytest.fixture
def docs(tmp_path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "gletscher_de.txt").write_bytes((SAMPLE / "gletscher_de.txt").read_bytes())
    return folder


def test_index_installs_once_then_search_status_and_reindex_work(fake_installer, docs, capsys):
    code, out, err = run(capsys, "index", docs)
    assert code == 0, err
    assert fake_installer.count == 1 and "indexed 1" in out
    assert "installing the bundled models" in err and err.count("\n") <= 3  # no library chatter
    code, out, _ = run(capsys, "index", docs)
    assert code == 0 and "unchanged 1" in out
    code, out, _ = run(capsys, "search", "why do glaciers melt", "--json", "-k", "1", "--lang", "DE")
    assert code == 0 and Path(json.loads(out)[0]["path"]).name == "gletscher_de.txt"
    code, out, _ = run(capsys, "status", "--json")
    assert code == 0 and json.loads(out)["documents"] == 1
    code, out, _ = run(capsys, "reindex")
    assert code == 0 and "unchanged 1" in out
    assert fake_installer.count == 1  # never again in this home


def test_search_on_a_fresh_home_installs_nothing(fake_installer, capsys):
    code, out, _ = run(capsys, "search", "glaciers")
    assert code == 0 and "nothing is indexed yet" in out and fake_installer.count == 0


def test_status_on_a_fresh_home_then_after_an_install(fake_installer, docs, capsys):
    code, out, _ = run(capsys, "status", "--json")
    assert code == 0 and json.loads(out)["model"] is None and fake_installer.count == 0
    assert run(capsys, "index", docs)[0] == 0
    code, out, _ = run(capsys, "status")
    assert code == 0 and "multilingual-e5-small (384-d" in out and fake_installer.count == 1


def test_embed_installs_once(fake_installer, tmp_path, capsys):
    lines = tmp_path / "lines.txt"
    lines.write_text("Der Hund schläft.\nThe dog sleeps.\n", encoding="utf-8")
    out = tmp_path / "v.npy"
    code, _, err = run(capsys, "embed", lines, "-o", out)
    assert code == 0, err
    vectors = np.load(out)
    assert vectors.shape == (2, 384) and float(vectors[0] @ vectors[1]) > 0.8
    assert run(capsys, "embed", lines, "-o", out, "--model", "all-minilm-l6-v2")[0] == 0
    assert np.load(out).shape == (2, 384) and fake_installer.count == 1


def test_eval_installs_once(fake_installer, tmp_path, capsys):
    tatoeba = tmp_path / "data" / "tatoeba" / "v1"
    tatoeba.mkdir(parents=True)
    (tatoeba / "tatoeba.deu-eng.deu").write_text("der Hund schläft\ndas Haus ist rot\n", encoding="utf-8")
    (tatoeba / "tatoeba.deu-eng.eng").write_text("the dog sleeps\nthe house is red\n", encoding="utf-8")
    for _ in range(2):
        code, out, err = run(capsys, "eval", "multilingual-e5-small", "--tatoeba", "--data", tmp_path / "data", "--json")
        assert code == 0, err
        assert json.loads(out)["tatoeba"]["results"][0]["error"] == 0
    assert fake_installer.count == 1


def test_mine_installs_once(fake_installer, tmp_path, capsys):
    de, en = tmp_path / "de.txt", tmp_path / "en.txt"
    de.write_text("\n".join(GERMAN[:5]) + "\n", encoding="utf-8")
    en.write_text("\n".join(reversed(ENGLISH[:5])) + "\n", encoding="utf-8")
    for _ in range(2):
        code, out, err = run(capsys, "mine", de, en, "--json")
        assert code == 0, err
        pairs = {(p["source"], p["target"]) for p in json.loads(out)["pairs"]}
        assert (GERMAN[0], ENGLISH[0]) in pairs
    assert fake_installer.count == 1


def test_models_info_and_use_of_a_bundled_model_install_once_list_does_not(fake_installer, capsys):
    code, out, _ = run(capsys, "models", "list")
    assert code == 0 and "no models installed yet" in out and fake_installer.count == 0
    assert run(capsys, "models", "use", "all-minilm-l6-v2")[0] == 0
    assert run(capsys, "models", "info", "multilingual-e5-small")[0] == 0
    code, out, _ = run(capsys, "models", "list", "--json")
    assert {r["name"]: r["active"] for r in json.loads(out)} == {
        "all-minilm-l6-v2": True, "multilingual-e5-small": False, "multilingual-e5-small-aligned": False}
    assert [r["name"] for r in json.loads(out) if r.get("installed") is False] == ["multilingual-e5-small-aligned"]
    assert fake_installer.count == 1


def test_train_needs_no_installed_model(fake_installer, tmp_path, capsys):
    from train_helpers import tiny_training_inputs

    model, corpus = tiny_training_inputs(tmp_path)
    code, out, err = run(capsys, "train", "--corpus", corpus, "--base", model, "--out", "tiny-fresh",
                         "--lines", "--max-steps", "2", "--batch-size", "8", "--max-len", "16",
                         "--device", "cpu", "--no-sts", "--json")
    assert code == 0, err
    assert json.loads(out)["model"] == "tiny-fresh" and fake_installer.count == 0
