"""Hostile documents built byte by byte: zip bombs, page-tree PDFs, manifest-less EPUBs.

Each builder writes a small file that costs a naive reader far more than its size says,
so the tests can prove the limits hold without ever creating the expensive content.
"""

from __future__ import annotations

import functools
import io
import math
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


def shared_page_pdf(path: Path, fanouts: tuple[int, ...] = (99, 1000)) -> Path:
    """prod(fanouts) pages (99,000 by default) that are all one page object, in ~6 KB.

    The /Pages node of level i lists the node of level i+1 fanouts[i] times; the last
    level lists the one page. Each /Count tells the truth.
    """
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    for level, fanout in enumerate(fanouts):
        number = 2 + level
        kids = b" ".join([b"%d 0 R" % (number + 1)] * fanout)
        parent = b"" if level == 0 else b"/Parent %d 0 R " % (number - 1)
        count = math.prod(fanouts[level:])
        objects.append(b"<< /Type /Pages %s/Kids [%s] /Count %d >>" % (parent, kids, count))
    objects += _page_objects(parent=1 + len(fanouts))
    path.write_bytes(pdf_bytes(objects))
    return path


def surrogate_text_pdf(path: Path) -> Path:
    """A one-page PDF whose font's ToUnicode map turns "A" into a lone surrogate (U+D800).

    pypdf returns that surrogate as it is; UTF-8 (and so the database) cannot hold it.
    """
    cmap = (b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /X def\n"
            b"1 begincodespacerange <00> <FF> endcodespacerange\n"
            b"2 beginbfchar <41> <D800> <42> <0042> endbfchar\n"
            b"endcmap CMapName currentdict /CMap defineresource pop end end")
    content = b"BT /F1 12 Tf 72 712 Td (Honey bees ABAB dance) Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(cmap) + cmap + b"\nendstream",
    ]
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


