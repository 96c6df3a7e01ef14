"""Text extraction: every format round trip, encodings, sniffing, page offsets, samples.

Documents come from tests/extract_docs.py, written with the libraries that read them.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from engine.errors import CorruptDocumentError, ExtractionError
from engine.extract import (
    SUPPORTED_EXTENSIONS,
    ExtractedText,
    extract,
    page_of,
    sniff_format,
)
from engine.extract.base import Heading, normalise_whitespace
from engine.extract.html_file import html_to_text, read_html
from engine.extract.markup import strip_markdown, strip_rst
from engine.extract.pdf_file import join_pages
from extract_docs import PAGES, encrypt_pdf, make_docx, make_epub, make_odt, make_pdf

SAMPLE_DIR = Path(__file__).resolve().parents[2] / "resources" / "sample"


# --- formats -------------------------------------------------------------------------


def test_plain_text_whitespace_normalised(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("Line  one\twith   gaps  \r\nline two\r\n\r\n\r\n\r\nNew paragraph.\n", encoding="utf-8")
    got = extract(path)
    assert got == ExtractedText(text="Line one with gaps\nline two\n\nNew paragraph.", format="txt")


def test_markdown_syntax_stripped_and_title_kept(tmp_path):
    path = tmp_path / "bees.md"
    path.write_text(
        "# Keeping *bees*\n\nA **hive** holds [one queen](https://x.org/q).\n\n"
        "* workers\n* drones\n\n```\ncode_stays *as is*\n```\n\nsnake_case_name stays.\n",
        encoding="utf-8",
    )
    got = extract(path)
    assert got.format == "md"
    assert got.title == "Keeping bees"
    assert got.text == (
        "Keeping bees\n\nA hive holds one queen.\n\n- workers\n- drones\n\n"
        "code_stays *as is*\n\nsnake_case_name stays."
    )


def test_rst_adornment_removed(tmp_path):
    path = tmp_path / "doc.rst"
    path.write_text("=======\nGlacier\n=======\n\nIce **flows** downhill. See ``ice``::\n\n.. note:: x\n")
    got = extract(path)
    assert got.title == "Glacier"
    assert got.text == "Glacier\n\nIce flows downhill. See ice:"


def test_csv_is_read_as_text(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("name,place\nBread,Paris\n", encoding="utf-8")
    assert extract(path) == ExtractedText("name,place\nBread,Paris", "csv")


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        ("Crème brûlée – “naïve” façade, déjà vu, Straße, œuvre.\n" * 3, "cp1252"),
        ("Gletscher schmelzen. Größe, Übergänge, Äpfel — und mehr.\n" * 3, "utf-16"),
        ("日本には多くの火山があり、温泉が各地にあります。箱根や別府は有名な温泉地です。\n" * 3, "shift_jis"),
        ("Чай выращивают в горах. Поезд идёт через Сибирь.\n" * 3, "cp1251"),
    ],
)
def test_encoding_detected(tmp_path, text, encoding):
    path = tmp_path / "enc.txt"
    path.write_bytes(text.encode(encoding))  # Python's utf-16 codec writes a BOM
    assert extract(path).text == normalise_whitespace(text)


def test_legacy_encoding_after_a_long_ascii_head(tmp_path):
    # The detection sample sees only ASCII; the cp1252 tail must still decode right.
    ascii_head = "plain ascii words in a long preamble\n" * 20_000  # ~740 KB
    tail = "Le pain doré, la croûte épaisse, « pâtisserie » et œuvre.\n" * 50
    path = tmp_path / "late.txt"
    path.write_bytes((ascii_head + tail).encode("cp1252"))
    got = extract(path).text
    assert got.endswith(normalise_whitespace(tail))
    assert "\ufffd" not in got


def test_utf8_bom_not_in_text(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbfHello")
    assert extract(path).text == "Hello"


def test_html_boilerplate_removed_and_blocks_kept(tmp_path):
    path = tmp_path / "page.html"
    path.write_bytes(
        """<!DOCTYPE html><html><head><meta charset="windows-1252"><title>Inca roads</title>
        <style>p{color:red}</style><script>track('visit')</script></head><body>
        <header><a href="/">Home</a> | <a href="/shop">Shop</a></header>
        <nav><ul><li>Menu item</li></ul></nav>
        <h1>Qhapaq Ñan</h1><p>The road   system spanned
        <b>thousands</b> of kilometres.<br>Runners carried messages.</p>
        <aside>Related posts</aside><form><input name=q>Search</form>
        <p>Rope bridges crossed gorges.</p>
        <noscript>Enable JS</noscript><footer>© 2024 Example</footer></body></html>""".encode("cp1252")
    )
    got = extract(path)
    assert got.format == "html"
    assert got.title == "Inca roads"
    assert got.text == (
        "Qhapaq Ñan\n\nThe road system spanned thousands of kilometres.\n"
        "Runners carried messages.\n\nRope bridges crossed gorges."
    )


def test_html_article_header_kept_and_deep_nesting_ok():
    text, _ = html_to_text("<body><article><header><h2>Kept</h2></header><p>Body</p></article></body>")
    assert text == "Kept\n\nBody"
    webform = "<body><form><h1>Report</h1><p>Whole page in a form.</p></form><form>Search</form></body>"
    assert html_to_text(webform)[0] == "Report\n\nWhole page in a form."
    deep = "<div>" * 5000 + "deep" + "</div>" * 5000  # no recursion limit
    assert html_to_text(deep)[0] == "deep"


def test_html_headings_are_found_at_their_offsets_not_in_the_table_of_contents():
    text, title, headings = read_html(
        "<title>Guide</title><body><ul><li><a href='#c'>4.2. The copyright file</a></li></ul>"
        "<h2>4.1. The   <b>control</b> file</h2><p>Names the package.</p>"
        "<h3> </h3><h3><br>4.2. The copyright file</h3><p>Says who wrote it.</p></body>")
    assert title == "Guide"
    assert [h.text for h in headings] == ["4.1. The control file", "4.2. The copyright file"]
    for heading in headings:
        assert text[heading.start:].startswith(heading.text)
    assert headings[1].start > text.index("Names the package.")  # the heading, not the contents' link
    assert "\ufdd0" not in text and "\n\n\n" not in text


def test_html_heading_mark_in_the_input_is_only_text():
    text, _, headings = read_html("<p>a\ufdd0b</p><h1>Title</h1>")
    assert text == "ab\n\nTitle"
    assert headings == (Heading(4, "Title"),)


def test_pdf_pages_and_offsets(tmp_path):
    got = extract(make_pdf(tmp_path / "three.pdf", PAGES))
    assert got.format == "pdf"
    assert len(got.page_starts) == 3
    for number, page_text in enumerate(PAGES, start=1):
        offset = got.text.index(page_text)
        assert got.page_starts[number - 1] == offset
        assert page_of(got, offset) == number
        assert page_of(got, offset + len(page_text) - 1) == number


def test_pdf_empty_page_maps_to_no_offset(tmp_path):
    got = extract(make_pdf(tmp_path / "gap.pdf", [PAGES[0], "", PAGES[1]]))
    assert got.page_starts[1] == got.page_starts[2] == got.text.index(PAGES[1])
    assert page_of(got, got.text.index(PAGES[1])) == 3


def reference_normalise(text: str) -> str:
    """Slow regex version of normalise_whitespace, the behaviour the fast one must keep."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n\n")
    text = re.sub(r"[^\S\n]+", " ", text)
    text = re.sub(r"[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f]", "", text)
    text = re.sub(r" +", " ", text)
    text = re.sub(r" ?\n ?", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def test_normalise_whitespace_matches_reference():
    rng = random.Random(11)
    alphabet = "ab é字 \t\n\n\r\f\x00\x07\x0b\x1c\x85\x9c\u00a0\u2028\u3000"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert normalise_whitespace(text) == reference_normalise(text), repr(text)


def test_join_pages_reference():
    assert join_pages(["ab", "", "cd"]) == ("ab\n\ncd", (0, 4, 4))
    assert join_pages(["", "ab", ""]) == ("ab", (0, 0, 2))
    assert page_of(ExtractedText("x", "txt"), 0) is None


def test_pdf_with_owner_password_only_is_read(tmp_path):
    plain = make_pdf(tmp_path / "plain.pdf", PAGES[:2])
    locked = encrypt_pdf(plain, tmp_path / "owner.pdf", user_password="", owner_password="owner")
    assert extract(locked).text == extract(plain).text


def _pdf_with_outline(path):
    """Two pages: sections 1 and 1.1 on the first (1.1 halfway down), 2 on the second."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    pdf.add_page()
    pdf.start_section("1 Glassmaking")
    pdf.multi_cell(0, 8, "Glassmaking\nFurnaces moved to the island in 1291.", new_x="LMARGIN", new_y="NEXT")
    pdf.start_section("1.1 Cristallo", level=1)
    pdf.multi_cell(0, 8, "Cristallo\nA clear glass of the fifteenth century.", new_x="LMARGIN", new_y="NEXT")
    pdf.add_page()
    pdf.start_section("2 Lace making")  # not written on its page: the page's start
    pdf.multi_cell(0, 8, "Burano is known for its needle lace.", new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))
    return path


def test_pdf_bookmarks_are_headings_where_their_titles_are_written(tmp_path):
    got = extract(_pdf_with_outline(tmp_path / "glass.pdf"))
    assert [h.text for h in got.headings] == ["1 Glassmaking", "1.1 Cristallo", "2 Lace making"]
    assert [got.text[h.start:].split("\n")[0] for h in got.headings] == [
        "Glassmaking", "Cristallo", "Burano is known for its needle lace."]
    assert got.headings[2].start == got.page_starts[1]


def test_a_bookmark_title_is_found_with_or_without_its_number_and_a_hostile_one_is_not_slow():
    from engine.extract.pdf_file import _title_offset

    page = "Intro text.\n2.6. Recovering data from damaged files\nbzip2recover reads"
    assert _title_offset(page, "2.6 Recovering data from damaged files") == page.index("Recovering")
    assert _title_offset(page, "recovering   DATA") == page.index("Recovering")
    assert _title_offset(page, "Not on this page") == 0
    assert _title_offset(page, "1" * 5000 + "x") == 0  # nested repeats would backtrack for ever


def test_a_pdf_whose_outline_cannot_be_read_keeps_its_text(tmp_path, monkeypatch):
    import pypdf

    def broken(_reader):
        raise pypdf.errors.PdfReadError("bad outline")

    monkeypatch.setattr(pypdf.PdfReader, "outline", property(broken))
    got = extract(_pdf_with_outline(tmp_path / "glass.pdf"))
    assert got.headings == () and "needle lace" in got.text


def test_pdf_without_text_layer(tmp_path):
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.rect(20, 20, 100, 100, style="F")  # a "scan": marks, no text
    pdf.output(str(tmp_path / "scan.pdf"))
    with pytest.raises(ExtractionError, match=r"no text layer \(scanned PDF\?\)"):
        extract(tmp_path / "scan.pdf")


def test_docx_paragraphs_and_tables(tmp_path):
    got = extract(make_docx(tmp_path / "glass.docx"))
    assert got.format == "docx"
    assert got.title == "Venetian glass"
    assert got.text == (
        "Glass of Murano\n\nFurnaces moved to the island in 1291.\n\n"
        "Technique | Century\nCristallo | fifteenth\n\nMillefiori canes are sliced."
    )
    assert got.headings == (Heading(0, "Glass of Murano"),)


def test_odt_round_trip(tmp_path):
    got = extract(make_odt(tmp_path / "tea.odt"))
    assert got == ExtractedText(
        "Green tea\n\nLeaves are steamed or pan-fired soon after picking.\n\nOolong is partly oxidised.",
        "odt",
        title="Tea notes",
        headings=(Heading(0, "Green tea"),),
    )


def test_epub_chapters_in_spine_order(tmp_path):
    got = extract(make_epub(tmp_path / "rail.epub"))
    assert got.format == "epub"
    assert got.title == "Railway book"
    assert got.text.index("Moscow") < got.text.index("Vladivostok")
    assert "x()" not in got.text
    assert got.text.startswith("Chapter One\n\nThe line leaves Moscow.")
    assert [h.text for h in got.headings] == ["Chapter One", "Chapter Two"]
    assert all(got.text[h.start:].startswith(h.text) for h in got.headings)


# --- sniffing --------------------------------------------------------------------------


def test_sniff_formats(tmp_path):
    assert sniff_format(make_pdf(tmp_path / "a.bin", PAGES[:1])) == "pdf"
    assert sniff_format(make_docx(tmp_path / "b.bin")) == "docx"
    assert sniff_format(make_odt(tmp_path / "c.bin")) == "odt"
    assert sniff_format(make_epub(tmp_path / "d.bin")) == "epub"
    (tmp_path / "e.bin").write_text("  <!DOCTYPE html><p>x</p>")
    assert sniff_format(tmp_path / "e.bin") == "html"
    (tmp_path / "f.bin").write_text("plain words")
    assert sniff_format(tmp_path / "f.bin") == "txt"
    (tmp_path / "g.bin").write_bytes(bytes(range(256)) * 4)
    assert sniff_format(tmp_path / "g.bin") is None


def test_pdf_named_txt_is_read_as_pdf(tmp_path):
    got = extract(make_pdf(tmp_path / "notes.txt", PAGES[:2]))
    assert got.format == "pdf"
    assert PAGES[1] in got.text


def test_docx_named_odt_is_read_by_content(tmp_path):
    assert extract(make_docx(tmp_path / "misnamed.odt")).format == "docx"


def test_docx_that_is_not_a_zip(tmp_path):
    path = tmp_path / "fake.docx"
    path.write_text("just some words, not a Word file")
    with pytest.raises(CorruptDocumentError, match=r"not a valid DOCX file \(not a zip archive\)"):
        extract(path)


def test_supported_extensions():
    assert {".txt", ".md", ".rst", ".csv", ".html", ".htm", ".pdf", ".docx", ".odt", ".epub"} <= SUPPORTED_EXTENSIONS


@pytest.mark.parametrize("name, source", [
    ("guide.md", "# Guide\n\nIntro \ufdd0text.\n\n## Install *it*\n\nRun make.\n\nUsage\n-----\n\nRun it.\n"
                 "\n```\n# not a heading\n```\n"),
    ("guide.rst", "=====\nGuide\n=====\n\nIntro \ufdd0text.\n\nInstall it\n----------\n\nRun make.\n\n"
                  "Usage\n~~~~~\n\nRun it.\n\n----\n\n.. # not a heading\n"),
])
def test_markdown_and_rst_headings_are_found_at_their_offsets(tmp_path, name, source):
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    got = extract(path)
    assert got.title == "Guide"
    assert [h.text for h in got.headings] == ["Guide", "Install it", "Usage"]
    assert all(got.text[h.start:].startswith(h.text) for h in got.headings)
    assert "Intro text." in got.text and "\ufdd0" not in got.text  # a mark in the file is not a heading


def test_markup_strippers_directly():
    text, title = strip_markdown("Title\n=====\n\n> quoted _em_ ![alt](i.png) `code`\n\n---\n")
    assert (normalise_whitespace(text), title) == ("Title\n\nquoted em alt code", "Title")
    text, title = strip_rst("Intro\n-----\n\nSee `docs <https://x>`_ and :ref:`here`.")
    assert (normalise_whitespace(text), title) == ("Intro\n\nSee docs and here.", "Intro")


# --- the sample corpus ------------------------------------------------------------------


def sample_files() -> list[Path]:
    return sorted(p for p in SAMPLE_DIR.iterdir() if p.is_file())


def test_every_sample_document_extracts():
    files = sample_files()
    assert len(files) >= 8
    for path in files:
        got = extract(path)
        assert len(got.text) >= 300, path  # ~150+ words, or 300+ CJK characters
        assert got.title or got.format == "txt", path  # plain text has no title
    assert {extract(p).format for p in files} >= {"pdf", "docx", "html", "txt", "md"}


def test_sample_pdf_has_pages_and_html_has_no_boilerplate():
    pdf = extract(SAMPLE_DIR / "pain_au_levain_fr.pdf")
    assert len(pdf.page_starts) == 3
    assert page_of(pdf, pdf.text.index("La cuisson")) == 3
    html = extract(SAMPLE_DIR / "qhapaq_nan_es.html").text
    assert "Q'eswachaka" in html
    for boilerplate in ("Revista Andina", "Suscribirme", "cookies", "relacionados", "derechos", "gtag", "JavaScript"):
        assert boilerplate not in html


def test_sample_corpus_matches_its_sources(tmp_path):
    """The committed files are what resources/sample_src/make_sample.py builds."""
    import importlib.util

    script = SAMPLE_DIR.parent / "sample_src" / "make_sample.py"
    spec = importlib.util.spec_from_file_location("make_sample", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.build(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [p.name for p in sample_files()]
    for path in sample_files():
        assert extract(tmp_path / path.name) == extract(path), path.name
