"""Hostile documents stop at a limit: zip bombs, page bombs, huge page trees, broken packages.

Bombs are extracted in a child process whose address space is capped (RLIMIT_AS), so a
limit that failed would show as a MemoryError there, never as a swapping test machine;
the reason must name the limit, not the lack of memory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hostile_docs import (
    DOCX_MEMBERS,
    ODT_MEMBERS,
    epub_members,
    shared_page_pdf,
    wide_page_tree_pdf,
    write_zip_with_raw_member,
    zip_bytes,
)

from engine.config import ExtractLimits
from engine.errors import CorruptDocumentError, DocumentTooLargeError, ExtractionTimeoutError
from engine.extract import extract, extract_data

GIB = 1 << 30
REPO = Path(__file__).resolve().parents[2]
# The child needs ~220 MiB with every parser imported; a 2 GiB member cannot fit in this.
CHILD_ADDRESS_SPACE = 1 * GIB

needs_rlimit = pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS is enforced on Linux")


def extract_in_capped_child(path: Path) -> dict:
    """{'error': class name, 'reason': ...} or {'text': ...} from extracting `path` in a child
    process limited to CHILD_ADDRESS_SPACE bytes of address space."""
    code = (
        "import json, resource, sys\n"
        f"resource.setrlimit(resource.RLIMIT_AS, ({CHILD_ADDRESS_SPACE}, {CHILD_ADDRESS_SPACE}))\n"
        "from engine.errors import ExtractionError\n"
        "from engine.extract import extract\n"
        "try:\n"
        "    print(json.dumps({'text': extract(sys.argv[1]).text[:80]}))\n"
        "except ExtractionError as e:\n"
        "    print(json.dumps({'error': type(e).__name__, 'reason': e.reason}))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                          env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


BOMBS = {
    # name, the valid members, and the member that hides 2 GiB of zeros
    "bomb.docx": ({k: v for k, v in DOCX_MEMBERS.items() if k != "word/document.xml"}, "word/document.xml"),
    "bomb.odt": ({k: v for k, v in ODT_MEMBERS.items() if k != "content.xml"}, "content.xml"),
    "bomb.epub": ({k: v for k, v in epub_members().items() if k != "OEBPS/c1.xhtml"}, "OEBPS/c1.xhtml"),
}


def write_bomb(path: Path, declared_size: int | None = None, bomb_member: str | None = None) -> Path:
    members, default_member = BOMBS[path.name]
    member = bomb_member or default_member
    members = [(name, data) for name, data in members.items() if name != member]
    return write_zip_with_raw_member(path, members, member, 2 * GIB, declared_size)


@needs_rlimit
@pytest.mark.parametrize("name", sorted(BOMBS))
def test_zip_bomb_is_refused_from_its_directory(tmp_path, name):
    path = write_bomb(tmp_path / name)
    assert path.stat().st_size < 4 << 20  # 2 GiB of zeros in a few MB
    got = extract_in_capped_child(path)
    assert got["error"] == "DocumentTooLargeError", got
    assert "unpacks to 2.0 GiB" in got["reason"] and "zip bomb" in got["reason"]


@needs_rlimit
@pytest.mark.parametrize("name", sorted(BOMBS))
def test_zip_bomb_with_a_lying_directory_is_cut_at_the_declared_size(tmp_path, name):
    path = write_bomb(tmp_path / name, declared_size=1000)
    got = extract_in_capped_child(path)
    assert got["error"] == "CorruptDocumentError", got
    assert "CRC" in got["reason"]


@needs_rlimit
def test_epub_bomb_in_its_mimetype_member_is_refused(tmp_path):
    members = [(name, data) for name, data in epub_members().items() if name != "mimetype"]
    # Sniffing reads the head of "mimetype" (zeros here: not EPUB); the .epub name decides.
    path = tmp_path / "mimetype-bomb.epub"
    write_zip_with_raw_member(path, [], "mimetype", 2 * GIB)
    with zipfile.ZipFile(path, "a") as zf:
        for name, data in members:
            zf.writestr(name, data)
    got = extract_in_capped_child(path)
    assert got["error"] == "DocumentTooLargeError", got
    assert "member 'mimetype' unpacks to 2.0 GiB" in got["reason"]


def test_member_and_total_limits(tmp_path):
    members = dict(DOCX_MEMBERS, **{f"word/media/{i}.bin": bytes(3 << 20) for i in range(4)})
    data = zip_bytes(members)
    assert extract_data(Path("a.docx"), data).text  # within the defaults
    with pytest.raises(DocumentTooLargeError, match="member 'word/media/0.bin' unpacks to 3.0 MiB"):
        extract_data(Path("a.docx"), data, limits=ExtractLimits(max_member_bytes=2 << 20))
    with pytest.raises(DocumentTooLargeError, match="the archive unpacks to"):
        extract_data(Path("a.docx"), data, limits=ExtractLimits(max_unpacked_bytes=10 << 20))
    with pytest.raises(DocumentTooLargeError, match="7 zip members, over the limit of 5"):
        extract_data(Path("a.docx"), data, limits=ExtractLimits(max_members=5))


def test_unusual_zip_compression_is_refused(tmp_path):
    path = tmp_path / "bz.docx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_BZIP2) as zf:
        for name, text in DOCX_MEMBERS.items():
            zf.writestr(name, text)
    with pytest.raises(CorruptDocumentError, match="compression method 12"):
        extract(path)


def test_epub_without_a_manifest_is_a_typed_error(tmp_path):
    path = tmp_path / "no-manifest.epub"
    path.write_bytes(zip_bytes(epub_members(with_manifest=False)))
    with pytest.raises(CorruptDocumentError, match="damaged or unreadable EPUB file"):
        extract(path)


def test_pdf_with_a_huge_page_tree_is_refused(tmp_path):
    path = wide_page_tree_pdf(tmp_path / "wide.pdf", references=200_000)
    with pytest.raises(DocumentTooLargeError, match="too large to read safely"):
        extract(path)


def test_pdf_declaring_a_hundred_thousand_shared_pages_is_refused(tmp_path):
    path = shared_page_pdf(tmp_path / "shared.pdf")  # 99 x 1000 pages, one page object
    assert path.stat().st_size < 8 << 10
    with pytest.raises(DocumentTooLargeError, match="PDF declares 99,000 pages, over the limit of 5,000"):
        extract(path)


def test_pdf_page_tree_that_lies_about_its_count_is_still_bounded(tmp_path):
    path = shared_page_pdf(tmp_path / "lying.pdf", fanouts=(20, 20, 20))  # 8,000 real pages
    path.write_bytes(path.read_bytes().replace(b"/Count 8000", b"/Count 3"))
    with pytest.raises(DocumentTooLargeError, match="PDF has 8,000 pages, over the limit of 1,000"):
        extract(path, limits=ExtractLimits(max_pages=1_000))


def test_pdf_pages_stop_at_the_deadline(tmp_path):
    path = shared_page_pdf(tmp_path / "slow.pdf", fanouts=(20, 20, 20))  # 8,000 pages of ~1 ms each
    with pytest.raises(ExtractionTimeoutError, match="longer than the 0.2 s limit"):
        extract(path, limits=ExtractLimits(max_pages=10_000, max_seconds=0.2))


def test_shared_pages_within_the_limits_extract(tmp_path):
    path = shared_page_pdf(tmp_path / "few.pdf", fanouts=(3, 3))  # 9 pages, one object
    extracted = extract(path)
    assert len(extracted.page_starts) == 9 and extracted.text.count("honey bees") == 9


def test_odt_with_broken_xml_is_corrupt_and_prints_nothing(tmp_path, capsys):
    path = tmp_path / "broken.odt"
    path.write_bytes(zip_bytes(dict(ODT_MEMBERS, **{"content.xml": ODT_MEMBERS["content.xml"][:-40]})))
    with pytest.raises(CorruptDocumentError, match="not well-formed"):
        extract(path)
    assert capsys.readouterr().out == ""


# One line per pattern that used to be quadratic (or cubic: the heading) in markup.py.
REDOS_UNITS = ["**a ", "__a ", "~~a ", "[a ", "[a](b ", "![a ", "![a](b ", "<http:", "``a `", "`a <b ",
               "**a *", ":a:", "*a ", "_a "]


@pytest.mark.timeout(60)  # the old patterns needed hours for this file; now well under a second
@pytest.mark.parametrize("suffix", [".md", ".rst"])
def test_markup_patterns_are_linear_on_hostile_lines(tmp_path, suffix):
    lines = [unit * (64_000 // len(unit)) for unit in REDOS_UNITS]
    lines.append("# heading" + " " * 64_000 + "end")
    lines.append("".join("`" * k + "a " for k in range(300, 0, -1)))  # code runs of falling length
    path = tmp_path / f"hostile{suffix}"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    text = extract(path).text
    assert text.count("\n") >= len(REDOS_UNITS) - 2 and "end" in text


def test_linear_markup_patterns_keep_their_meaning():
    from engine.extract.markup import strip_markdown, strip_rst

    text, title = strip_markdown("## C# ##\n\nUse `ls` or ``a ` b`` but ```open, **bold *it* x** and __u__.")
    assert title == "C#"
    assert text.strip().splitlines()[-1] == "Use ls or a ` b but ```open, bold it x and u."
    assert strip_markdown("[a [b](c)](d) ![pic](x.png) <https://x.org/a>")[0] == "[a b](d) pic https://x.org/a"
    assert strip_rst("See `the docs <https://x.org>`_ and **strong** ``lit``.")[0] == "See the docs and strong lit."


def test_text_of_repeated_pages_is_bounded(tmp_path):
    path = shared_page_pdf(tmp_path / "many.pdf", fanouts=(20, 20))  # 400 pages, ~30 characters each
    assert len(extract(path).page_starts) == 400
    with pytest.raises(DocumentTooLargeError, match="over 5,000 characters of text"):
        extract(path, limits=ExtractLimits(max_text_chars=5_000))


def test_epub_spine_naming_one_chapter_many_times_reads_it_once(tmp_path):
    members = epub_members()
    members["OEBPS/content.opf"] = members["OEBPS/content.opf"].replace(
        '<itemref idref="c1"/>', '<itemref idref="c1"/>' * 50_000)
    path = tmp_path / "repeated.epub"
    path.write_bytes(zip_bytes(members))
    assert extract(path).text == "Honey bees dance to show the way.\n\nGlaciers move slowly."
