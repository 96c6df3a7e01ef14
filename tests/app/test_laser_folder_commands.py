"""`babelfind models import-laser FOLDER` and `babelfind models download` (local server, offline)."""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import socket
import threading
import time

import pytest

from app.cli import main
from engine.encoders.laser_files import URL_ENV, find_laser_files, model_name
from engine.errors import InputError
from laser_models import make_tiny_laser


@pytest.fixture(scope="module")
def laser_files(tmp_path_factory):
    return make_tiny_laser(tmp_path_factory.mktemp("laser"))


def official_folder(files, folder, checkpoint="laser2.pt", spm="laser2.spm", cvocab="laser2.cvocab"):
    """The tiny model's files under the official names."""
    folder.mkdir(parents=True, exist_ok=True)
    for source, name in ((files.checkpoint, checkpoint), (files.spm, spm), (files.cvocab, cvocab)):
        if name:
            shutil.copyfile(source, folder / name)
    return folder


def run_json(capsys, argv):
    capsys.readouterr()
    assert main(argv + ["--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_model_names_come_from_the_files(tmp_path):
    assert model_name(tmp_path / "laser2.pt") == "laser2"
    assert model_name(tmp_path / "laser3-wol.v1.pt") == "laser3-wol"
    assert model_name(tmp_path / "My Model.pt") == "my-model"


def test_folder_of_laser2_files_imports_as_laser2(laser_files, tmp_path, capsys):
    folder = official_folder(laser_files, tmp_path / "laser")
    manifest = run_json(capsys, ["models", "import-laser", str(folder)])
    assert (manifest["name"], manifest["family"], manifest["dim"]) == ("laser2", "laser", 16)
    assert manifest["preprocessing"]["cvocab"]["tokens"] > 0  # the cvocab was found and checked


def test_folder_with_a_laser3_checkpoint_uses_the_laser2_spm_beside_it(laser_files, tmp_path, capsys):
    folder = official_folder(laser_files, tmp_path / "laser3", checkpoint="laser3-wol.v1.pt")
    found = find_laser_files(folder)
    assert (found.checkpoint.name, found.spm.name, found.cvocab.name) == (
        "laser3-wol.v1.pt", "laser2.spm", "laser2.cvocab")
    assert run_json(capsys, ["models", "import-laser", str(folder)])["name"] == "laser3-wol"


def test_folder_without_an_spm_is_one_clear_line(laser_files, tmp_path, capsys):
    folder = official_folder(laser_files, tmp_path / "nospm", spm=None)
    capsys.readouterr()
    assert main(["models", "import-laser", str(folder)]) == 1
    err = capsys.readouterr().err.strip()
    assert "no SentencePiece model" in err and "laser2.spm" in err and len(err.splitlines()) == 1


def test_folder_without_a_checkpoint_fails(laser_files, tmp_path):
    folder = official_folder(laser_files, tmp_path / "nopt", checkpoint=None)
    with pytest.raises(InputError, match="no LASER checkpoint"):
        find_laser_files(folder)


def test_two_checkpoints_are_ambiguous(laser_files, tmp_path):
    folder = official_folder(laser_files, tmp_path / "two", checkpoint="laser3-wol.v1.pt")
    shutil.copyfile(laser_files.checkpoint, folder / "laser3-fuv.v1.pt")
    with pytest.raises(InputError, match="several LASER checkpoints"):
        find_laser_files(folder)


def test_laser2_wins_among_several_checkpoints(laser_files, tmp_path):
    folder = official_folder(laser_files, tmp_path / "both")
    shutil.copyfile(laser_files.checkpoint, folder / "laser3-wol.v1.pt")
    assert find_laser_files(folder).checkpoint.name == "laser2.pt"


def test_a_checkpoint_file_needs_its_spm(laser_files, capsys):
    capsys.readouterr()
    assert main(["models", "import-laser", str(laser_files.checkpoint)]) == 1
    assert "--spm" in capsys.readouterr().err


def test_download_from_a_server_then_import(laser_files, tmp_path, monkeypatch, capsys):
    served = official_folder(laser_files, tmp_path / "server")
    handler = functools.partial(QuietHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv(URL_ENV, f"http://127.0.0.1:{server.server_port}")
        manifest = run_json(capsys, ["models", "download", "laser2"])
    finally:
        server.shutdown()
        server.server_close()
    assert (manifest["name"], manifest["family"]) == ("laser2", "laser")


def test_download_offline_fails_at_once_with_one_line(monkeypatch, capsys):
    with socket.socket() as probe:  # a port nobody listens on: connection refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv(URL_ENV, f"http://127.0.0.1:{port}/nllb/laser")
    capsys.readouterr()
    started = time.monotonic()
    assert main(["models", "download", "laser2"]) == 1
    assert time.monotonic() - started < 10
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "cannot reach 127.0.0.1" in err and "import-laser FOLDER" in err
    assert "laser2.pt, laser2.spm, laser2.cvocab" in err


def test_download_of_an_unknown_model_is_refused(capsys):
    capsys.readouterr()
    assert main(["models", "download", "laser9"]) == 1
    assert "unknown LASER model" in capsys.readouterr().err


def test_a_file_missing_on_the_server_is_named(laser_files, tmp_path, monkeypatch, capsys):
    served = official_folder(laser_files, tmp_path / "partial", cvocab=None)
    handler = functools.partial(QuietHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv(URL_ENV, f"http://127.0.0.1:{server.server_port}")
        capsys.readouterr()
        assert main(["models", "download", "laser2"]) == 1
    finally:
        server.shutdown()
        server.server_close()
    assert "laser2.cvocab: the server answered 404" in capsys.readouterr().err


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # no request lines on stderr
        pass
