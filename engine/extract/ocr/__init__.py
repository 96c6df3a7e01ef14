"""OCR for images and PDF pages without a text layer, bounded per page, in a worker process.

    >>> result = read_pages(Path("scan.pdf"), "pdf", data, budget, pages=[2, 3])
    >>> result.texts[2], result.engine          # ("Text of page two ...", "tesseract 5.3.0 (eng)")

Engines (engine.extract.ocr.engines): Tesseract, a program from the system's packages
(`tesseract-ocr` and one `tesseract-ocr-LANG` per language), and RapidOCR, a Python
package (`pip install 'babelfind[ocr]'`) that reads Chinese and English. "auto" (the
default) lets Tesseract's orientation and script detection turn each page upright
and pick the languages installed for its script, and hands Chinese pages to RapidOCR
when it is installed (it reads noisy Chinese scans far better, docs/benchmarks.md).

Every page is read in one worker process (engine.extract.ocr.worker), started on the
first page (or ahead of it: `start`) and kept for the next ones; a page that takes
longer than `ocr_page_seconds` has its worker killed and counts as empty, and the
document as a whole stops at its deadline (`max_ocr_seconds` for documents that need OCR).
"""

from __future__ import annotations

import atexit
import importlib.util
import logging
import multiprocessing
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from engine.config import ExtractLimits
from engine.errors import CorruptDocumentError, DocumentTooLargeError, MissingToolError, UnsupportedFormatError
from engine.extract.limits import Budget
from engine.extract.tools import find_tool, install_hint

log = logging.getLogger(__name__)

ENGINES = ("auto", "tesseract", "rapidocr")
RAPIDOCR_MODULE = "rapidocr_onnxruntime"
_START_SECONDS = 60.0  # starting the worker and its engines; not counted per page


@dataclass(frozen=True)
class OcrSetup:
    """Which engines a worker may use: the setting, and what is installed."""

    policy: str
    tesseract: str | None
    rapid: bool
    max_pixels: int

    @property
    def usable(self) -> bool:
        return (self.tesseract is not None and self.policy != "rapidocr") or (self.rapid and self.policy != "tesseract")


@dataclass
class OcrResult:
    texts: dict[int, str] = field(default_factory=dict)  # page number -> text read
    engine: str | None = None
    page_count: int = 0


def rapidocr_installed() -> bool:
    return importlib.util.find_spec(RAPIDOCR_MODULE) is not None


def ocr_setup(limits: ExtractLimits) -> OcrSetup:
    return OcrSetup(limits.ocr_engine, find_tool("tesseract"), rapidocr_installed(), limits.max_image_pixels)


def check_ocr(path: Path, limits: ExtractLimits, what: str) -> OcrSetup:
    """The setup to read `path` with; a typed error naming what to do when OCR cannot run."""
    if not limits.ocr:
        raise UnsupportedFormatError(path, f"{what}: OCR is turned off in the settings")
    if limits.ocr_engine not in ENGINES:
        raise UnsupportedFormatError(path, f"{what}: unknown OCR engine {limits.ocr_engine!r} "
                                           f"(choose one of {', '.join(ENGINES)})")
    setup = ocr_setup(limits)
    if not setup.usable:
        raise MissingToolError(path, "tesseract", f"{what} needs OCR: install Tesseract "
                                                  f"({install_hint('tesseract')}) or RapidOCR (pip install "
                                                  f"'babelfind[ocr]')")
    return setup


class _Worker:
    """One OCR worker process and the connection to it."""

    def __init__(self, setup: OcrSetup):
        from engine.extract.ocr.worker import serve

        context = multiprocessing.get_context("spawn")  # no fork of a process that runs Qt or threads
        self.connection, child = context.Pipe()
        self.process = context.Process(target=serve, args=(child, setup.policy, setup.tesseract, setup.rapid,
                                                           setup.max_pixels), daemon=True, name="babelfind-ocr")
        self.process.start()
        child.close()

    def ask(self, request: dict, timeout: float) -> dict | None:
        """The worker's reply, or None when it did not answer in time (it is killed then)."""
        self.connection.send(request)
        if self.connection.poll(max(timeout, 0.05)):
            try:
                return self.connection.recv()
            except EOFError:
                return None
        return None

    def stop(self) -> None:
        self.connection.close()
        self.process.kill()
        self.process.join(5)


