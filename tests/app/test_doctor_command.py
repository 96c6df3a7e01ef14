"""`babelfind doctor` and the Qt platform check behind it and behind the window's start."""

from __future__ import annotations

import json

import pytest

from app import qt_platform
from app.cli import main

LDD_OUTPUT = """\
\tlinux-vdso.so.1 (0x00007ffd)
\tlibQt6XcbQpa.so.6 => /venv/PySide6/Qt/lib/libQt6XcbQpa.so.6 (0x00007f)
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibxcb-icccm.so.4 => not found
\tlibxkbcommon-x11.so.0 => not found
"""


def test_ldd_output_gives_missing_libraries_and_their_packages():
    missing = qt_platform.missing_libraries(LDD_OUTPUT)
    assert missing == ["libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxkbcommon-x11.so.0"]
    check = qt_platform.QtPlatformCheck("xcb", None, missing)
    assert check.packages == ["libxcb-icccm4", "libxcb-keysyms1", "libxkbcommon-x11-0"]
    assert qt_platform.debian_package("libxcb-cursor.so.0") == "libxcb-cursor0"
    assert qt_platform.debian_package("libgtk-3.so.0") == "libgtk-3-0"


def test_the_platform_follows_qt_qpa_platform(monkeypatch):
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert qt_platform.default_platform() == "offscreen"
    check = qt_platform.plugin_check()
    assert check.plugin is not None and "offscreen" in check.plugin.name
    assert check.missing == []


def test_doctor_json_on_a_fresh_home(capsys, babelfind_home):
    assert main(["doctor", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    sections = {c["section"] for c in report["checks"]}
    assert {"versions", "encoders", "vectors", "data", "models", "database", "window"} <= sections
    assert report["ok"] is True


def test_doctor_text_names_the_packages_to_install(capsys, monkeypatch):
    monkeypatch.setattr(qt_platform, "plugin_check", lambda platform=None: qt_platform.QtPlatformCheck(
        "xcb", qt_platform.plugin_file("offscreen"), ["libxcb-icccm.so.4"]))
    assert main(["doctor"]) == 0  # a window problem is a warning: the command line still works
    out = capsys.readouterr().out
    assert "sudo apt-get install libxcb-icccm4" in out
    assert "1 problem found" in out


def test_doctor_exits_1_when_something_is_broken(capsys, monkeypatch):
    assert main(["--db", "postgresql+psycopg://u:pw@127.0.0.1:1/x", "doctor"]) == 1
    out = capsys.readouterr().out
    assert "cannot connect" in out and "pw@" not in out


def test_the_window_refuses_to_start_with_one_line_when_libraries_are_missing(capsys, monkeypatch):
    from app import gui

    monkeypatch.setattr(qt_platform, "plugin_check", lambda platform=None: qt_platform.QtPlatformCheck(
        "xcb", None, ["libxcb-keysyms.so.1"]))
    assert gui.main([]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "apt-get install libxcb-keysyms1" in err[0]


@pytest.mark.skipif(not qt_platform.sys.platform.startswith("linux"), reason="ldd is Linux's")
def test_the_real_xcb_plugin_is_checked_with_ldd():
    check = qt_platform.plugin_check("xcb")
    assert check.plugin is not None and check.plugin.name == "libqxcb.so"
    assert all(name.startswith("lib") for name in check.missing)
