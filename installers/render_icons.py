"""Renders the app icon (resources/icons/babelfind.svg) into the installers' formats.

    QT_QPA_PLATFORM=offscreen python installers/render_icons.py

Writes installers/linux/babelfind.png (256 px, the .desktop entry and AppImage),
installers/windows/babelfind.ico and installers/macos/babelfind.icns. Both containers
hold PNG images (Windows Vista and later, macOS 10.7 and later read them), so no image
library beyond Qt is needed. Run again after changing the SVG and commit the results.
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt  # noqa: E402
from PySide6.QtGui import QGuiApplication, QImage, QPainter  # noqa: E402
from PySide6.QtSvg import QSvgRenderer  # noqa: E402

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent / "resources" / "icons" / "babelfind.svg"
ICO_SIZES = (16, 32, 48, 256)
# icns types holding PNG data, by pixel size
ICNS_TYPES = {32: b"ic11", 64: b"ic12", 128: b"ic07", 256: b"ic08", 512: b"ic09"}


def render_png(renderer: QSvgRenderer, size: int) -> bytes:
    """The SVG drawn at `size` x `size` pixels, as PNG bytes."""
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(data)


def ico(images: dict[int, bytes]) -> bytes:
    """An .ico file of PNG entries (header, directory, then the images)."""
    header = struct.pack("<HHH", 0, 1, len(images))
    offset = len(header) + 16 * len(images)
    directory, payload = b"", b""
    for size, png in images.items():
        side = 0 if size >= 256 else size  # 0 means 256 in the directory
        directory += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(png), offset)
        payload += png
        offset += len(png)
    return header + directory + payload


def icns(images: dict[int, bytes]) -> bytes:
    """An .icns file of PNG entries."""
    body = b"".join(ICNS_TYPES[size] + struct.pack(">I", 8 + len(png)) + png
                    for size, png in images.items())
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main() -> int:
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841 (Qt needs one)
    renderer = QSvgRenderer(str(SOURCE))
    if not renderer.isValid():
        raise SystemExit(f"cannot read {SOURCE}")
    (HERE / "linux" / "babelfind.png").write_bytes(render_png(renderer, 256))
    (HERE / "windows" / "babelfind.ico").write_bytes(ico({s: render_png(renderer, s) for s in ICO_SIZES}))
    (HERE / "macos" / "babelfind.icns").write_bytes(icns({s: render_png(renderer, s) for s in ICNS_TYPES}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
