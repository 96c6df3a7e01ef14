"""Spreadsheets, slides, mail, archives, code and scans, written with the libraries that make them.

openpyxl, odfpy, python-pptx, the standard library's email/mailbox/zipfile/tarfile,
msgforge (Outlook .msg) and Pillow write each file here, so a test states exactly what
it holds. Formats no Python library writes (.doc, .xls) are small files in
tests/fixtures/, made as its README says.
"""

from __future__ import annotations

import io
import mailbox
import tarfile
import zipfile
from email.message import EmailMessage
from email.utils import format_datetime
from datetime import datetime, timezone
from pathlib import Path

from extract_docs import make_docx, make_pdf

FIXTURES = Path(__file__).resolve().parent / "fixtures"
BAKERY_ROWS = [("Product", "Price", "City"), ("Rye bread", 3.2, "Lyon"), ("Croissant", 1.1, "Paris")]
DAIRY_ROWS = [("Cheese", "Region"), ("Comté", "Jura"), ("Roquefort", "Aveyron")]
MESSAGE_DATE = datetime(2021, 3, 14, 9, 30, tzinfo=timezone.utc)


def make_xlsx(path: Path) -> Path:
    import openpyxl

    book = openpyxl.Workbook()
    bakery = book.active
    bakery.title = "Bakery"
    for row in BAKERY_ROWS:
        bakery.append(row)
    dairy = book.create_sheet("Dairy")
    for row in DAIRY_ROWS:
        dairy.append(row)
    book.create_sheet("Empty")
    book.save(path)
    return path


def make_ods(path: Path) -> Path:
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.table import Table, TableCell, TableRow
    from odf.text import P

    doc = OpenDocumentSpreadsheet()
    for name, rows in (("Bakery", BAKERY_ROWS), ("Dairy", DAIRY_ROWS)):
        table = Table(name=name)
        for row in rows:
            table_row = TableRow()
            for value in row:
                cell = TableCell(valuetype="string")
                cell.addElement(P(text=str(value)))
                table_row.addElement(cell)
            table.addElement(table_row)
        doc.spreadsheet.addElement(table)
    doc.save(str(path))
    return path


def make_pptx(path: Path) -> Path:
    import pptx

    deck = pptx.Presentation()
    for title, body, notes in (
        ("Beekeeping basics", "Hives need a queen and thousands of workers.", "Mention the waggle dance."),
        ("Harvest", "Honey is extracted in late summer with a centrifuge.", "Bring a jar of acacia honey."),
    ):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
        slide.notes_slide.notes_text_frame.text = notes
    deck.save(path)
    return path


def make_odp(path: Path) -> Path:
    from odf.draw import Frame, Page, TextBox
    from odf.opendocument import OpenDocumentPresentation
    from odf.presentation import Notes
    from odf.style import MasterPage, PageLayout
    from odf.text import P

    doc = OpenDocumentPresentation()
    layout = PageLayout(name="layout")
    doc.automaticstyles.addElement(layout)
    master = MasterPage(name="master", pagelayoutname=layout)
    doc.masterstyles.addElement(master)
    for name, text, note in (("one", "Glaciers carve valleys.", "Show the Aletsch photo."),
                             ("two", "Moraines mark where the ice stopped.", "Ask about Ice Age maps.")):
        page = Page(name=name, masterpagename=master)
        frame = Frame(width="20cm", height="3cm", x="1cm", y="1cm")
        box = TextBox()
        box.addElement(P(text=text))
        frame.addElement(box)
        page.addElement(frame)
        notes = Notes()
        notes_frame = Frame(width="20cm", height="3cm", x="1cm", y="1cm")
        notes_box = TextBox()
        notes_box.addElement(P(text=note))
        notes_frame.addElement(notes_box)
        notes.addElement(notes_frame)
        page.addElement(notes)
        doc.presentation.addElement(page)
    doc.save(str(path))
    return path


RTF_TEXT = (r"{\rtf1\ansi\deff0{\fonttbl{\f0 Times;}}{\info{\title Lighthouse log}}"
            r"{\pict\pngblip 89504e470d0a1a0a}"
            r"\f0 The keeper lit the lamp at dusk.\par Fog horns sounded all night in caf\'e9 weather.\par}")


def make_rtf(path: Path) -> Path:
    path.write_text(RTF_TEXT, encoding="ascii")
    return path


def message(subject: str, body: str, *, html: str | None = None,
            attachments: list[tuple[str, bytes, str]] = ()) -> EmailMessage:
    mail = EmailMessage()
    mail["Subject"] = subject
    mail["From"] = "Ada Lovelace <ada@example.org>"
    mail["To"] = "Charles Babbage <charles@example.org>"
    mail["Date"] = format_datetime(MESSAGE_DATE)
    mail["Message-ID"] = f"<{abs(hash(subject))}@example.org>"
    mail.set_content(body)
    if html:
        mail.add_alternative(html, subtype="html")
    for name, content, kind in attachments:
        maintype, subtype = kind.split("/")
        mail.add_attachment(content, maintype=maintype, subtype=subtype, filename=name)
    return mail