@functools.lru_cache(maxsize=4)
def deflate_bomb_member(size: int) -> tuple[bytes, int]:
    """(raw deflate stream of `size` zero bytes, its CRC-32); `size` a multiple of 1 MiB.

    One MiB of zeros is compressed once with a full flush, which ends it on a byte
    boundary with no back-references, so the stream is that piece repeated, then an
    empty final block: 2 GiB in 2 MB without compressing 2 GiB. Only the CRC walks
    the whole size (about a second per GiB), hence the cache.
    """
    block = bytes(1 << 20)
    assert size % len(block) == 0, size
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    piece = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(size // len(block)):
        crc = zlib.crc32(block, crc)
    return piece * (size // len(block)) + b"\x03\x00", crc


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


# ---- small valid containers written member by member (the fuzzer's seeds) ----------------

DOCX_MEMBERS = {
    "[Content_Types].xml": (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/word/document.xml" ContentType="application/'
        'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
    ),
    "_rels/.rels": (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/officeDocument" Target="word/document.xml"/></Relationships>'
    ),
    "word/document.xml": (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>'
        '<w:p><w:r><w:t>Honey bees dance to show the way.</w:t></w:r></w:p>'
        '<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Hive</w:t></w:r></w:p></w:tc>'
        '<w:tc><w:p><w:r><w:t>Comb</w:t></w:r></w:p></w:tc></w:tr></w:tbl>'
        '<w:p><w:r><w:t>Glaciers move slowly.</w:t></w:r></w:p></w:body></w:document>'
    ),
}

ODT_MIMETYPE = "application/vnd.oasis.opendocument.text"
ODT_MEMBERS = {
    "mimetype": ODT_MIMETYPE,
    "META-INF/manifest.xml": (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
        f'<manifest:file-entry manifest:full-path="/" manifest:media-type="{ODT_MIMETYPE}"/>'
        '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
        '</manifest:manifest>'
    ),
    "content.xml": (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2">'
        '<office:body><office:text><text:h text:outline-level="1">Bees</text:h>'
        '<text:p>Honey bees dance to show the way.</text:p><text:p>Glaciers move slowly.</text:p>'
        '</office:text></office:body></office:document-content>'
    ),
}

EPUB_CONTAINER = (
    '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
    '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
    '</rootfiles></container>'
)
EPUB_METADATA = (
    '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Bees</dc:title>'
    '<dc:identifier id="id">urn:uuid:1</dc:identifier><dc:language>en</dc:language></metadata>'
)
EPUB_MANIFEST = (
    '<manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/></manifest>'
)


def epub_members(with_manifest: bool = True) -> dict[str, str]:
    """Members of a one-chapter EPUB; without the <manifest> ebooklib raised TypeError."""
    package = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" '
        f'unique-identifier="id">{EPUB_METADATA}{EPUB_MANIFEST if with_manifest else ""}'
        '<spine><itemref idref="c1"/></spine></package>'
    )
    return {
        "mimetype": "application/epub+zip",
        "META-INF/container.xml": EPUB_CONTAINER,
        "OEBPS/content.opf": package,
        "OEBPS/c1.xhtml": (
            '<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>Bees</title></head>'
            '<body><p>Honey bees dance to show the way.</p><p>Glaciers move slowly.</p></body></html>'
        ),
    }


def zip_bytes(members: dict[str, str | bytes]) -> bytes:
    """A zip of `members` in order; "mimetype" stored, the rest deflated, as the formats want."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, data in members.items():
            method = zipfile.ZIP_STORED if name == "mimetype" else zipfile.ZIP_DEFLATED
            zf.writestr(name, data, compress_type=method)
    return buffer.getvalue()


def pdf_document() -> bytes:
    """A two-page PDF written by fpdf2."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for text in ("Honey bees dance to show the way.", "Glaciers move slowly."):
        pdf.add_page()
        pdf.multi_cell(0, 8, text)
    return bytes(pdf.output())


def seed_documents() -> dict[str, bytes]:
    """{file name: bytes} of one small valid document per format the engine reads."""
    return {
        "a.txt": "Honey bees dance to show the way.\nGlaciers move slowly.\n".encode(),
        "a.md": b"# Bees\n\n**Honey** bees [dance](x.html).\n\n* one\n* two\n",
        "a.rst": b"Bees\n====\n\n**Honey** bees dance. ``code``\n",
        "a.csv": b"name,count\nbees,3\nglaciers,2\n",
        "a.html": (b"<!doctype html><html><head><title>Bees</title><meta charset='utf-8'></head><body>"
                   b"<nav>menu</nav><main><h1>Bees</h1><p>Honey bees dance.</p><table><tr><td>a</td>"
                   b"<td>b</td></tr></table><pre>x\ny</pre></main></body></html>"),
        "a.pdf": pdf_document(),
        "a.docx": zip_bytes(DOCX_MEMBERS),
        "a.odt": zip_bytes(ODT_MEMBERS),
        "a.epub": zip_bytes(epub_members()),
    }


def nested_html(depth: int, tag: str = "div") -> bytes:
    """A page of `depth` nested elements around one sentence: 11 bytes a level.

    lexbor's time grows with the square of the depth (200,000 levels: about 100 s), all
    inside C, where no deadline check can run.
    """
    opening, closing = f"<{tag}>".encode(), f"</{tag}>".encode()
    return (b"<!doctype html><html><body>" + opening * depth + b"Deep honey bees." + closing * depth
            + b"</body></html>")


# Just under html_file's CHECKED_FROM_TAGS (two tags a level), so the nesting check lets
# it through, yet lexbor spends 0.05 to 0.2 s in C on it, depending on the machine.
SLOW_NESTING = 9_900


def slow_nesting_deadline() -> float:
    """A per-document deadline that nested_html(SLOW_NESTING) overruns inside C on this
    machine: a quarter of the time lexbor takes on it here (the reader waits the deadline
    twice over before it kills the child), so the test holds on fast and slow machines
    while the ordinary documents beside it (a few ms each) still fit."""
    import time

    from selectolax.lexbor import LexborHTMLParser

    page = nested_html(SLOW_NESTING)
    started = time.perf_counter()
    LexborHTMLParser(page).text()
    return round(max((time.perf_counter() - started) / 4, 0.005), 4)


def colliding_names(folder: Path) -> list[Path]:
    """Files whose names are easy to confuse, each with its own text and its own word
    `collision<i>`: a literal `caf\\xe9` beside the bytes caf<0xE9> (not UTF-8), NFC beside
    NFD é, upper beside lower case, a newline, an ANSI escape and U+202E in names.
    Returns the files written, in order (those the platform allows)."""
    import os
    import unicodedata

    folder.mkdir(parents=True, exist_ok=True)
    names: list[bytes] = [b"caf\\xe9.txt", b"caf\xe9.txt",
                          unicodedata.normalize("NFC", "caf\u00e9-n.txt").encode(),
                          unicodedata.normalize("NFD", "caf\u00e9-n.txt").encode(),
                          b"Case.txt", b"case.txt", b"two\nlines.txt", b"red\x1b[31m.txt",
                          "evil\u202etxt.exe.txt".encode()]
    written = []
    for index, name in enumerate(names):
        path = os.path.join(os.fsencode(folder), name)
        try:
            with open(path, "xb") as f:
                f.write(f"Names that collide: {name!r} keeps its own words, collision{index}.".encode())
        except (OSError, ValueError):  # a file system that folds case or forbids the bytes
            continue
        written.append(Path(os.fsdecode(path)))
    return written
