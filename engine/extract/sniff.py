"""Recognise a document's format from its first bytes, whatever its name says.

A PDF saved as `.txt` is still a PDF; a `.docx` that is not a zip archive is damaged.
Zip containers are told apart by their members: `[Content_Types].xml` + `word/` is
DOCX, the stored `mimetype` entry names ODT and EPUB.
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
HEAD_BYTES = 8192
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


def zip_format(zf: zipfile.ZipFile) -> str | None:
    """'docx', 'odt' or 'epub' for a zip container we read, else None."""
    names = set(zf.namelist())
    if "[Content_Types].xml" in names and any(n.startswith("word/") for n in names):
        return "docx"
    if "mimetype" in names:
        with zf.open("mimetype") as member:  # read(): a bomb hidden in "mimetype" would unpack whole
            mimetype = member.read(100).decode("ascii", "replace").strip()
        if mimetype == ODT_MIMETYPE:
            return "odt"
        if mimetype == EPUB_MIMETYPE:
            return "epub"
    return None


def sniff_bytes(data: bytes) -> str | None:
    """Format named by the content: 'pdf', 'docx', 'odt', 'epub', 'html', 'txt' or None.

    Example: sniff_bytes(b"%PDF-1.7 ...") == "pdf"

    `data` should be the whole file for zip containers (their directory is at the end);
    for everything else the first few KiB decide. None means binary content we do not
    read (an unknown or damaged zip, an image, an executable...).
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
    if is_html(data[:HEAD_BYTES]):
        return "html"
    # Imported here: text_file imports this module for the magic numbers.
    from engine.extract.text_file import looks_like_text

    return "txt" if looks_like_text(data) else None


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
        if not head.startswith(ZIP_MAGIC):
            return sniff_bytes(head)
        try:
            with zipfile.ZipFile(f) as zf:
                return zip_format(zf)
        except _DAMAGED_ZIP as e:
            log.debug("damaged zip archive %s: %s", path, e)
            return None
