"""Every command, given what a careless or hostile user might pass: one line, exit 1.

Bad database URLs (a port that is not a number, a driver that is not installed, a
password in the query string that must never be printed), models whose manifest has
values of the wrong type, and archives that would unpack outside or explode.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from app.cli import main
from engine.config import data_paths

SECRET = "hunter2secret"
BAD_URLS = [
    f"postgresql://me:{SECRET}@localhost:notaport/lib",
    f"mysql://me:{SECRET}@localhost/lib",
    f"postgresql+psycopg://me@127.0.0.1:1/lib?password={SECRET}",
    "not a url at all",
]
LIBRARY_COMMANDS = [["index", "{tmp}"], ["search", "bees"], ["status"], ["forget", "{tmp}"],
                    ["reindex"], ["check"]]


def run(capsys, argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code: int, out: str, err: str) -> None:
    assert code == 1, (out, err)
    # progress lines may come first; the error is the one last line
    assert err.endswith("\n") and err.splitlines()[-1].startswith("babelfind: error: "), err
    assert err.count("babelfind: error: ") == 1, err
    assert "Traceback" not in err
    assert SECRET not in out + err


@pytest.mark.parametrize("url", BAD_URLS)
@pytest.mark.parametrize("command", LIBRARY_COMMANDS, ids=lambda c: c[0])
def test_bad_database_urls_are_one_line_without_the_password(default_models, capsys, tmp_path,
                                                             url, command):
    argv = ["--db", url, *[a.replace("{tmp}", str(tmp_path)) for a in command]]
    assert_one_line_error(*run(capsys, argv))


def test_status_masks_a_query_string_password(default_models, capsys, tmp_path):
    url = f"sqlite:///{tmp_path / 'lib.db'}?password={SECRET}"
    code, out, err = run(capsys, ["--db", url, "status", "--json"])
    assert code == 0, err
    assert json.loads(out)["db_url"].endswith("?password=***") and SECRET not in out + err


@pytest.fixture
def broken_model(tiny_registry, babelfind_home, default_models) -> Path:
    """Installs the tiny model twice: 'tiny', and 'broken' whose manifest is edited per test."""
    models = babelfind_home / "models"
    shutil.copytree(tiny_registry.models / "tiny", models / "tiny")
    folder = shutil.copytree(tiny_registry.models / "tiny", models / "broken")
    data = json.loads((folder / "manifest.json").read_text()) | {"name": "broken"}
    (folder / "manifest.json").write_text(json.dumps(data))
    return folder


def _edit(folder: Path, **changes) -> None:
    data = json.loads((folder / "manifest.json").read_text())
    (folder / "manifest.json").write_text(json.dumps(data | changes))


@pytest.mark.parametrize("changes", [{"dim": "abc"}, {"max_length": -1}, {"files": ["x"]},
                                     {"variants": {"fp32": {"file": "../tiny/model.onnx"}}}])
def test_wrong_type_manifests_in_every_model_command(broken_model, capsys, tmp_path, changes):
    _edit(broken_model, **changes)
    sentences = tmp_path / "in.txt"
    sentences.write_text("one sentence\nanother one\n", encoding="utf-8")
    for argv in (["models", "info", "broken"], ["models", "use", "broken"],
                 ["models", "export", "broken", tmp_path / "out.zip"],
                 ["embed", sentences, "-o", tmp_path / "out.npy", "--model", "broken"],
                 ["mine", sentences, sentences, "--model", "broken", "--lines", "--same-language"],
                 ["models", "import", broken_model]):
        assert_one_line_error(*run(capsys, argv))
    code, out, err = run(capsys, ["models", "list"])  # the broken one is skipped (logged)
    assert code == 0 and "tiny" in out and "broken" not in out and "Traceback" not in err, err
    assert not (tmp_path / "out.zip").exists()


def test_manifest_that_is_a_json_list(broken_model, capsys):
    (broken_model / "manifest.json").write_text("[]")
    assert_one_line_error(*run(capsys, ["models", "info", "broken"]))


def test_hostile_archives_are_one_line_and_install_nothing(broken_model, capsys, tmp_path):
    code, _, err = run(capsys, ["models", "export", "tiny", tmp_path / "tiny.zip"])
    assert code == 0, err
    installed = sorted(p.name for p in data_paths().models.iterdir())
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(tmp_path / "tiny.zip") as src, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename.replace("tiny/", "bomb/"), src.read(info))
        dst.writestr("bomb/unlisted.bin", b"\0" * (32 << 20))
    assert_one_line_error(*run(capsys, ["models", "import", bomb]))
    assert sorted(p.name for p in data_paths().models.iterdir()) == installed


def test_absurd_laser_checkpoint_is_one_line(capsys, tmp_path):
    import torch
    from laser_models import make_tiny_laser

    laser_files = make_tiny_laser(tmp_path / "laser")
    state = torch.load(laser_files.checkpoint, weights_only=True)
    state["params"]["num_embeddings"] = 10**12
    torch.save(state, tmp_path / "absurd.pt")
    argv = ["models", "import-laser", tmp_path / "absurd.pt", "--spm", laser_files.spm,
            "--name", "absurd"]
    assert_one_line_error(*run(capsys, argv))


@pytest.mark.parametrize("url", [
    f"postgresql+psycopg://u@127.0.0.1:1/db?password={SECRET}",
    f"postgresql+psycopg://u@127.0.0.1:1/db?sslmode=disable&PASS%57ORD={SECRET}",
    f"postgresql+psycopg://u:{SECRET}@127.0.0.1:1/db?sslpassword={SECRET}",
    f"postgresql+psycopg://u@127.0.0.1:notaport/db?password={SECRET}",
], ids=["query", "encoded-key", "both", "bad-port"])
def test_doctor_never_prints_a_password(babelfind_home, capsys, url):
    code, out, err = run(capsys, ["--db", url, "doctor", "--json"])
    assert SECRET not in out + err
    report = json.loads(out)
    shown = [c["value"] for c in report["checks"] if c["section"] == "database"]
    assert shown and all("***" in value for value in shown), shown
