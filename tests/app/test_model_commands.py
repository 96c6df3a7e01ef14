"""`babelfind models|embed|eval` through the real command line entry point."""

from __future__ import annotations

import json

import numpy as np
import pytest

from app.cli import main
from engine.config import data_paths
from engine.eval_tatoeba import evaluate_encoder, nearest_neighbour_error
from engine.models import load_encoder


def run_json(capsys, argv) -> object:
    capsys.readouterr()
    assert main(argv + ["--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_models_list_info_and_use(home_with_tiny, capsys):
    from engine.models import get_manifest

    made = sorted(v for v in ("fp16", "fp32", "int8") if get_manifest("tiny").variant_file(v))
    assert {"fp16", "fp32"} <= set(made)  # int8 only when it passed its cosine check
    rows = run_json(capsys, ["models", "list"])
    assert rows[0] == {"name": "tiny", "active": True, "installed": True, "dim": 32, "family": "transformer",
                       "variants": made, "languages": 0, "licence": "MIT"}
    assert [(r["name"], r["installed"], r["dim"]) for r in rows[1:]] == [
        ("multilingual-e5-small-aligned", False, None)]
    assert rows[1].keys() == rows[0].keys()
    assert main(["models", "list"]) == 0
    assert "'babelfind models use multilingual-e5-small-aligned' builds it" in capsys.readouterr().out
    info = run_json(capsys, ["models", "info", "tiny"])
    assert info["active"] and info["export_parity"]["min_cosine"] >= 0.9999
    assert info["prefixes"] == {"query": "query: ", "passage": "passage: "}


def test_models_export_remove_import_round_trip(home_with_tiny, tmp_path, capsys):
    archive = tmp_path / "tiny.zip"
    assert main(["models", "export", "tiny", str(archive)]) == 0
    assert main(["models", "remove", "tiny"]) == 1  # active: refused, one clear line
    assert "active model" in capsys.readouterr().err
    data_paths().settings_file.unlink()  # nothing active any more
    assert main(["models", "remove", "tiny"]) == 0
    assert run_json(capsys, ["models", "list"]) == []
    imported = run_json(capsys, ["models", "import", str(archive)])
    assert imported["name"] == "tiny"


def test_unknown_model_is_one_clear_error(home_with_tiny, capsys):
    assert main(["models", "use", "nope"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("babelfind: error: no model named 'nope'") and "Traceback" not in err


def test_embed_keeps_order_and_shape(home_with_tiny, tmp_path):
    rng = np.random.default_rng(0)
    words = "the cat sat on mat dog runs fast red blue green house tree hello world".split()
    lines = [" ".join(rng.choice(words, size=rng.integers(1, 30))) for _ in range(300)]
    lines[5] = ""  # an empty line still gets its row
    source = tmp_path / "in.txt"
    source.write_text("\n".join(lines), encoding="utf-8")  # no final newline
    out = tmp_path / "out.npy"
    import app.cli.model_commands as commands

    commands.EMBED_CHUNK = 64  # several chunks on a small file
    try:
        assert main(["embed", str(source), "-o", str(out), "--kind", "query",
                     "--variant", "fp32"]) == 0
    finally:
        commands.EMBED_CHUNK = 2048
    vectors = np.load(out)
    assert vectors.dtype == np.float32 and vectors.shape == (300, 32)
    expected = load_encoder("tiny", variant="fp32").encode(lines, kind="query")
    np.testing.assert_allclose(vectors, expected, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert not list(tmp_path.glob("*.part.npy"))


def test_embed_kind_and_model_options(home_with_tiny, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("the cat\nthe dog\n", encoding="utf-8")
    query, passage = tmp_path / "q.npy", tmp_path / "p.npy"
    assert main(["embed", str(source), "-o", str(query), "--kind", "query", "--model", "tiny"]) == 0
    assert main(["embed", str(source), "-o", str(passage)]) == 0
    assert np.load(query).shape == (2, 32)
    assert not np.allclose(np.load(query), np.load(passage))
    assert main(["embed", str(tmp_path / "absent.txt"), "-o", str(query)]) == 2  # refused while parsing


def write_tatoeba(folder, pairs: dict[str, list[tuple[str, str]]]):
    folder.mkdir(parents=True)
    for lang, rows in pairs.items():
        (folder / f"tatoeba.{lang}-eng.{lang}").write_text("\n".join(r[0] for r in rows) + "\n")
        (folder / f"tatoeba.{lang}-eng.eng").write_text("\n".join(r[1] for r in rows) + "\n")


def test_eval_tatoeba_json_matches_the_library(home_with_tiny, tmp_path, capsys):
    data = tmp_path / "data"
    write_tatoeba(data / "tatoeba" / "v1", {
        "deu": [("der hund", "the dog"), ("die katze", "the cat"), ("das haus", "the house")],
        "fra": [("le chat", "the cat"), ("la maison", "the house")],
    })
    report = run_json(capsys, ["eval", "tiny", "--tatoeba", "--data", str(data), "--variant", "fp32"])
    direct = evaluate_encoder(load_encoder("tiny", variant="fp32"), data / "tatoeba" / "v1")
    assert report["tatoeba"]["languages"] == 2
    assert report["tatoeba"]["mean_error"] == pytest.approx(direct.mean_error)
    only_fra = run_json(capsys, ["eval", "tiny", "--tatoeba", "--langs", "fra", "--data", str(data)])
    assert [r["lang"] for r in only_fra["tatoeba"]["results"]] == ["fra"]
    assert main(["eval", "tiny", "--tatoeba", "--langs", "xyz", "--data", str(data)]) == 1
    assert main(["eval", "tiny"]) == 1  # nothing chosen to evaluate


def test_nearest_neighbour_error_against_a_loop():
    rng = np.random.default_rng(5)
    a = rng.normal(size=(50, 8)).astype(np.float32)
    b = a + rng.normal(scale=1.2, size=a.shape).astype(np.float32)
    got = nearest_neighbour_error(a, b)

    def slow(x, y):
        wrong = 0
        for i, row in enumerate(x):
            sims = [float(row @ other / np.linalg.norm(row) / np.linalg.norm(other)) for other in y]
            wrong += int(np.argmax(sims) != i)
        return 100 * wrong / len(x)

    assert got == pytest.approx((slow(a, b), slow(b, a)))
    assert 0 < got[0] < 100


def test_models_use_reencodes_an_existing_library(home_with_tiny, tmp_path, capsys):
    from tiny_models import register_tiny_model

    from engine.library import Library

    paths = data_paths()
    register_tiny_model(paths, "tiny2", seed=5)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("the cat sat on the mat. the dog runs fast.", encoding="utf-8")
    (docs / "b.txt").write_text("hello world. the red house and the green tree.", encoding="utf-8")
    library = Library.open(paths)
    try:
        list(library.index_paths([docs]))
        assert library.status().model == "tiny"
    finally:
        library.close()
    result = run_json(capsys, ["models", "use", "tiny2"])
    assert result == {"active": "tiny2", "reindexed": True}
    library = Library.open(paths)
    try:
        assert library.status().model == "tiny2" and library.status().pending_model is None
        hits = library.search("the cat sat on the mat", k=2)
        assert hits and hits[0].path.endswith("a.txt")
    finally:
        library.close()


def test_models_info_says_why_int8_is_not_the_default(home_with_tiny, capsys):
    from dataclasses import replace

    from engine.model_manifest import write_manifest
    from engine.models import get_manifest, model_dir

    reason = "est +4.45 points Tatoeba error (gate: <= 2 per language)"
    manifest = get_manifest("tiny")
    refused = {"file": None, "gate": "refused", "reason": reason, "scheme": "dynamic-pc"}
    write_manifest(model_dir("tiny"), replace(manifest, variants=manifest.variants | {"int8": refused}))
    capsys.readouterr()
    assert main(["models", "info", "tiny"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert f"int8 not used by default: {reason}" in lines
    assert any("int8 not made (gate refused)" in line for line in lines)
    assert run_json(capsys, ["models", "info", "tiny"])["int8_not_default"] == reason
