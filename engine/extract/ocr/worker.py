"""The OCR worker process: decodes images, renders PDF pages, runs the engines.

It answers requests on a multiprocessing connection, one at a time:

    {"op": "open", "kind": "image" | "pdf", "data": bytes}  -> {"pages": n}
    {"op": "page", "page": 1}                              -> {"text": str, "engine": str}
    anything wrong                                         -> {"error": str, "kind": str}

Everything that decodes untrusted images (Pillow, PDFium) or may hang (an engine on a
hostile page) runs here, so the parent can kill it past a page's time limit and a
crash ends this process, not the application.
"""

from __future__ import annotations

import logging
import os
import traceback

MAX_SIDE = 5000  # pixels; larger pages are scaled down (A4 at 400 dpi is 3,300 x 4,700)
RENDER_DPI = 300


class _Refused(Exception):
    def __init__(self, kind: str, message: str):
        self.kind = kind
        super().__init__(message)


class _Pages:
    """The pages of the opened document: an image's frames or a PDF's pages."""

    def __init__(self, kind: str, data: bytes, max_pixels: int):
        self.kind = kind
        self.max_pixels = max_pixels
        if kind == "pdf":
            import pypdfium2

            self.pdf = pypdfium2.PdfDocument(data)
            self.count = len(self.pdf)
        else:
            self.image = _open_image(data, max_pixels)
            self.count = getattr(self.image, "n_frames", 1)

    def image_of(self, number: int):
        from PIL import ImageOps

        if self.kind == "pdf":
            page = self.pdf[number - 1]
            width, height = page.get_size()  # points
            scale = min(RENDER_DPI / 72, MAX_SIDE / max(width, height, 1))
            if width * height * scale * scale > self.max_pixels:
                raise _Refused("too_large", f"page {number} would render to more than {self.max_pixels:,} pixels")
            return page.render(scale=scale, grayscale=True).to_pil()
        self.image.seek(number - 1)
        frame = ImageOps.exif_transpose(self.image.convert("L")) if number == 1 else self.image.convert("L")
        frame.thumbnail((MAX_SIDE, MAX_SIDE))
        return frame


def _open_image(data: bytes, max_pixels: int):
    import io

    from PIL import Image

    Image.MAX_IMAGE_PIXELS = max_pixels  # Pillow itself refuses larger ones before decoding
    try:
        image = Image.open(io.BytesIO(data))
    except Image.DecompressionBombError as e:
        raise _Refused("too_large", str(e)) from e
    except (OSError, ValueError, SyntaxError) as e:
        raise _Refused("corrupt", f"{type(e).__name__}: {e}") from e
    width, height = image.size
    if width * height > max_pixels:
        raise _Refused("too_large", f"{width:,} x {height:,} pixels, over the limit of {max_pixels:,}")
    return image


class _Reader:
    """Chooses the engine for each page (engine.extract.ocr explains "auto").

    Tesseract's OSD turns every page upright first when Tesseract is installed, whichever
    engine then reads it: RapidOCR alone cannot read a page turned on its side.
    """

    def __init__(self, policy: str, tesseract: str | None, rapid: bool):
        from engine.extract.ocr.engines import RapidEngine, TesseractEngine

        self.policy = policy
        self.osd = TesseractEngine(tesseract) if tesseract else None
        self.tesseract = self.osd if policy in ("auto", "tesseract") else None
        self.rapid_available = rapid and policy in ("auto", "rapidocr")
        self._rapid = None
        self._rapid_class = RapidEngine
        self.tesseract_version = _tesseract_version(tesseract) if self.tesseract else None

    def rapid(self):
        if self._rapid is None:
            self._rapid = self._rapid_class()
        return self._rapid

    def read(self, image) -> tuple[str, str]:
        from PIL import Image

        orientation = self.osd.orientation(image) if self.osd else None
        if orientation and orientation.rotate:
            image = image.rotate(-orientation.rotate, expand=True, fillcolor=255, resample=Image.BICUBIC)
        script = orientation.script if orientation else None
        # RapidOCR for Chinese (Tesseract's chi_sim misreads noisy scans: CER 0.47 against
        # 0.12) and when there is no Tesseract; not for Japanese, which its models cannot read.
        if self.rapid_available and (self.tesseract is None or script == "Han"):
            return self.rapid().read(image), "RapidOCR PP-OCRv4"
        languages = self.tesseract.languages_for(script)
        return self.tesseract.read(image, script), f"{self.tesseract_version} ({'+'.join(languages)})"


def _tesseract_version(program: str) -> str:
    import subprocess

    try:
        done = subprocess.run([program, "--version"], capture_output=True, timeout=30)
        first = (done.stdout or done.stderr).decode("utf-8", "replace").splitlines()
        return first[0].strip() if first else "tesseract"
    except (OSError, subprocess.SubprocessError):
        return "tesseract"


def serve(connection, policy: str, tesseract: str | None, rapid: bool, max_pixels: int) -> None:
    """The worker's main loop; returns when the parent closes the connection."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    logging.basicConfig(level=logging.WARNING)
    reader = None
    pages = None
    while True:
        try:
            request = connection.recv()
        except EOFError:
            return
        try:
            if request["op"] == "start":  # ready for the first page before it comes
                reader = reader or _Reader(policy, tesseract, rapid)
                import PIL.Image  # noqa: F401 -- imported here, not on the first page's time
                reply = {}
            elif request["op"] == "open":
                reader = reader or _Reader(policy, tesseract, rapid)  # here: its start is not a page's time
                pages = _Pages(request["kind"], request["data"], max_pixels)
                reply = {"pages": pages.count}
            else:
                text, engine = reader.read(pages.image_of(request["page"]))
                reply = {"text": text, "engine": engine}
        except _Refused as e:
            reply = {"error": str(e), "kind": e.kind}
        except Exception as e:  # noqa: BLE001 -- the parent turns it into a typed error
            reply = {"error": f"{type(e).__name__}: {e}", "kind": "corrupt", "trace": traceback.format_exc()}
        connection.send(reply)
