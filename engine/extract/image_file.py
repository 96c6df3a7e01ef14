"""Images (.png .jpg .tif .webp .bmp .gif) read by OCR; a multi-page TIFF gives one page per frame.

    >>> extract_image(Path("receipt.jpg"), data).ocr_engine
    'tesseract 5.3.0 (eng)'
"""

from __future__ import annotations

from pathlib import Path

from engine.errors import ExtractionError
from engine.extract.base import ExtractedText, join_pages, normalise_whitespace
from engine.extract.limits import Budget
from engine.extract.ocr import check_ocr, read_pages


def extract_image(path: Path, data: bytes, budget: Budget | None = None) -> ExtractedText:
    """The text OCR finds in an image; ExtractionError when it finds none (a photo).

    Raises:
        UnsupportedFormatError: OCR is turned off, or (MissingToolError) no engine is installed.
        DocumentTooLargeError: more pixels than `max_image_pixels`, refused before decoding.
    """
    budget = budget or Budget.start(path)
    setup = check_ocr(path, budget.limits, "an image")
    result = read_pages(path, "image", data, budget, setup=setup)
    pages = [normalise_whitespace(result.texts.get(n, "")) for n in range(1, result.page_count + 1)]
    for page in pages:
        budget.add_text(page)
    text, starts = join_pages(pages)
    if not text:
        raise ExtractionError(path, "no text found in the image (OCR)")
    return ExtractedText(text=text, format="image", page_starts=starts if len(pages) > 1 else (),
                         ocr_pages=tuple(n for n, page in enumerate(pages, start=1) if page),
                         ocr_engine=result.engine)