class _Workers:
    """The worker of this process, reused between documents, replaced after a kill."""

    def __init__(self):
        self._lock = threading.Lock()
        self._worker: _Worker | None = None
        self._setup: OcrSetup | None = None

    def get(self, setup: OcrSetup) -> _Worker:
        if self._worker is not None and (self._setup != setup or not self._worker.process.is_alive()):
            self.discard()
        if self._worker is None:
            self._worker, self._setup = _Worker(setup), setup
        return self._worker

    def discard(self) -> None:
        if self._worker is not None:
            self._worker.stop()
        self._worker = None

    @property
    def lock(self) -> threading.Lock:
        return self._lock


_workers = _Workers()
atexit.register(_workers.discard)


def read_pages(path: Path, kind: str, data: bytes, budget: Budget, pages: Iterable[int] | None = None,
               *, setup: OcrSetup | None = None) -> OcrResult:
    """OCR text of the `pages` (1-based; None: all) of an image (`kind` "image") or a PDF.

    Raises:
        DocumentTooLargeError: the image, or a rendered page, has more than `max_image_pixels`.
        CorruptDocumentError: the image cannot be decoded.
        ExtractionTimeoutError: the document's deadline passed.
    """
    setup = setup or check_ocr(path, budget.limits, "an image")
    budget.allow_ocr()
    result = OcrResult()
    with _workers.lock:
        result.page_count = _open(path, kind, data, budget, setup)
        for number in range(1, result.page_count + 1) if pages is None else pages:
            budget.check_time()
            text, engine = _read_page(path, kind, data, number, budget, setup)
            result.texts[number] = text
            result.engine = result.engine or engine
    return result


def _open(path: Path, kind: str, data: bytes, budget: Budget, setup: OcrSetup) -> int:
    reply = _workers.get(setup).ask({"op": "open", "kind": kind, "data": data}, _START_SECONDS)
    if reply is None:
        _workers.discard()
        raise CorruptDocumentError(path, f"the OCR worker could not open this {kind}")
    _raise_for(path, reply, kind)
    return min(int(reply["pages"]), budget.limits.max_pages)


def _read_page(path: Path, kind: str, data: bytes, number: int, budget: Budget,
               setup: OcrSetup) -> tuple[str, str | None]:
    """(text, engine) of one page; ("", None) when it failed or ran out of time."""
    left = budget.deadline - time.monotonic()
    timeout = min(budget.limits.ocr_page_seconds, left)
    started = time.monotonic()
    reply = _workers.get(setup).ask({"op": "page", "page": number}, timeout)
    if reply is None:
        log.warning("%s: OCR of page %d stopped after %.0f s; the page is left out", path, number,
                    time.monotonic() - started)
        _workers.discard()
        budget.check_time()
        _open(path, kind, data, budget, setup)  # the next page needs a worker with the document open
        return "", None
    if "error" in reply:
        if reply.get("kind") == "too_large":
            _raise_for(path, reply, kind)
        log.warning("%s: OCR of page %d failed: %s", path, number, reply["error"])
        log.debug("%s", reply.get("trace", ""))
        return "", None
    return reply["text"], reply["engine"]


def _raise_for(path: Path, reply: dict, kind: str) -> None:
    if "error" not in reply:
        return
    if reply.get("kind") == "too_large":
        raise DocumentTooLargeError(path, f"too large to read safely: {reply['error']}")
    raise CorruptDocumentError(path, f"damaged or unreadable {kind} ({reply['error'][:160]})")


def start(limits: ExtractLimits) -> None:
    """Starts this process's OCR worker and its engines now, when the settings allow OCR and
    an engine is installed, so that the first image read does not pay for it (~0.2 s: an
    interpreter spawned, its engines found). A worker that does not start is left for that
    image to report."""
    try:
        setup = check_ocr(Path("."), limits, "OCR")
    except (UnsupportedFormatError, MissingToolError):  # off, or no engine: each image will say so
        return
    with _workers.lock:
        if _workers.get(setup).ask({"op": "start"}, _START_SECONDS) is None:
            _workers.discard()


def shutdown() -> None:
    """Stops the OCR worker (it also stops with the process)."""
    with _workers.lock:
        _workers.discard()
