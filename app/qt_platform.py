"""Can the window start here? Qt's platform plugin and the system libraries it needs.

    >>> plugin_check()    # QtPlatformCheck(platform='xcb', plugin=Path(...), missing=['libxcb-icccm.so.4'])

Read without importing Qt: a missing system library makes Qt abort the process when
the plugin loads, so the check runs `ldd` on the plugin file instead (Linux), and looks
for the libraries Qt opens at run time, which `ldd` cannot see.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

# Loaded by the xcb plugin at start-up with dlopen (Qt 6.5+ refuses to start without it).
RUNTIME_LIBRARIES = {"xcb": ("libxcb-cursor.so.0",)}
# Debian/Ubuntu package for a library whose name does not follow the usual rule.
DEBIAN_PACKAGES = {"libxkbcommon-x11.so.0": "libxkbcommon-x11-0", "libGL.so.1": "libgl1",
                   "libEGL.so.1": "libegl1", "libfontconfig.so.1": "libfontconfig1",
                   "libdbus-1.so.3": "libdbus-1-3"}
_NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found", re.MULTILINE)


@dataclass(frozen=True)
class QtPlatformCheck:
    platform: str
    plugin: Path | None
    missing: list[str] = field(default_factory=list)

    @property
    def packages(self) -> list[str]:
        """Debian/Ubuntu packages that provide the missing libraries."""
        return sorted({debian_package(name) for name in self.missing})


def default_platform() -> str:
    """The platform plugin Qt will pick: QT_QPA_PLATFORM, else the system's own."""
    chosen = os.environ.get("QT_QPA_PLATFORM", "").split(":")[0].strip()
    if chosen:
        return chosen
    if sys.platform == "darwin":
        return "cocoa"
    if sys.platform == "win32":
        return "windows"
    return "wayland" if os.environ.get("WAYLAND_DISPLAY") else "xcb"


def plugin_file(platform: str) -> Path | None:
    """PySide6's file for `platform` (e.g. .../plugins/platforms/libqxcb.so), or None."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    for folder in (root / "Qt" / "plugins" / "platforms", root / "plugins" / "platforms"):
        for candidate in folder.glob(f"*q{platform}.*"):
            return candidate
    return None


def missing_libraries(ldd_output: str) -> list[str]:
    """Library names `ldd` could not resolve, once each, in its order."""
    return list(dict.fromkeys(_NOT_FOUND.findall(ldd_output)))


def debian_package(library: str) -> str:
    """The usual Debian package name: libxcb-icccm.so.4 -> libxcb-icccm4."""
    if library in DEBIAN_PACKAGES:
        return DEBIAN_PACKAGES[library]
    stem, _, version = library.partition(".so.")
    version = version.split(".")[0]
    joiner = "-" if stem[-1:].isdigit() else ""
    return f"{stem}{joiner}{version}" if version else stem


def plugin_check(platform: str | None = None) -> QtPlatformCheck:
    """What the platform plugin needs that this system lacks (Linux only; [] elsewhere)."""
    platform = platform or default_platform()
    plugin = plugin_file(platform)
    if plugin is None or not sys.platform.startswith("linux"):
        return QtPlatformCheck(platform, plugin)
    missing = []
    ldd = shutil.which("ldd")
    if ldd:
        result = subprocess.run([ldd, str(plugin)], capture_output=True, text=True, timeout=30)
        missing = missing_libraries(result.stdout)
    for library in RUNTIME_LIBRARIES.get(platform, ()):
        try:
            ctypes.CDLL(library)
        except OSError:
            missing.append(library)
    return QtPlatformCheck(platform, plugin, missing)
