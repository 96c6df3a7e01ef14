"""Spreadsheets (.xlsx .xlsm .xls .ods): one page per sheet, one line per row.

    >>> extract_xlsx(Path("prices.xlsx"), data).page_labels
    ('Bakery', 'Dairy')

A row is written with the names of the sheet's header row, so that a passage reads
"Product: Rye bread | Price: 3.20 | City: Lyon" and both the value and its column are
found. Every reader streams: openpyxl in read-only mode for Office Open XML, lxml's
iterparse over an ODS's content.xml (repeated rows and cells are never expanded),
xlrd for the old binary .xls (whose grid is capped at 65,536 x 256 by the format).
python-calamine is faster, but it allocates a sheet's whole bounding box at once: an
.xlsx with one cell in A1 and one in XFD1048576 made it abort the process (a 512 GiB
allocation), which no try/except can catch.
"""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from engine.errors import CorruptDocumentError, EncryptedDocumentError
from engine.extract.base import ExtractedText, clean_title, join_pages, normalise_whitespace
from engine.extract.docx_file import checked_office_zip
from engine.extract.limits import Budget

CELL_SEPARATOR = " | "
# Rows read between two looks at the clock.
_ROWS_PER_CHECK = 256
# Empty columns kept between two cells of a row (so values stay under their header);
# a wider gap is closed up.
_MAX_GAP = 256


class _Sheet:
    """The lines of one sheet: its name, then each non-empty row with the header's names."""

    def __init__(self, name: str, budget: Budget):
        self.name = name
        self.budget = budget
        self.header: list[str] | None = None
        self.lines = [name]
        self.rows_seen = 0

    def add_row(self, values: Iterable[object]) -> None:
        cells = [_cell_text(v) for v in values]
        self.rows_seen += 1
        self.budget.check_time()  # a row can hold 16,384 cells
        filled = [c for c in cells if c]
        if not filled:
            return
        self.budget.add_cells(len(filled))
        if self.header is None and len(filled) >= 2 and all(_is_label(c) for c in filled):
            self.header = cells
            self.lines.append(CELL_SEPARATOR.join(filled))
            return
        self.lines.append(CELL_SEPARATOR.join(self._named(cells)))

    def _named(self, cells: list[str]) -> Iterator[str]:
        header = self.header or []
        for column, cell in enumerate(cells):
            if not cell:
                continue
            name = header[column] if column < len(header) else ""
            yield f"{name}: {cell}" if name and name != cell else cell

    def text(self) -> str:
        if len(self.lines) == 1:
            return ""  # an empty sheet adds no page text, not even its name
        text = normalise_whitespace("\n".join(self.lines))
        self.budget.add_text(text)
        return text


def _is_label(text: str) -> bool:
    """A header cell is a short name, not a number or a date."""
    return len(text) <= 80 and not _is_number(text)


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", ""))
        return True
    except ValueError:
        return False


