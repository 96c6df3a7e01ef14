"""`babelfind models import-laser` and a LASER model through `eval --tatoeba`."""

from __future__ import annotations

import json

import pytest

from app.cli import main
from laser_models import make_tiny_laser


@pytest.fixture(scope="module")
def laser_files(tmp_path_factory):
    return make_tiny_laser(tmp_path_factory.mktemp("laser"))


def run_json(capsys, argv) -> object:
    capsys.readouterr()
    assert main(argv + ["--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_import_laser_then_list_and_eval(laser_files, tmp_path, capsys):
    files = laser_files
    manifest = run_json(capsys, ["models", "import-laser", str(files.checkpoint), "--spm",
                                 str(files.spm), "--cvocab", str(files.cvocab), "--name", "laser-t"])
    assert manifest["family"] == "laser" and manifest["dim"] == 16
    rows = run_json(capsys, ["models", "list"])
    assert [(r["name"], r["family"], r["variants"]) for r in rows if r["installed"]] == [("laser-t", "laser", ["fp32"])]
    # a second import under the same name needs --replace
    assert main(["models", "import-laser", str(files.checkpoint), "--spm", str(files.spm),
                 "--name", "laser-t"]) == 1

    tatoeba = tmp_path / "data" / "tatoeba" / "v1"
    tatoeba.mkdir(parents=True)
    (tatoeba / "tatoeba.deu-eng.deu").write_text("der hund ist schnell\ndas haus\ndie katze\n")
    (tatoeba / "tatoeba.deu-eng.eng").write_text("the cat\nthe house\nwhere is the station\n")
    report = run_json(capsys, ["eval", "laser-t", "--tatoeba", "--data", str(tmp_path / "data")])
    assert report["variant"] == "fp32"
    assert report["tatoeba"]["results"][0]["lang"] == "deu"


def test_import_laser_of_a_broken_checkpoint_is_one_clear_line(laser_files, tmp_path, capsys):
    broken = tmp_path / "laser2.pt"
    broken.write_bytes(laser_files.checkpoint.read_bytes()[:100])
    capsys.readouterr()
    assert main(["models", "import-laser", str(broken), "--spm", str(laser_files.spm),
                 "--name", "broken"]) == 1
    err = capsys.readouterr().err
    assert str(broken) in err and "Traceback" not in err
