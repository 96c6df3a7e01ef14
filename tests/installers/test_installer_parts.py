"""The pieces of the installers that run without building a bundle: the runtime hook, the
icon containers, and the desktop entry."""

from __future__ import annotations

import configparser
import os
import runpy
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

INSTALLERS = Path(__file__).resolve().parents[2] / "installers"


@pytest.fixture
def hook_env(monkeypatch):
    # setenv first so that monkeypatch restores the variables the hook sets (a plain
    # delenv of an unset name records nothing and the hook's values would leak on)
    for name in ("BABELFIND_PREPARED_MODELS", "BABELFIND_RESOURCES"):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    return monkeypatch


def test_runtime_hook_points_at_the_bundle(hook_env, tmp_path):
    hook_env.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    runpy.run_path(str(INSTALLERS / "bundle_runtime_hook.py"))
    assert os.environ["BABELFIND_PREPARED_MODELS"] == str(tmp_path / "models")
    assert os.environ["BABELFIND_RESOURCES"] == str(tmp_path / "resources")


def test_runtime_hook_keeps_what_the_user_set(hook_env, tmp_path):
    hook_env.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    hook_env.setenv("BABELFIND_PREPARED_MODELS", "/elsewhere")
    runpy.run_path(str(INSTALLERS / "bundle_runtime_hook.py"))
    assert os.environ["BABELFIND_PREPARED_MODELS"] == "/elsewhere"


def test_icon_containers_hold_the_rendered_sizes():
    ico = (INSTALLERS / "windows" / "babelfind.ico").read_bytes()
    reserved, kind, count = struct.unpack("<HHH", ico[:6])
    assert (reserved, kind, count) == (0, 1, 4)
    sides = [ico[6 + 16 * i] or 256 for i in range(count)]
    assert sides == [16, 32, 48, 256]
    icns = (INSTALLERS / "macos" / "babelfind.icns").read_bytes()
    assert icns[:4] == b"icns" and struct.unpack(">I", icns[4:8])[0] == len(icns)
    png = (INSTALLERS / "linux" / "babelfind.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24]) == (256, 256)


def test_desktop_entry_starts_the_window_with_its_icon():
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str
    entry.read(INSTALLERS / "linux" / "babelfind.desktop", encoding="utf-8")
    section = entry["Desktop Entry"]
    assert section["Type"] == "Application" and section["Exec"].split()[0] == "babelfind-gui"
    assert section["Icon"] == "babelfind" and (INSTALLERS / "linux" / "babelfind.svg").is_file()
    assert section["Categories"].endswith(";")


def test_resources_come_from_the_checkout_here(monkeypatch, tmp_path):
    from engine.resources import resources_dir

    monkeypatch.delenv("BABELFIND_RESOURCES", raising=False)
    assert resources_dir() == INSTALLERS.parent / "resources"
    monkeypatch.setenv("BABELFIND_RESOURCES", str(tmp_path))
    assert resources_dir() == tmp_path


def test_a_wheel_carries_the_resources(tmp_path, checkout_build_lock):
    """pip install (not editable) has no checkout beside the code: the wheel must carry them."""
    import subprocess
    import zipfile

    with checkout_build_lock:
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                        "--quiet", str(INSTALLERS.parent), "-w", str(tmp_path)], check=True, timeout=600)
    (wheel,) = tmp_path.glob("babelfind-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    data = [n.split(".data/data/", 1)[1] for n in names if ".data/data/" in n]
    for wanted in ("share/babelfind/resources/icons/search.svg",
                   "share/babelfind/resources/style/babelfind.qss",
                   "share/babelfind/resources/models/int8_evidence.json",
                   "share/babelfind/resources/models/int8_probe.onnx",
                   "share/babelfind/resources/models/multilingual-e5-small-aligned.adapter",
                   "share/babelfind/resources/sample/beekeeping_en.md"):
        assert wanted in data


@pytest.mark.skipif(not shutil.which("make"), reason="no make")
def test_make_run_installs_the_app_without_the_test_tools():
    """`make run` sets up what the app needs (the window, the CLI, training); `make test`
    adds the test tools to the same environment."""
    repo = INSTALLERS.parent

    def commands(target: str) -> str:
        # -n: print the commands only (the venv named is never made)
        # under `make test` the outer make's MAKEFLAGS and MAKELEVEL would add "Entering
        # directory" lines around the commands
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
        done = subprocess.run(["make", "--no-print-directory", "-n", "-B", "VENV=/nonexistent/venv", target],
                              cwd=repo, capture_output=True, text=True, timeout=60, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout

    run = commands("run")
    assert "-e '.[train]'" in run and "'.[test]'" not in run and "-m pytest" not in run
    assert run.strip().splitlines()[-1].endswith("bin/babelfind-gui")
    test = commands("test")
    assert "-e '.[train]'" in test and "-e '.[test]'" in test and "-m pytest" in test


@pytest.mark.skipif(os.name == "nt", reason="a POSIX script stands in for the venv's python")
def test_a_build_venv_without_pip_is_made_again(tmp_path, monkeypatch):
    """A build killed while `python -m venv` ran leaves a python without pip: the next
    build makes the venv again instead of failing on `python -m pip`."""
    make_venv = runpy.run_path(str(INSTALLERS / "build_bundle.py"))["make_venv"]
    venv = tmp_path / "bundle-venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("#!/bin/sh\nexit 1\n")  # answers no module named pip
    (venv / "bin" / "python").chmod(0o755)
    (venv / "left-from-the-killed-build").touch()
    commands = []

    def run(command, **kwargs):
        commands.append(command)
        if command[1:3] == ["-m", "venv"]:  # a real venv, quickly: the torch check runs in it
            subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)

    monkeypatch.setitem(make_venv.__globals__, "_run", run)
    monkeypatch.setitem(make_venv.__globals__, "_pip", lambda python, *args: commands.append(["pip", *args]))
    python = make_venv(venv, None)
    assert commands[0] == [sys.executable, "-m", "venv", str(venv)]
    assert not (venv / "left-from-the-killed-build").exists()
    assert python == venv / "bin" / "python" and python.exists()
