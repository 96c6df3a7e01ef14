"""Which extractor reads a file, and running it with every failure turned into a typed error.

    >>> choose_format(Path("report.txt"), data)     # "pdf": the content says so
    >>> run_guarded(Path("a.pdf"), data, "pdf", budget)

The content decides for binary formats (a PDF named `.txt` is read as a PDF; a `.doc`
that is really RTF is read as RTF); the extension decides among text formats (`.py` is
code, `.srt` subtitles), and a file whose extension names no format is read by what
its content looks like (text, HTML, an e-mail, an mbox).
"""

from __future__ import annotations

import logging
from pathlib import Path

from engine.errors import (
    BabelfindError,
    CorruptDocumentError,
    DocumentTooLargeError,
    ExtractionError,
    UnsupportedFormatError,
)
from engine.extract.base import ExtractedText
from engine.extract.code_file import CODE_EXTENSIONS, SUBTITLE_EXTENSIONS
from engine.extract.limits import Budget
from engine.extract.man_file import MAN_EXTENSIONS, is_man_page
from engine.extract.sniff import OLE_MAGIC, ZIP_MAGIC, sniff_bytes
from engine.extract.text_file import BINARY_REASON

log = logging.getLogger(__name__)

IMAGE_EXTENSIONS = frozenset({".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".bmp", ".gif"})
EXTENSION_FORMATS = {
    ".txt": "txt", ".text": "txt", ".log": "txt", ".md": "md", ".markdown": "md", ".rst": "rst",
    ".csv": "csv", ".tsv": "csv", ".html": "html", ".htm": "html", ".xhtml": "html", ".pdf": "pdf",
    ".docx": "docx", ".odt": "odt", ".epub": "epub", ".po": "po", ".pot": "po",
    ".xlsx": "xlsx", ".xlsm": "xlsx", ".xls": "xls", ".ods": "ods", ".pptx": "pptx", ".odp": "odp",
    ".rtf": "rtf", ".doc": "doc", ".eml": "eml", ".msg": "msg", ".mbox": "mbox", ".mbx": "mbox",
    ".zip": "zip", ".tar": "tar", ".tgz": "compressed", ".tbz2": "compressed", ".txz": "compressed",
    ".gz": "compressed", ".bz2": "compressed", ".xz": "compressed",
    **{ext: "code" for ext in CODE_EXTENSIONS},
    **{ext: "subtitles" for ext in SUBTITLE_EXTENSIONS},
    **{ext: "image" for ext in IMAGE_EXTENSIONS},
    **{ext: "man" for ext in MAN_EXTENSIONS},
}
# Kinds of file a `type:` filter can name instead of listing extensions (type:email). An
# archive has no text of its own (its members have their own types): `path:` finds what it holds.
TYPE_GROUPS = {
    "email": frozenset({"eml", "msg", "mbox", "mbx"}),
    "image": frozenset(e.lstrip(".") for e in IMAGE_EXTENSIONS),
    "spreadsheet": frozenset({"xlsx", "xlsm", "xls", "ods", "csv", "tsv"}),
    "presentation": frozenset({"pptx", "odp"}),
    "code": frozenset(e.lstrip(".") for e in CODE_EXTENSIONS),
    "subtitles": frozenset(e.lstrip(".") for e in SUBTITLE_EXTENSIONS),
    "word": frozenset({"docx", "doc", "odt", "rtf"}),
}
TYPE_ALIASES = {"mail": "email", "sheet": "spreadsheet", "slides": "presentation"}
# Read from their bytes, whatever the name says; the others are text read by extension.
BINARY_FORMATS = frozenset({"pdf", "docx", "odt", "epub", "xlsx", "xls", "ods", "pptx", "odp", "rtf", "doc",
                            "msg", "zip", "tar", "compressed", "image"})
# Zip-based formats: a zip that is none of them, named like one, is a damaged one.
_OFFICE_ZIPS = frozenset({"docx", "odt", "epub", "xlsx", "ods", "pptx", "odp"})
# Binary formats some programs also write as text (Excel "saves" HTML tables as .xls,
# Word RTF or text as .doc; Tcl's message catalogues are .msg source files).
_TEXT_STAND_INS = {"doc": "txt", "xls": "txt", "msg": "code"}


def extension_format(path: Path) -> str | None:
    """Example: extension_format(Path("a.tar.gz")) == "compressed"; None for "LICENSE"."""
    return EXTENSION_FORMATS.get(Path(path).suffix.lower())


def choose_format(path: Path, data: bytes) -> str:
    """The format to read `data` (the file at `path`) as; a typed error when there is none."""
    by_extension = extension_format(path)
    by_content = sniff_bytes(data)
    if by_content in BINARY_FORMATS and not (by_content == "zip" and by_extension in _OFFICE_ZIPS):
        return by_content
    if by_extension == "pdf":
        raise CorruptDocumentError(path, "not a valid PDF file (no %PDF header)")
    if by_extension in BINARY_FORMATS:
        return _claimed_binary(path, data, by_extension, by_content)
    if by_content == "txt" and (by_extension is None or by_extension == "man") and is_man_page(path, data):
        return "man"  # ls.1, dpkg-deb.1.gz's member: roff source, named by its section
    if by_extension is None:
        return _sniffed_format(path, by_content)
    if by_content is None:
        raise ExtractionError(path, BINARY_REASON)
    if by_content == "html" and by_extension == "txt":
        return "html"
    return by_extension


def _claimed_binary(path: Path, data: bytes, by_extension: str, by_content: str | None) -> str:
    """A name that promises a binary format the content does not show."""
    if data.startswith((ZIP_MAGIC, OLE_MAGIC)):
        return by_extension  # its extractor explains: encrypted, old format, damaged archive
    if by_content in ("txt", "html", "eml") and by_extension in _TEXT_STAND_INS:
        return "html" if by_content == "html" else _TEXT_STAND_INS[by_extension]
    if by_extension in _OFFICE_ZIPS:
        raise CorruptDocumentError(path, f"not a valid {by_extension.upper()} file (not a zip archive)")
    raise CorruptDocumentError(path, f"not a valid {Path(path).suffix.lstrip('.').upper()} file "
                                     f"(its content is {_describe(by_content)})")


def _describe(fmt: str | None) -> str:
    return {None: "binary data of another kind", "txt": "text", "html": "HTML"}.get(fmt, f"{fmt} data")


def _sniffed_format(path: Path, by_content: str | None) -> str:
    """A file whose name says nothing we know (LICENSE, corpus.de, a Maildir message)."""
    if by_content in ("txt", "html", "eml", "mbox"):
        return by_content
    raise UnsupportedFormatError(path, unsupported_reason(path))


def unsupported_reason(path: Path) -> str:
    """Why a file with an unknown extension and no text content is not read.

    Example: unsupported_reason(Path("messages.mo")) == "not a supported format: .mo"
    """
    if Path(path).suffix:
        return f"not a supported format: {Path(path).suffix.lower()}"
    return "not a supported format: binary content, no extension"


# format -> (module, function, whether it takes the budget)
_EXTRACTORS = {
    "po": ("po_file", "extract_po_file", False),
    "html": ("html_file", "extract_html_file", False),
    "code": ("code_file", "extract_code_file", False),
    "subtitles": ("code_file", "extract_subtitles", False),
    "pdf": ("pdf_file", "extract_pdf", True),
    "docx": ("docx_file", "extract_docx", True),
    "odt": ("odt_file", "extract_odt", True),
    "epub": ("epub_file", "extract_epub", True),
    "xlsx": ("sheet_file", "extract_xlsx", True),
    "xls": ("sheet_file", "extract_xls", True),
    "ods": ("sheet_file", "extract_ods", True),
    "pptx": ("slides_file", "extract_pptx", True),
    "odp": ("slides_file", "extract_odp", True),
    "rtf": ("rtf_file", "extract_rtf", True),
    "doc": ("word97_file", "extract_doc", True),
    "eml": ("email_file", "extract_eml", True),
    "msg": ("email_file", "extract_msg_file", True),
    "image": ("image_file", "extract_image", True),
    "man": ("man_file", "extract_man_page", False),
}
TEXT_FORMATS = frozenset({"txt", "md", "rst", "csv"})


def _run_extractor(path: Path, data: bytes, fmt: str, budget: Budget) -> ExtractedText:
    if fmt in TEXT_FORMATS:
        from engine.extract.text_file import extract_text_file

        return extract_text_file(path, data, fmt)
    if fmt in ("zip", "tar", "compressed", "mbox"):
        return ExtractedText(text="", format=fmt)  # members only (engine.extract.tree)
    module_name, function, takes_budget = _EXTRACTORS[fmt]
    # Imported on use: each module pulls in its own parsing library.
    import importlib

    module = importlib.import_module(f"engine.extract.{module_name}")
    extractor = getattr(module, function)
    return extractor(path, data, budget) if takes_budget else extractor(path, data)


OUT_OF_MEMORY = "too large to read: ran out of memory"


def run_guarded(path: Path, data: bytes, fmt: str, budget: Budget) -> ExtractedText:
    """`_run_extractor`, with whatever a parsing library raises turned into a typed error.

    Fuzzing found ValueError, TypeError, IndexError, AssertionError, zlib.error,
    LookupError, lxml's ParserError and more escaping pypdf, python-docx, odfpy and
    ebooklib on damaged files. A damaged file is the file's fault, so it becomes a
    CorruptDocumentError for that file; the traceback goes to the log, where a bug of
    ours would still show.
    """
    try:
        return _run_extractor(path, data, fmt, budget)
    except BabelfindError:
        raise
    except MemoryError as e:
        raise DocumentTooLargeError(path, OUT_OF_MEMORY) from e
    except RecursionError as e:
        raise CorruptDocumentError(path, f"damaged {fmt.upper()} file (nested too deeply)") from e
    except Exception as e:  # noqa: BLE001 -- see the docstring
        # INFO, not WARNING: the skip reason already tells the user; the log file keeps the trace.
        log.info("%s: %s parser failed", path, fmt, exc_info=True)
        raise CorruptDocumentError(path, f"damaged or unreadable {fmt.upper()} file ({short_error(e)})") from e


def short_error(error: BaseException) -> str:
    """The exception's type and message, cut to 120 characters for a skip reason."""
    text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    return text if len(text) <= 120 else text[:117] + "..."
