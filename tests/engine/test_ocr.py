"""OCR of images and scanned PDF pages: read, turned upright, bounded per page and per document.

The pages are rendered here (tests/format_docs.py); tests that need an engine skip
when neither Tesseract nor RapidOCR is installed, and the ones about a missing engine
pretend neither is.
"""

from __future__ import annotations

import struct
import time
import zlib

import pytest
from format_docs import make_png, make_scanned_pdf

import engine.extract.ocr as ocr
from engine.config import ExtractLimits
from engine.errors import DocumentTooLargeError, ExtractionError, ExtractionTimeoutError, MissingToolError
from engine.extract import extract

needs_ocr = pytest.mark.skipif(not ocr.ocr_setup(ExtractLimits()).usable,
                               reason="no OCR engine installed (tesseract or rapidocr)")
def _has_osd() -> bool:
    from engine.extract.ocr.engines import TesseractEngine

    program = ocr.find_tool("tesseract")
    return program is not None and "osd" in TesseractEngine(program).languages


needs_osd = pytest.mark.skipif(not _has_osd(), reason="tesseract with its osd data is not installed")


@needs_ocr
def test_image_text_is_read_and_marked_as_ocr(tmp_path):
    got = extract(make_png(tmp_path / "harbour.png", noise=0.01))
    assert "schooners" in got.text and "winter storm" in got.text
    assert got.format == "image" and got.ocr_pages == (1,) and got.ocr_engine


@needs_osd
def test_a_page_turned_on_its_side_is_read_upright(tmp_path):
    got = extract(make_png(tmp_path / "turned.png", rotate=90))
    assert "schooners" in got.text


@needs_ocr
def test_scanned_pdf_pages_are_read_and_pages_with_text_are_not(tmp_path):
    from pypdf import PdfReader, PdfWriter

    from extract_docs import make_pdf

    scan = make_scanned_pdf(tmp_path / "scan.pdf")
    text_page = make_pdf(tmp_path / "text.pdf", ["A typed page about lighthouses."])
    writer = PdfWriter()
    for source in (text_page, scan):
        for page in PdfReader(source).pages:
            writer.add_page(page)
    with (tmp_path / "mixed.pdf").open("wb") as f:
        writer.write(f)
    got = extract(tmp_path / "mixed.pdf")
    assert got.ocr_pages == (2,)
    assert "lighthouses" in got.text and "schooners" in got.text[got.page_starts[1]:]


def _png_header_only(width: int, height: int) -> bytes:
    """A PNG that declares `width` x `height` pixels but holds one tiny compressed row."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00" * 100)) + chunk(b"IEND", b"")


@needs_ocr
def test_thirty_thousand_pixels_square_image_is_refused_before_decoding(tmp_path):
    path = tmp_path / "huge.png"
    path.write_bytes(_png_header_only(30_000, 30_000))
    started = time.monotonic()
    with pytest.raises(DocumentTooLargeError, match="pixels"):
        extract(path)
    assert time.monotonic() - started < 120  # the worker's start is most of it: nothing is decoded


@needs_ocr
def test_five_hundred_scanned_pages_stop_at_the_document_deadline(tmp_path):
    path = make_scanned_pdf(tmp_path / "book.pdf", pages=500)
    # 30 s for the text layer of 500 pages, then OCR's own deadline: 40 s from the start
    limits = ExtractLimits(max_seconds=30, max_ocr_seconds=40)
    started = time.monotonic()
    with pytest.raises(ExtractionTimeoutError, match="longer than the 40 s limit"):
        extract(path, limits=limits)
    # the deadline, plus at most one page's time limit and the worker's start (a loaded machine)
    assert time.monotonic() - started < 40 + 60 + 60


@needs_ocr
def test_a_page_past_its_time_limit_is_left_out_and_the_worker_replaced(tmp_path, caplog):
    path = make_png(tmp_path / "slow.png")
    with pytest.raises(ExtractionError, match="no text found"):
        extract(path, limits=ExtractLimits(ocr_page_seconds=0.001))
    assert any("stopped after" in r.getMessage() for r in caplog.records)
    assert "schooners" in extract(path).text  # a new worker reads the next request


@needs_ocr
def test_started_ahead_the_worker_reads_the_first_image(tmp_path):
    ocr.shutdown()
    ocr.start(ExtractLimits())
    worker = ocr._workers._worker
    assert worker is not None and worker.process.is_alive()
    assert "schooners" in extract(make_png(tmp_path / "harbour.png")).text
    assert ocr._workers._worker is worker  # the image was read by the worker started ahead
    ocr.shutdown()


def test_no_worker_is_started_ahead_when_ocr_is_off_or_missing(monkeypatch):
    ocr.shutdown()
    ocr.start(ExtractLimits(ocr=False))
    ocr.start(ExtractLimits(ocr_engine="paddle"))
    monkeypatch.setattr(ocr, "find_tool", lambda name: None)
    monkeypatch.setattr(ocr, "rapidocr_installed", lambda: False)
    ocr.start(ExtractLimits())
    assert ocr._workers._worker is None


def test_no_ocr_engine_is_a_skip_naming_tesseract(tmp_path, monkeypatch):
    monkeypatch.setattr(ocr, "find_tool", lambda name: None)
    monkeypatch.setattr(ocr, "rapidocr_installed", lambda: False)
    with pytest.raises(MissingToolError) as caught:
        extract(make_png(tmp_path / "harbour.png"))
    assert caught.value.tool == "tesseract" and "apt-get install tesseract-ocr" in caught.value.reason


def test_ocr_turned_off_skips_images_and_leaves_scans_without_text(tmp_path):
    limits = ExtractLimits(ocr=False)
    with pytest.raises(ExtractionError, match="OCR is turned off"):
        extract(make_png(tmp_path / "harbour.png"), limits=limits)
    with pytest.raises(ExtractionError, match="no text layer"):
        extract(make_scanned_pdf(tmp_path / "scan.pdf"), limits=limits)


@pytest.mark.skipif(not ocr.rapidocr_installed(), reason="rapidocr-onnxruntime is not installed")
def test_rapidocr_reads_a_page_when_chosen(tmp_path):
    got = extract(make_png(tmp_path / "harbour.png", noise=0.01), limits=ExtractLimits(ocr_engine="rapidocr"))
    assert "schooners" in got.text and got.ocr_engine == "RapidOCR PP-OCRv4"


def test_an_unknown_engine_in_the_settings_is_a_typed_error(tmp_path):
    with pytest.raises(ExtractionError, match="unknown OCR engine 'paddle'"):
        extract(make_png(tmp_path / "harbour.png"), limits=ExtractLimits(ocr_engine="paddle"))
