"""OCR accuracy and speed per script: Tesseract and RapidOCR on pages rendered here.

    python bench/bench_ocr.py                       # 8 scripts x 3 variants x each engine
    python bench/bench_ocr.py --scripts latin-en zh --variants clean

Pages: real sentences (PUD news and Wikipedia for en, de, ru, ar, hi and zh, whose PUD
text is traditional Chinese; Tatoeba for el and ja; ../shared/data, or $BABELFIND_SHARED_DATA) set in Noto/DejaVu fonts at 34 px (about 11 pt at 220
dpi), 14 lines to a page. Variants: `clean`; `noisy` (2 % of pixels flipped, a 1.5
degree skew, a Gaussian blur of 0.6 px); `turned` (the clean page turned 90 degrees).
Engines, each through the engine's own worker (engine.extract.ocr), as indexing runs it:

  auto        the default: Tesseract's OSD turns the page and picks the languages
              installed for its script; Han and Japanese pages go to RapidOCR
  tesseract   Tesseract alone (OSD, then the script's languages)
  rapidocr    RapidOCR alone (PP-OCRv4, Chinese and English models)

Character error rate = Levenshtein distance / reference length, on text with all
whitespace removed (line breaks and spacing are layout, not characters), per page,
averaged per script. Pages/s is one page after another on this machine (2 cores,
Tesseract with one thread, RapidOCR with two).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from engine.config import ExtractLimits  # noqa: E402
from engine.extract.limits import Budget  # noqa: E402
from engine.extract.ocr import OcrSetup, ocr_setup, read_pages  # noqa: E402

DATA = Path(os.environ.get("BABELFIND_SHARED_DATA", REPO.parent / "shared" / "data"))
NOTO = Path("/usr/share/fonts/truetype/noto")
CJK = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
# script -> (sentences file, column, font, right to left)
SCRIPTS = {
    "latin-en": ("corpus/pud-parallel/pud.en.tsv", NOTO / "NotoSerif-Regular.ttf", False),
    "latin-de": ("corpus/pud-parallel/pud.de.tsv", NOTO / "NotoSerif-Regular.ttf", False),
    "cyrillic-ru": ("corpus/pud-parallel/pud.ru.tsv", NOTO / "NotoSerif-Regular.ttf", False),
    "greek-el": ("tatoeba/v1/tatoeba.ell-eng.ell", NOTO / "NotoSerif-Regular.ttf", False),
    "arabic-ar": ("corpus/pud-parallel/pud.ar.tsv", NOTO / "NotoNaskhArabic-Regular.ttf", True),
    "devanagari-hi": ("corpus/pud-parallel/pud.hi.tsv", NOTO / "NotoSansDevanagari-Regular.ttf", False),
    "han-zh": ("corpus/pud-parallel/pud.zh.tsv", CJK, False),
    "japanese-ja": ("tatoeba/v1/tatoeba.jpn-eng.jpn", CJK, False),
}
VARIANTS = ("clean", "noisy", "turned")
ENGINES = ("auto", "tesseract", "rapidocr")
LINES_PER_PAGE = 14
WIDTH = 1700
FONT_PX = 34


def sentences(script: str, count: int, seed: int = 3) -> list[str]:
    relative, _font, _rtl = SCRIPTS[script]
    lines = (DATA / relative).read_text(encoding="utf-8").splitlines()
    texts = [line.split("\t", 1)[-1].strip() for line in lines if line.strip()]
    rng = random.Random(seed)
    rng.shuffle(texts)
    return texts[:count]


def wrap(text: str, font, draw, width: int, cjk: bool) -> list[str]:
    """Lines of `text` that fit in `width` pixels: by words, or by characters for CJK."""
    units = list(text) if cjk else text.split()
    lines, current = [], ""
    for unit in units:
        candidate = current + unit if cjk else (current + " " + unit).strip()
        if current and draw.textlength(candidate, font=font) > width:
            lines.append(current)
            current = unit
        else:
            current = candidate
    if current:
        lines.append(current)
    return lines


def render(script: str, page: int):
    """(image, reference text) of one page of `script`."""
    from PIL import Image, ImageDraw, ImageFont

    _relative, font_path, rtl = SCRIPTS[script]
    font = ImageFont.truetype(str(font_path), FONT_PX)
    image = Image.new("L", (WIDTH, 80 + LINES_PER_PAGE * int(FONT_PX * 1.7)), 255)
    draw = ImageDraw.Draw(image)
    cjk = script in ("han-zh", "japanese-ja")
    lines: list[str] = []
    for sentence in sentences(script, 200, seed=page):
        lines += wrap(sentence, font, draw, WIDTH - 160, cjk)
        if len(lines) >= LINES_PER_PAGE:
            break
    lines = lines[:LINES_PER_PAGE]
    for number, line in enumerate(lines):
        y = 40 + number * int(FONT_PX * 1.7)
        if rtl:
            x = WIDTH - 80 - draw.textlength(line, font=font, direction="rtl")
            draw.text((x, y), line, font=font, fill=0, direction="rtl")
        else:
            draw.text((80, y), line, font=font, fill=0)
    return image, "\n".join(lines)


def variant(image, name: str):
    from PIL import ImageFilter

    if name == "clean":
        return image
    if name == "turned":
        return image.rotate(90, expand=True, fillcolor=255)
    rng = random.Random(11)
    noisy = image.rotate(1.5, expand=True, fillcolor=255, resample=3).filter(ImageFilter.GaussianBlur(0.6))
    pixels = noisy.load()
    for _ in range(int(noisy.width * noisy.height * 0.02)):
        x, y = rng.randrange(noisy.width), rng.randrange(noisy.height)
        pixels[x, y] = 255 - pixels[x, y]
    return noisy


def cer(reference: str, hypothesis: str) -> float:
    """Character error rate, whitespace removed from both."""
    ref = "".join(reference.split())
    hyp = "".join(hypothesis.split())
    previous = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        current = [i]
        for j, h in enumerate(hyp, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (r != h)))
        previous = current
    return previous[-1] / max(len(ref), 1)


def run_engine(engine: str, png: bytes) -> tuple[str, str | None, float]:
    limits = ExtractLimits(ocr_engine=engine, ocr_page_seconds=120, max_ocr_seconds=600)
    base = ocr_setup(limits)
    setup = OcrSetup(engine, base.tesseract, base.rapid, base.max_pixels)
    started = time.perf_counter()
    result = read_pages(Path("page.png"), "image", png, Budget.start(Path("page.png"), limits), setup=setup)
    return result.texts.get(1, ""), result.engine, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scripts", nargs="+", default=list(SCRIPTS), choices=list(SCRIPTS))
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    parser.add_argument("--engines", nargs="+", default=list(ENGINES), choices=ENGINES)
    parser.add_argument("--pages", type=int, default=1, help="pages per script and variant")
    parser.add_argument("--json", type=Path, help="write every reading here")
    args = parser.parse_args()
    available = ocr_setup(ExtractLimits())
    engines = [e for e in args.engines if (e != "rapidocr" or available.rapid) and (e == "rapidocr" or available.tesseract)]
    # one warm-up page per engine: the worker's start and the model load are not a page's cost
    warm, _ = render("latin-en", 0)
    buffer = io.BytesIO()
    warm.save(buffer, format="PNG")
    for engine in engines:
        run_engine(engine, buffer.getvalue())
    readings = []
    for script in args.scripts:
        for page in range(args.pages):
            image, reference = render(script, page + 1)
            for name in args.variants:
                buffer = io.BytesIO()
                variant(image, name).save(buffer, format="PNG")
                for engine in engines:
                    text, used, seconds = run_engine(engine, buffer.getvalue())
                    reading = {"script": script, "variant": name, "engine": engine, "used": used,
                               "cer": round(cer(reference, text), 4), "seconds": round(seconds, 2)}
                    readings.append(reading)
                    print(json.dumps(reading, ensure_ascii=False), flush=True)
    if args.json:
        args.json.write_text(json.dumps(readings, indent=1, ensure_ascii=False), encoding="utf-8")
    summarise(readings, engines, args.variants)


def summarise(readings: list[dict], engines: list[str], variants: list[str]) -> None:
    print("\nCER by script (variants " + ", ".join(variants) + "), then pages/s")
    print("| script | " + " | ".join(f"{e} {v}" for e in engines for v in variants) + " |")
    print("|---|" + "---|" * (len(engines) * len(variants)))
    for script in dict.fromkeys(r["script"] for r in readings):
        cells = []
        for engine in engines:
            for name in variants:
                values = [r["cer"] for r in readings if (r["script"], r["engine"], r["variant"]) == (script, engine, name)]
                cells.append(f"{sum(values) / len(values):.3f}" if values else "-")
        print(f"| {script} | " + " | ".join(cells) + " |")
    for engine in engines:
        seconds = [r["seconds"] for r in readings if r["engine"] == engine]
        print(f"{engine}: {len(seconds) / sum(seconds):.2f} pages/s over {len(seconds)} pages")


if __name__ == "__main__":
    main()