def make_eml(path: Path, tmp: Path) -> Path:
    """A message about an engine, with a DOCX and a PDF attached."""
    docx = make_docx(tmp / "attached.docx").read_bytes()
    pdf = make_pdf(tmp / "attached.pdf", ["Attached minutes: the analytical engine needs punched cards."]).read_bytes()
    mail = message("Difference engine budget", "The treasury approved the difference engine funds.",
                   attachments=[("glass.docx", docx, "application/vnd.openxmlformats-officedocument"
                                                     ".wordprocessingml.document"),
                                ("minutes.pdf", pdf, "application/pdf")])
    path.write_bytes(mail.as_bytes())
    return path


def make_mbox(path: Path) -> Path:
    box = mailbox.mbox(str(path))
    box.add(message("Lighthouse keepers", "The lighthouse at Eddystone needs a new keeper."))
    box.add(message("Orchard report", "Plain text part.", html="<p>The <b>quince</b> orchard flowered early.</p>"))
    box.flush()
    box.close()
    return path


def make_msg(path: Path) -> Path:
    from msgforge import Message

    mail = Message(subject="Quarterly figures", text_body="Revenue from the Zanzibar spice route doubled.",
                   sender=("finance@example.org", "Finance"), to=[("board@example.org", "Board")],
                   sent=datetime(2022, 6, 1, 12, 0))
    attachment = path.with_name("forecast.txt")
    attachment.write_text("Forecast: cardamom shipments rise in autumn.", encoding="utf-8")
    mail.attach(str(attachment))
    mail.save(str(path))
    attachment.unlink()
    return path


def make_zip(path: Path, tmp: Path) -> Path:
    """inside/report.pdf, notes.txt, and docs.tar.gz holding manual/guide.md."""
    pdf = make_pdf(tmp / "report.pdf", ["Archived report about tidal power stations."]).read_bytes()
    tar = io.BytesIO()
    with tarfile.open(fileobj=tar, mode="w:gz") as archive:
        guide = "# Guide\n\nThe observatory telescope needs nightly calibration.".encode("utf-8")
        info = tarfile.TarInfo("manual/guide.md")
        info.size = len(guide)
        archive.addfile(info, io.BytesIO(guide))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("inside/report.pdf", pdf)
        zf.writestr("notes.txt", "Meeting notes about the saffron harvest.")
        zf.writestr("docs.tar.gz", tar.getvalue())
        zf.writestr("program.bin", b"\x00\x01\x02 binary")
    return path


PYTHON_SOURCE = '''import math


def haversine_distance(lat1, lon1, lat2, lon2):
    """Great-circle distance between two points."""
    return 2 * math.asin(math.sqrt(math.sin((lat2 - lat1) / 2) ** 2))
class GeoPoint:
    pass
'''

SRT_TEXT = """1
00:00:01,000 --> 00:00:04,000
<i>The caravan crossed the desert</i>

2
00:00:05,000 --> 00:00:08,000
under a sky full of stars.
"""


def render_page(lines: list[str], *, size: int = 36, rotate: int = 0, noise: float = 0.0,
                font: str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"):
    """A page image with `lines` of black text on white, optionally rotated and noisy."""
    import random

    from PIL import Image, ImageDraw, ImageFont

    face = ImageFont.truetype(font, size)
    width = 1700
    image = Image.new("L", (width, 120 + int(len(lines) * size * 1.7)), 255)
    draw = ImageDraw.Draw(image)
    for number, line in enumerate(lines):
        draw.text((80, 60 + int(number * size * 1.7)), line, font=face, fill=0)
    if noise:
        rng = random.Random(7)
        pixels = image.load()
        for _ in range(int(image.width * image.height * noise)):
            x, y = rng.randrange(image.width), rng.randrange(image.height)
            pixels[x, y] = 0 if pixels[x, y] > 128 else 255
    if rotate:
        image = image.rotate(rotate, expand=True, fillcolor=255)
    return image


SCAN_LINES = ["The harbour master recorded", "seventeen schooners at anchor", "during the winter storm."]


def make_png(path: Path, lines: list[str] = SCAN_LINES, **options) -> Path:
    render_page(lines, **options).save(path)
    return path


def make_scanned_pdf(path: Path, pages: int = 1, lines: list[str] = SCAN_LINES) -> Path:
    """A PDF whose pages are one image each and have no text layer (fpdf2 embeds the image once)."""
    from fpdf import FPDF

    image = render_page(lines)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    pdf = FPDF()
    for _ in range(pages):
        pdf.add_page()
        pdf.image(buffer, x=10, y=10, w=190)
    pdf.output(str(path))
    return path