def _cell_text(value: object) -> str:
    """A cell as a person reads it: 3 not 3.0, dates as ISO dates, no line breaks."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    return " ".join(str(value).split())


def _sheets_text(sheets: list[_Sheet], fmt: str, title: str | None = None) -> ExtractedText:
    kept = [(s.name, t) for s in sheets if (t := s.text())]
    text, starts = join_pages([t for _, t in kept])
    return ExtractedText(text=text, format=fmt, page_starts=starts,
                         page_labels=tuple(name for name, _ in kept), title=title)


# -- Office Open XML (.xlsx, .xlsm) ---------------------------------------------------


def extract_xlsx(path: Path, data: bytes, budget: Budget | None = None) -> ExtractedText:
    """Text of an .xlsx/.xlsm workbook; formulas give their last computed value.

    Example: extract_xlsx(Path("a.xlsx"), data).page_labels == ("Bakery",)
    """
    budget = checked_office_zip(path, data, budget, "XLSX")
    from lxml.etree import XMLSyntaxError

    try:
        reader = _open_workbook(data)
        try:
            sheets = [_xlsx_sheet(reader, name, target, budget) for name, target in _sheet_parts(reader)]
            title = clean_title(reader.wb.properties.title) if reader.wb.properties else None
        finally:
            reader.archive.close()
    except (zipfile.BadZipFile, KeyError, ValueError, TypeError, XMLSyntaxError, EOFError) as e:
        raise CorruptDocumentError(path, f"not a valid XLSX file ({e or type(e).__name__})") from e
    return _sheets_text(sheets, "xlsx", title)


def _open_workbook(data: bytes):
    """openpyxl's reader with the workbook's strings, sheet list and styles, no sheet read yet.

    `load_workbook(read_only=True)` reads every sheet once in full just to size it when
    the sheet declares no dimension (10^7 cells: minutes, with no way to stop it), so
    the parts it reads first are read here the same way and each sheet is then
    streamed once, row by row.
    """
    from openpyxl.reader.excel import ExcelReader
    from openpyxl.styles.stylesheet import apply_stylesheet

    reader = ExcelReader(io.BytesIO(data), read_only=True, data_only=True)
    reader.read_manifest()
    reader.read_strings()
    reader.read_workbook()
    reader.read_properties()
    apply_stylesheet(reader.archive, reader.wb)  # number formats tell dates from numbers
    return reader


def _sheet_parts(reader) -> list[tuple[str, str]]:
    """(sheet name, zip member) of every worksheet, in the workbook's order; chart sheets left out."""
    return [(sheet.name, rel.target) for sheet, rel in reader.parser.find_sheets()
            if rel.target in reader.valid_files and "chartsheet" not in rel.Type]


def _xlsx_sheet(reader, name: str, target: str, budget: Budget) -> _Sheet:
    from openpyxl.worksheet._reader import WorkSheetParser

    book = reader.wb
    sheet = _Sheet(name, budget)
    with reader.archive.open(target) as source:
        parser = WorkSheetParser(source, reader.shared_strings, data_only=True, epoch=book.epoch,
                                 date_formats=book._date_formats, timedelta_formats=book._timedelta_formats)
        for _row_number, cells in parser.parse():
            sheet.add_row(_row_values(cells))
    return sheet


def _row_values(cells: list[dict]) -> list[object]:
    """The row's values by column; a cell in column XFD does not make 16,383 empty ones."""
    if not cells:
        return []
    values: list[object] = []
    for cell in cells:
        gap = cell["column"] - 1 - len(values)
        if 0 < gap <= _MAX_GAP:
            values.extend([None] * gap)
        values.append(cell["value"])
    return values


# -- OpenDocument spreadsheet (.ods) ---------------------------------------------------

_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_T = "{%s}" % _TABLE
_CELL_TAGS = (f"{_T}table-cell", f"{_T}covered-table-cell")
# Filled cells written out from one repeated cell: "x" repeated over 16,384 columns
# says nothing more than "x" a few times.
_MAX_REPEATS_SHOWN = 8


def extract_ods(path: Path, data: bytes, budget: Budget | None = None) -> ExtractedText:
    """Text of an .ods workbook, streamed from content.xml.

    Example: extract_ods(Path("a.ods"), data).page_labels == ("Bakery",)
    """
    budget = checked_office_zip(path, data, budget, "ODS", ole_possible=False)
    from lxml import etree

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            if b"encryption-data" in _member(zf, "META-INF/manifest.xml"):
                raise EncryptedDocumentError(path, "encrypted ODS (password protected)")
            with zf.open("content.xml") as content:
                sheets = _ods_sheets(content, budget)
    except KeyError as e:
        raise CorruptDocumentError(path, "not a valid ODS file (no content.xml)") from e
    except (zipfile.BadZipFile, etree.XMLSyntaxError, EOFError, OSError) as e:
        raise CorruptDocumentError(path, f"not a valid ODS file ({e or type(e).__name__})") from e
    return _sheets_text(sheets, "ods")


