"""Rebuild resources/sample/ from the source texts beside this script.

Usage: python resources/sample_src/make_sample.py

Text, Markdown and HTML sources are copied as they are; `*_fr.txt` becomes a PDF
(fpdf2, one page per `---page---` block, DejaVu Sans embedded for the accents) and
`*_it.txt` becomes a DOCX (python-docx; `| a | b |` lines become a table). Dates are
fixed so a rebuild only changes the files when their text changes.
"""

from __future__ import annotations

import datetime as dt
import logging
import shutil
from pathlib import Path

log = logging.getLogger("make_sample")

SOURCE_DIR = Path(__file__).resolve().parent
SAMPLE_DIR = SOURCE_DIR.parent / "sample"
COPIED = ("beekeeping_en.md", "gletscher_de.txt", "qhapaq_nan_es.html", "cha_zh.txt",
          "transsib_ru.txt", "onsen_ja.md", "polders_nl.txt")
PDF_SOURCE = "pain_au_levain_fr.txt"
DOCX_SOURCE = "vetro_murano_it.txt"
FIXED_DATE = dt.datetime(2024, 5, 1, 12, 0, tzinfo=dt.timezone.utc)
FONT_DIRS = (Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/dejavu"), Path("/usr/share/fonts/TTF"))
PAGE_BREAK = "---page---"


def blocks(source: str) -> list[str]:
    """Blank-line separated blocks of a source text."""
    return [b.strip() for b in source.split("\n\n") if b.strip()]


def find_font(name: str) -> Path:
    for folder in FONT_DIRS:
        if (folder / name).is_file():
            return folder / name
    raise SystemExit(f"{name} not found in {', '.join(map(str, FONT_DIRS))}; install fonts-dejavu-core")


def make_pdf(source: Path, target: Path) -> None:
    from fpdf import FPDF

    text_blocks = blocks(source.read_text(encoding="utf-8"))
    pdf = FPDF(format="A4")
    pdf.set_creation_date(FIXED_DATE)
    pdf.set_title(text_blocks[0].removeprefix("# "))
    pdf.set_lang("fr")
    pdf.add_font("DejaVu", "", str(find_font("DejaVuSans.ttf")))
    pdf.add_font("DejaVu", "B", str(find_font("DejaVuSans-Bold.ttf")))
    pdf.add_page()
    for block in text_blocks:
        if block == PAGE_BREAK:
            pdf.add_page()
        elif block.startswith("# "):
            pdf.set_font("DejaVu", "B", 16)
            pdf.multi_cell(0, 10, block[2:], new_x="LMARGIN", new_y="NEXT")
            pdf.ln(3)
        else:
            pdf.set_font("DejaVu", "", 11)
            pdf.multi_cell(0, 6.5, " ".join(block.split()), new_x="LMARGIN", new_y="NEXT")
            pdf.ln(4)
    pdf.output(str(target))


def make_docx(source: Path, target: Path) -> None:
    import docx

    text_blocks = blocks(source.read_text(encoding="utf-8"))
    doc = docx.Document()
    props = doc.core_properties
    props.title = text_blocks[0].removeprefix("# ")
    props.language = "it"
    props.author = "Babelfind sample corpus"
    props.created = props.modified = FIXED_DATE.replace(tzinfo=None)
    for block in text_blocks:
        if block.startswith("# "):
            doc.add_heading(block[2:], level=1)
        elif block.startswith("|"):
            rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in block.splitlines()]
            table = doc.add_table(rows=len(rows), cols=len(rows[0]))
            table.style = "Table Grid"
            for r, row in enumerate(rows):
                for c, value in enumerate(row):
                    table.cell(r, c).text = value
        else:
            doc.add_paragraph(" ".join(block.split()))
    doc.save(target)


def build(target: Path) -> None:
    """Write the whole sample corpus into `target`."""
    target.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        shutil.copyfile(SOURCE_DIR / name, target / name)
    make_pdf(SOURCE_DIR / PDF_SOURCE, target / PDF_SOURCE.replace(".txt", ".pdf"))
    make_docx(SOURCE_DIR / DOCX_SOURCE, target / DOCX_SOURCE.replace(".txt", ".docx"))


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(message)s")  # fontTools is chatty at INFO
    log.setLevel(logging.INFO)
    build(SAMPLE_DIR)
    for path in sorted(SAMPLE_DIR.iterdir()):
        log.info("%-24s %7d bytes", path.name, path.stat().st_size)


if __name__ == "__main__":
    main()
