"""The OCR engines as the worker process runs them: Tesseract (a program) and RapidOCR (ONNX).

    >>> TesseractEngine(find_tool("tesseract")).read(image)      # "Text of the page ..."
    >>> RapidEngine().read(image)

Tesseract reads ~100 languages, one traineddata file each; its orientation and script
detection (OSD) says how a page is turned and in which script it is written, and the
page is then read with the installed languages of that script. RapidOCR (PP-OCRv4,
run by ONNX Runtime) reads Chinese and English only, and reads noisy Chinese scans far
better (docs/benchmarks.md). Both run here, in the OCR worker process: OpenCV, which
RapidOCR needs, changes Qt's plugin path when imported, and a crash or a hang in
any of these stays in the worker (engine.extract.ocr).
"""

from __future__ import annotations

import io
import re
import subprocess
from dataclasses import dataclass

# Tesseract's OSD script names -> language packs for them, the most used first.
SCRIPT_LANGUAGES = {
    "Latin": ("eng", "deu", "fra", "spa", "ita", "por", "nld", "pol", "swe", "tur", "ces", "vie", "ind"),
    "Cyrillic": ("rus", "ukr", "bul", "srp", "bel", "mkd", "kaz"),
    "Greek": ("ell",),
    "Arabic": ("ara", "fas", "urd"),
    "Hebrew": ("heb",),
    "Devanagari": ("hin", "mar", "nep", "san"),
    "Bengali": ("ben",),
    "Han": ("chi_sim", "chi_tra"),
    "Japanese": ("jpn",),
    "Katakana": ("jpn",),
    "Hiragana": ("jpn",),
    "Hangul": ("kor",),
    "Thai": ("tha",),
    "Georgian": ("kat",),
    "Armenian": ("hye",),
    "Tamil": ("tam",),
}
# Languages read together in one pass for one script; more slows Tesseract and confuses it.
LANGUAGES_PER_PASS = 3
OSD_MAX_SIDE = 1600  # OSD reads a page as well from a smaller copy, and faster
_OSD_FIELD = re.compile(r"^(Rotate|Script|Orientation confidence|Script confidence):\s*(\S+)", re.MULTILINE)


@dataclass(frozen=True)
class Orientation:
    rotate: int  # degrees clockwise that make the page upright
    script: str | None


class OcrFailed(Exception):
    """An engine could not read the image (its message says why)."""


def _png(image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


class TesseractEngine:
    """Tesseract through its command line, one process per pass, each with a timeout."""

    name = "tesseract"

    def __init__(self, program: str, timeout: float = 60.0):
        self.program = program
        self.timeout = timeout
        self.languages = self._installed_languages()

    def _run(self, args: list[str], image_png: bytes) -> str:
        try:
            done = subprocess.run([self.program, "stdin", "stdout", *args], input=image_png, capture_output=True,
                                  timeout=self.timeout, env=_environment())
        except subprocess.TimeoutExpired as e:
            raise OcrFailed(f"tesseract took longer than {self.timeout:g} s") from e
        if done.returncode != 0:
            raise OcrFailed(done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or "tesseract failed")
        return done.stdout.decode("utf-8", "replace")

    def _installed_languages(self) -> list[str]:
        try:
            done = subprocess.run([self.program, "--list-langs"], capture_output=True, timeout=30, env=_environment())
        except (OSError, subprocess.SubprocessError):
            return []
        lines = done.stdout.decode("utf-8", "replace").splitlines()
        return [line.strip() for line in lines[1:] if line.strip()]

    def orientation(self, image) -> Orientation | None:
        """How the page is turned and its script, by Tesseract's OSD; None when it cannot tell."""
        if "osd" not in self.languages:
            return None
        small = image.copy()
        small.thumbnail((OSD_MAX_SIDE, OSD_MAX_SIDE))
        try:
            out = self._run(["--psm", "0", "-l", "osd"], _png(small))
        except OcrFailed:
            return None  # too few characters to tell: read it as it is
        fields = dict(_OSD_FIELD.findall(out))
        try:
            rotate = int(fields.get("Rotate", "0")) % 360
            confident = float(fields.get("Orientation confidence", "0")) >= 1.0
        except ValueError:
            return None
        return Orientation(rotate if confident else 0, fields.get("Script"))

    def languages_for(self, script: str | None) -> list[str]:
        wanted = SCRIPT_LANGUAGES.get(script or "Latin", ())
        chosen = [lang for lang in wanted if lang in self.languages][:LANGUAGES_PER_PASS]
        if not chosen:
            chosen = [lang for lang in ("eng",) if lang in self.languages] or self.languages[:1]
        return chosen

    def read(self, image, script: str | None = None) -> str:
        languages = self.languages_for(script)
        return self._run(["--psm", "3", "-l", "+".join(languages)], _png(image))


class RapidEngine:
    """RapidOCR's PP-OCRv4 models (Chinese and English) through ONNX Runtime."""

    name = "rapidocr"

    def __init__(self, threads: int = 2):
        from rapidocr_onnxruntime import RapidOCR

        self._ocr = RapidOCR(intra_op_num_threads=threads, inter_op_num_threads=1)

    def read(self, image, script: str | None = None) -> str:
        import numpy as np

        # Its 0/180 degree line classifier turned whole lines of clean Latin pages upside
        # down (CER 0.22 with it, 0.002 without, docs/benchmarks.md); pages are turned
        # upright by Tesseract's OSD before they get here.
        result, _elapsed = self._ocr(np.asarray(image.convert("RGB")), use_cls=False)
        return _lines_in_reading_order(result or [])


def _lines_in_reading_order(boxes: list) -> str:
    """RapidOCR's text boxes as lines: boxes whose vertical middles are close share a line."""
    items = []
    for corners, text, _score in boxes:
        ys = [p[1] for p in corners]
        xs = [p[0] for p in corners]
        items.append(((min(ys) + max(ys)) / 2, max(ys) - min(ys), min(xs), text))
    items.sort()
    lines: list[list[tuple[float, str]]] = []
    last_middle, last_height = None, 0.0
    for middle, height, left, text in items:
        if last_middle is not None and abs(middle - last_middle) <= max(height, last_height) / 2:
            lines[-1].append((left, text))
        else:
            lines.append([(left, text)])
            last_middle, last_height = middle, height
    return "\n".join(" ".join(t for _, t in sorted(line)) for line in lines)


def _environment() -> dict[str, str]:
    import os

    env = dict(os.environ)
    env.update(OMP_THREAD_LIMIT="1", LC_ALL="C.UTF-8")
    return env
