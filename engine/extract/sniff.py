"""Recognise a document's format from its first bytes, whatever its name says.

A PDF saved as `.txt` is still a PDF; a `.docx` that is not a zip archive is damaged.
Zip containers are told apart by their members: `[Content_Types].xml` + `word/` is
DOCX (`xl/` XLSX, `ppt/` PPTX), the stored `mimetype` entry names ODT, ODS, ODP and
EPUB, and any other zip is an archive. Old binary Office files are OLE compound files
told apart by the names of their streams; images, tar and compressed files by their
magic numbers; e-mail by its header block.
"""

from __future__ import annotations

import io
import logging
import zipfile
import zlib
from pathlib import Path

from engine.errors import ExtractionError, NotRegularFileError
from engine.safe_open import open_regular

log = logging.getLogger(__name__)

ZIP_MAGIC = b"PK\x03\x04"
# Old binary Office files and password-protected OOXML files are OLE compound files.
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
ODT_MIMETYPE = "application/vnd.oasis.opendocument.text"
EPUB_MIMETYPE = "application/epub+zip"
MIMETYPE_FORMATS = {
    ODT_MIMETYPE: "odt",
    "application/vnd.oasis.opendocument.spreadsheet": "ods",
    "application/vnd.oasis.opendocument.presentation": "odp",
    EPUB_MIMETYPE: "epub",
}
# Stream names (UTF-16) that say which kind of OLE file it is.
OLE_STREAMS = (
    ("WordDocument".encode("utf-16-le"), "doc"),
    ("Workbook".encode("utf-16-le"), "xls"),
    ("__substg1.0_".encode("utf-16-le"), "msg"),
)
IMAGE_MAGICS = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"II*\x00", b"MM\x00*", b"BM")
HEAD_BYTES = 8192
MAX_OLE_SNIFF_BYTES = 8 << 20  # stream names sit in the directory, near the start in practice
_HTML_MARKERS = (b"<!doctype html", b"<html")
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")
# What zipfile raises on a damaged archive or member (RuntimeError: encrypted member,
# NotImplementedError: unknown compression method).
_DAMAGED_ZIP = (zipfile.BadZipFile, OSError, KeyError, EOFError, ValueError, RuntimeError,
                NotImplementedError, zlib.error)


def is_pdf(data: bytes) -> bool:
    """PDF readers accept the header anywhere in the first KiB, so do we."""
    return b"%PDF-" in data[:1024]


def is_html(head: bytes) -> bool:
    """True when the text starts (after BOM, blanks and XML prolog) like an HTML page."""
    for bom in _BOMS:
        head = head.removeprefix(bom)
    head = head[:1024].lstrip().lower()
    if head.startswith(b"<?xml"):
        head = head[head.find(b"?>") + 2 :].lstrip()
    while head.startswith(b"<!--"):
        end = head.find(b"-->")
        if end < 0:
            return False
        head = head[end + 3 :].lstrip()
    return head.startswith(_HTML_MARKERS)


def zip_format(zf: zipfile.ZipFile) -> str:
    """'docx', 'xlsx', 'pptx', 'odt', 'ods', 'odp' or 'epub' for an office or book file,
    'zip' for any other zip archive."""
    names = set(zf.namelist())
    if "[Content_Types].xml" in names:
        for folder, fmt in (("word/", "docx"), ("xl/", "xlsx"), ("ppt/", "pptx")):
            if any(n.startswith(folder) for n in names):
                return fmt
    if "mimetype" in names:
        with zf.open("mimetype") as member:  # read(): a bomb hidden in "mimetype" would unpack whole
            mimetype = member.read(100).decode("ascii", "replace").strip()
        if mimetype in MIMETYPE_FORMATS:
            return MIMETYPE_FORMATS[mimetype]
    return "zip"


def ole_format(data: bytes) -> str | None:
    """'doc', 'xls' or 'msg' for an OLE compound file whose streams say so, else None."""
    for stream, fmt in OLE_STREAMS:
        if stream in data:
            return fmt
    return None


def is_image(head: bytes) -> bool:
    return head.startswith(IMAGE_MAGICS) or (head[:4] == b"RIFF" and head[8:12] == b"WEBP")


def binary_format(data: bytes) -> str | None:
    """The format named by magic numbers (images, RTF, tar, compressed, OLE kinds), if any."""
    from engine.extract.archive_file import is_compressed, is_tar

    if is_image(data[:16]):
        return "image"
    if data[:64].lstrip()[:5] == b"{\\rtf":
        return "rtf"
    if is_tar(data):
        return "tar"
    if is_compressed(data):
        return "compressed"
    if data.startswith(OLE_MAGIC):
        return ole_format(data)
    return None


def sniff_bytes(data: bytes) -> str | None:
    """Format named by the content: 'pdf', 'docx', 'zip', 'image', 'eml', 'html', 'txt'...

    Example: sniff_bytes(b"%PDF-1.7 ...") == "pdf"

    `data` should be the whole file for zip containers (their directory is at the end)
    and OLE files (their stream names can be anywhere); for everything else the first
    few KiB decide. None means binary content we do not read (a damaged zip, an
    executable...).
    """
    if is_pdf(data):
        return "pdf"
    if data.startswith(ZIP_MAGIC):
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                return zip_format(zf)
        except _DAMAGED_ZIP as e:
            log.debug("damaged zip archive: %s", e)
            return None
    if (fmt := binary_format(data)) is not None:
        return fmt
    return text_format(data)


def text_format(data: bytes) -> str | None:
    """'html', 'mbox', 'eml' or 'txt' for text content, None for binary content."""
    head = data[:HEAD_BYTES]
    if is_html(head):
        return "html"
    # Imported here: these modules import this one for the magic numbers.
    from engine.extract.email_file import looks_like_mbox, looks_like_message
    from engine.extract.text_file import looks_like_text

    if not looks_like_text(data):
        return None
    if looks_like_mbox(head):
        return "mbox"
    return "eml" if looks_like_message(head) else "txt"


def sniff_format(path: Path) -> str | None:
    """Format of the file at `path` judged by content alone (see `sniff_bytes`).

    Example: sniff_format(Path("report.txt")) == "pdf"  # a PDF with the wrong name

    Anything but a regular file (folder, FIFO, device) gives None.

    Raises:
        OSError: the file cannot be opened or read.
    """
    path = Path(path)
    try:  # checked on the open descriptor: a FIFO swapped in after a stat cannot block us
        f = open_regular(path)
    except NotRegularFileError:
        return None  # folders, FIFOs and devices are no documents
    except ExtractionError as e:
        raise (e.__cause__ if isinstance(e.__cause__, OSError) else e) from None
    with f:
        head = f.read(HEAD_BYTES)
        if head.startswith(OLE_MAGIC):
            return sniff_bytes(head + f.read(MAX_OLE_SNIFF_BYTES))
        if not head.startswith(ZIP_MAGIC):
            return sniff_bytes(head)
        try:
            with zipfile.ZipFile(f) as zf:
                return zip_format(zf)
        except _DAMAGED_ZIP as e:
            log.debug("damaged zip archive %s: %s", path, e)
            return None