def _member(zf: zipfile.ZipFile, name: str) -> bytes:
    try:
        return zf.read(name)
    except KeyError:
        return b""


def _ods_sheets(content, budget: Budget) -> list[_Sheet]:
    from lxml import etree

    sheets: list[_Sheet] = []
    # huge_tree off (the default): lxml refuses absurdly deep or large text nodes itself
    for event, element in etree.iterparse(content, events=("start", "end"), tag=(f"{_T}table", f"{_T}table-row")):
        if element.tag == f"{_T}table":
            if event == "start":
                sheets.append(_Sheet(element.get(f"{_T}name") or f"Sheet{len(sheets) + 1}", budget))
            else:
                element.clear()
            continue
        if event != "end" or not sheets:
            continue
        cells = _ods_row(element)
        if any(cells):
            repeats = min(int(element.get(f"{_T}number-rows-repeated") or 1), _MAX_REPEATS_SHOWN)
            for _ in range(repeats):
                sheets[-1].add_row(cells)
        else:
            sheets[-1].rows_seen += 1
            if sheets[-1].rows_seen % _ROWS_PER_CHECK == 0:
                budget.check_time()
        element.clear()  # rows already read hold no memory
    return sheets


def _ods_row(row) -> list[str]:
    """The row's cells; an empty cell repeated 16,384 times is one empty entry."""
    cells: list[str] = []
    for cell in row:
        if cell.tag not in _CELL_TAGS:
            continue
        text = _ods_cell_text(cell)
        repeats = int(cell.get(f"{_T}number-columns-repeated") or 1)
        cells.extend([text] * (min(repeats, _MAX_REPEATS_SHOWN) if text else 1))
    while cells and not cells[-1]:
        cells.pop()
    return cells


def _ods_cell_text(cell) -> str:
    paragraphs = ["".join(p.itertext()) for p in cell.iter(f"{{{_TEXT}}}p")]
    if paragraphs:
        return " ".join(" ".join(paragraphs).split())
    value = cell.get(f"{{{_OFFICE}}}value")  # a number with no displayed text
    return value or ""


# -- old binary Excel (.xls) -------------------------------------------------------------


def extract_xls(path: Path, data: bytes, budget: Budget | None = None) -> ExtractedText:
    """Text of an Excel 97-2003 workbook with xlrd.

    Example: extract_xls(Path("a.xls"), data).format == "xls"
    """
    budget = budget or Budget.start(path)
    import xlrd

    try:
        book = xlrd.open_workbook(file_contents=data, on_demand=True)
    except xlrd.XLRDError as e:
        if "encrypted" in str(e).lower():
            raise EncryptedDocumentError(path, "encrypted XLS (password protected)") from e
        raise CorruptDocumentError(path, f"not a valid XLS file ({e})") from e
    try:
        sheets = []
        for index in range(book.nsheets):
            budget.check_time()
            worksheet = book.sheet_by_index(index)
            sheet = _Sheet(worksheet.name, budget)
            for r in range(worksheet.nrows):
                sheet.add_row(_xls_value(book, cell) for cell in worksheet.row(r))
            sheets.append(sheet)
            book.unload_sheet(index)
    finally:
        book.release_resources()
    return _sheets_text(sheets, "xls")


def _xls_value(book, cell) -> object:
    import xlrd

    if cell.ctype == xlrd.XL_CELL_DATE:
        try:
            return xlrd.xldate.xldate_as_datetime(cell.value, book.datemode)
        except (xlrd.xldate.XLDateError, OverflowError, ValueError):
            return cell.value
    if cell.ctype == xlrd.XL_CELL_BOOLEAN:
        return bool(cell.value)
    if cell.ctype in (xlrd.XL_CELL_ERROR, xlrd.XL_CELL_BLANK, xlrd.XL_CELL_EMPTY):
        return None
    return cell.value
