"""Hostile documents built byte by byte: zip bombs, page-tree PDFs, manifest-less EPUBs.

Each builder writes a small file that costs a naive reader far more than its size says,
so the tests can prove the limits hold without ever creating the expensive content.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path

PAGE_TEXT = b"BT /F1 12 Tf 72 712 Td (Shared page about honey bees.) Tj ET"


def pdf_bytes(objects: list[bytes]) -> bytes:
    """A well-formed PDF whose object n (1-based) is objects[n-1]; object 1 is the catalog."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _page_objects(parent: int) -> list[bytes]:
    """A page (object n), its content stream (n+1) and font (n+2), given n is parent+1."""
    n = parent + 1
    return [
        b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
        b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (parent, n + 1, n + 2),
        b"<< /Length %d >>\nstream\n" % len(PAGE_TEXT) + PAGE_TEXT + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]


def shared_page_pdf(path: Path, fanout: int = 46, levels: int = 3) -> Path:
    """fanout**levels pages (97,336 by default) that are all one page object.

    Each /Pages node lists the next node `fanout` times, so a few KB declare ~100k pages.
    """
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    for level in range(levels):
        number = 2 + level
        kids = b" ".join([b"%d 0 R" % (number + 1)] * fanout)
        parent = b"" if level == 0 else b"/Parent %d 0 R " % (number - 1)
        objects.append(b"<< /Type /Pages %s/Kids [%s] /Count %d >>" % (parent, kids, fanout ** (levels - level)))
    objects += _page_objects(parent=1 + levels)
    path.write_bytes(pdf_bytes(objects))
    return path


def wide_page_tree_pdf(path: Path, references: int = 200_000) -> Path:
    """One /Pages node whose /Kids holds `references` references to one page."""
    kids = b" ".join([b"3 0 R"] * references)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, references),
    ] + _page_objects(parent=2)
    path.write_bytes(pdf_bytes(objects))
    return path


def deflate_bomb_member(size: int) -> tuple[bytes, int]:
    """(raw deflate stream of `size` zero bytes, its CRC-32), made in 1 MiB steps."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = bytes(1 << 20)
    crc, parts, left = 0, [], size
    while left > 0:
        chunk = block[: min(left, len(block))]
        crc = zlib.crc32(chunk, crc)
        parts.append(compressor.compress(chunk))
        left -= len(chunk)
    parts.append(compressor.flush())
    return b"".join(parts), crc


def write_zip_with_raw_member(path: Path, members: list[tuple[str, bytes]], bomb_name: str,
                              bomb_size: int, declared_size: int | None = None) -> Path:
    """A zip of ordinary `members` plus one deflated member of `bomb_size` zero bytes.

    `declared_size` lets the directory lie about that member's size (the default tells
    the truth). The archive is written by hand so the bomb is never held uncompressed.
    """
    compressed, crc = deflate_bomb_member(bomb_size)
    declared = bomb_size if declared_size is None else declared_size
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
    entries = []
    with open(path, "r+b") as f:
        # Re-read the central directory zipfile wrote, then append the bomb and rewrite it.
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            start = zf.start_dir
        f.seek(start)
        offset = start
        name = bomb_name.encode()
        local = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 8, 0, 0, crc, len(compressed),
                            min(declared, 0xFFFFFFFF), len(name), 0)
        f.write(local + name + compressed)
        entries = [(info.header_offset, info) for info in infos]
        directory = bytearray()
        for header_offset, info in entries:
            fname = info.filename.encode()
            directory += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, info.compress_type, 0, 0,
                                     info.CRC, info.compress_size, info.file_size, len(fname), 0, 0, 0, 0, 0,
                                     header_offset) + fname
        directory += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 8, 0, 0, crc, len(compressed),
                                 min(declared, 0xFFFFFFFF), len(name), 0, 0, 0, 0, 0, offset) + name
        directory_start = f.tell()
        f.write(directory)
        f.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(entries) + 1, len(entries) + 1,
                            len(directory), directory_start, 0))
        f.truncate()
    return path
