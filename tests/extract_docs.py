"""Documents written with the libraries that read them, for the extraction tests.

fpdf2 and pypdf, python-docx, odfpy and ebooklib write each file, so a test states
exactly what the file holds.
"""

from __future__ import annotations

from pathlib import Path

PAGES = [
    "First page talks about honey bees and their hives.",
    "Second page is about glaciers retreating in the Alps.",
    "Third page explains sourdough bread and long fermentation.",
]


def make_pdf(path: Path, pages: list[str]) -> Path:
    """A PDF with one page per string (core Helvetica, so ASCII text only)."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for text in pages:
        pdf.add_page()
        if text:
            pdf.multi_cell(0, 8, text)
    pdf.output(str(path))
    return path


def encrypt_pdf(source: Path, target: Path, user_password: str, owner_password: str) -> Path:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(source))
    writer.encrypt(user_password=user_password, owner_password=owner_password, algorithm="AES-256")
    with target.open("wb") as f:
        writer.write(f)
    return target


def make_docx(path: Path) -> Path:
    import docx

    doc = docx.Document()
    doc.core_properties.title = "Venetian glass"
    doc.add_heading("Glass of Murano", level=1)
    doc.add_paragraph("Furnaces moved to the island in 1291.")
    table = doc.add_table(rows=2, cols=2)
    for r, row in enumerate([("Technique", "Century"), ("Cristallo", "fifteenth")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    doc.add_paragraph("Millefiori   canes are   sliced.")
    doc.save(path)
    return path


def make_odt(path: Path) -> Path:
    from odf import dc
    from odf.opendocument import OpenDocumentText
    from odf.text import H, P

    doc = OpenDocumentText()
    doc.meta.addElement(dc.Title(text="Tea notes"))
    doc.text.addElement(H(outlinelevel=1, text="Green tea"))
    doc.text.addElement(P(text="Leaves are steamed or pan-fired soon after picking."))
    doc.text.addElement(P(text="Oolong is partly oxidised."))
    doc.save(str(path))
    return path


def make_epub(path: Path) -> Path:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("test-book")
    book.set_title("Railway book")
    book.set_language("en")
    chapters = []
    # Spine order deliberately differs from the order items are added.
    for name, body in [
        ("b", "<h1>Chapter Two</h1><p>The line reaches Vladivostok.</p>"),
        ("a", "<h1>Chapter One</h1><script>x()</script><p>The line leaves Moscow.</p>"),
    ]:
        chapter = epub.EpubHtml(title=name, file_name=f"{name}.xhtml", lang="en")
        chapter.content = f"<html><body>{body}</body></html>"
        book.add_item(chapter)
        chapters.append(chapter)
    book.toc = chapters
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = [chapters[1], chapters[0]]
    epub.write_epub(str(path), book)
    return path
