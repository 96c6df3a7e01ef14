"""Content-free lines leave passages; short real content stays (merged, never dropped).

The inputs are excerpts of real files on a Debian system: the libtasn1 manual (PDF,
/usr/share/doc/libtasn1-doc), the libffi manual (HTML, /usr/share/doc/libffi8/html),
the shared-mime-info specification (PDF) and a gettext catalogue (coreutils, de).
"""

from __future__ import annotations

import pytest

from engine.junk import content_weight, drop_junk, is_junk_line, junk_ranges, passage_text
from engine.segment import segment, split_sentences

# libtasn1.pdf as the PDF extractor returns it: a roman page number, the TOC, page 1.
LIBTASN1_TOC = (
    "i\nTable of Contents\n1 Introduction . . . . . . . . . . . . . . . . . . . . . . . . . 1\n"
    "2 ASN.1 structure handling . . . . . . . . . . . . . . . . . . . . . 2\n"
    "2.1 ASN.1 syntax. . . . . . . . . . . . . . . . . . . . . . . . . . . . . . 2\n"
    "2.2 Naming . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . 3\n"
    "Appendix A Copying Information . . . . . . . . . . . . . . . 24\n"
    "Function and Data Index . . . . . . . . . . . . . . . . . . . . . . . . . . 33\n\n"
    "1\n1 Introduction\nThis document describes the Libtasn1 library that provides Abstract Syntax "
    "Notation One\n(ASN.1, as specified by the X.680 ITU-T recommendation) parsing and structures "
    "man-\nagement, and Distinguished Encoding Rules (DER, as per X.690) encoding and decoding\n"
    "functions.\n"
)
# libffi's Types.html and index.html: a texinfo navigation bar above the content.
LIBFFI_NAV = (
    "Next: Multiple ABIs, Previous: Simple Example, Up: Using libffi [Index]\n\n"
    "2.3 Types\n\nPrimitive Types\nStructures\nSize and Alignment\n"
)
# A .po catalogue (coreutils, German), as msgunfmt writes it.
PO_ENTRY = (
    '#: src/chmod.c:123 src/chown-core.c:88\n#, c-format\n'
    'msgid "cannot access %s"\nmsgstr "Zugriff auf %s nicht möglich"\n'
)


@pytest.mark.parametrize(
    "line",
    [
        "1 Introduction . . . . . . . . . . . . . . . . . . 1",  # PDF TOC, spaced leader
        "Appendix A Copying Information . . . . . . . . . . . . . . . 24",
        "3.2 Invoking asn1Coding ........................ 5",  # tight leader
        "Preface ……………… iv",  # ellipsis leader, roman page
        ". . . . . . . . . . . . . . . 11",  # the fragment issue 11 reports
        "12", "- 12 -", "[iv]", "xii", "12 / 40", "Page 3 of 10", "Seite 3 von 10", "Página 7",
        "* * *", "----------", "|---|---|", "•",
        "Next: Multiple ABIs, Previous: Simple Example, Up: Using libffi [Index]",
        "Next: What is libffi? [Index]",
        "[Contents][Index]",
        "#: src/chmod.c:123 src/chown-core.c:88", "#, c-format", '#| msgid "old text"',
    ],
)
def test_layout_lines_are_junk(line):
    assert is_junk_line(line)


@pytest.mark.parametrize(
    "line",
    [
        "Installation",  # a heading: short, but content
        "Table of Contents",
        "我来了。你呢？",  # a CJK sentence of six characters
        "Total: 1.234,50 €", "1.234,50 €", "+49 30 1234567",  # amounts and numbers are content
        "Revenue grew by 12 % in 2019.",
        "Copyright © 2008–2019, 2021, 2022 Anthony Green and Red Hat, Inc.",
        "-h, --help     display this help and exit",  # an option list line
        "Wait... what?", "Page layout is explained in chapter 3.",
        "Next, we describe the types.",  # the word "Next" in a sentence
        'msgid "cannot access %s"', "# Translator note: keep the %s",
        "2.1 ASN.1 syntax", "IV. Results",
        "",  # a blank line is a paragraph break, not junk
    ],
)
def test_content_lines_are_kept(line):
    assert not is_junk_line(line)


def sentences_kept(text: str) -> list[str]:
    return [text[s.start : s.end] for s in drop_junk(text, split_sentences(text, "en"))]


def test_table_of_contents_leaves_only_its_heading_and_the_real_text():
    kept = sentences_kept(LIBTASN1_TOC)
    assert kept[0] == "Table of Contents"
    assert kept[1] == "1 Introduction\nThis document describes the Libtasn1 library that provides Abstract Syntax Notation One\n(ASN.1, as specified by the X.680 ITU-T recommendation) parsing and structures man-\nagement, and Distinguished Encoding Rules (DER, as per X.690) encoding and decoding\nfunctions."
    assert len(kept) == 2
    assert not any(". . ." in s for s in kept)


def test_toc_heading_merges_into_the_first_real_passage():
    passages = segment(LIBTASN1_TOC, "en")
    texts = [passage_text(LIBTASN1_TOC, p) for p in passages]
    assert len(texts) == 1
    assert texts[0].startswith("Table of Contents\n1 Introduction\nThis document describes")
    assert "Naming" not in texts[0] and ". ." not in texts[0]
    # without the filter, the TOC is cut into dozens of ". . . . ." passages
    plain = segment(LIBTASN1_TOC, "en", drop_junk=False)
    assert sum(LIBTASN1_TOC[p.start : p.end].strip(". \n0123456789") == "" for p in plain) >= 5


def test_navigation_bar_goes_and_the_menu_stays():
    passages = segment(LIBFFI_NAV, "en")
    assert [passage_text(LIBFFI_NAV, p) for p in passages] == [
        "2.3 Types\n\nPrimitive Types\nStructures\nSize and Alignment"
    ]


def test_gettext_source_references_go_and_messages_stay():
    kept = sentences_kept(PO_ENTRY)
    assert kept == ['msgid "cannot access %s"\nmsgstr "Zugriff auf %s nicht möglich"']


def test_a_junk_line_inside_a_sentence_cuts_it_and_is_never_encoded():
    # a PDF page break in mid-sentence: "- 2 -" sits between two halves of one sentence
    text = "The library parses ASN.1 files\n- 2 -\nand encodes them as DER. It is fast."
    kept = sentences_kept(text)
    assert kept == ["The library parses ASN.1 files", "and encodes them as DER.", "It is fast."]
    (passage,) = segment(text, "en")
    assert passage_text(text, passage) == (
        "The library parses ASN.1 files\nand encodes them as DER. It is fast."
    )
    assert (passage.start, passage.end) == (0, len(text))  # the preview still shows the original


def test_passage_text_keeps_the_original_whitespace_without_junk():
    text = "First sentence here.  Second one follows.\nThird one ends it."
    (passage,) = segment(text, "en")
    assert passage_text(text, passage) == text


def test_short_content_is_merged_not_dropped():
    heading = "Installation"
    long_paragraph = " ".join(["This paragraph explains every step of the installation in detail."] * 8)
    text = f"{heading}\n\n{long_paragraph}\n\nThanks!"
    texts = [passage_text(text, p) for p in segment(text, "en")]
    assert texts[0].startswith("Installation\n\nThis paragraph")
    assert texts[-1].endswith("Thanks!")
    assert all(content_weight(t) >= 20 for t in texts)
    assert "".join(texts).count("Installation") == 1


@pytest.mark.parametrize("text", ["Installation", "我来了。你呢？", "42", "Total: 1.234,50 €"])
def test_a_document_of_one_short_line_keeps_it(text):
    passages = segment(text, "en")
    if text == "42":  # a bare number is a page number: nothing to index
        assert passages == []
    else:
        assert [passage_text(text, p) for p in passages] == [text]


def test_numbers_inside_sentences_stay():
    text = "The invoice INV-2024-0042 of 3 May is due.\n1.234,50 €\nPlease pay within 14 days."
    kept = sentences_kept(text)
    assert "1.234,50 €" in " ".join(kept) and "INV-2024-0042" in kept[0]


def test_cjk_counts_as_content_weight():
    assert content_weight("我来了。你呢？") == 15  # 5 CJK characters x 3
    assert content_weight("Installation") == 12
    assert content_weight(". . . 11") == 2


def test_junk_ranges_are_line_spans():
    text = "Title\n- 3 -\nBody text here."
    assert junk_ranges(text) == [(6, 11)]
    assert text[6:11] == "- 3 -"


def test_spans_stay_ordered_and_inside_the_text_on_real_layout():
    text = LIBTASN1_TOC + LIBFFI_NAV + PO_ENTRY
    spans = drop_junk(text, split_sentences(text))
    assert all(a.end <= b.start for a, b in zip(spans, spans[1:]))
    assert all(0 <= s.start < s.end <= len(text) and text[s.start:s.end].strip() == text[s.start:s.end]
               for s in spans)


# The header of a catalogue as msgunfmt writes it (sed, German), then one message.
PO_HEADER = (
    'msgid ""\nmsgstr ""\n"Project-Id-Version: sed 4.7.13\\n"\n'
    '"Last-Translator: Mario Blättermann <mario.blaettermann@gmail.com>\\n"\n'
    '"Content-Type: text/plain; charset=UTF-8\\n"\n"Plural-Forms: nplurals=2; plural=(n != 1);\\n"\n\n'
    'msgid ""\n"Usage: %s [OPTION]...\\n"\nmsgstr ""\n"Aufruf: %s [OPTION]...\\n"\n'
)
# /usr/share/doc/curl/copyright (Debian machine-readable format).
DEP5 = (
    "Files: packages/vms/backup_gnv_curl_src.com\n packages/vms/build_curl-config_script.com\n"
    " m4/*\nCopyright: 2009-2022, Daniel Stenberg, <daniel@haxx.se>\nLicense: curl\n"
)


def test_gettext_header_goes_and_messages_stay():
    kept = " ".join(sentences_kept(PO_HEADER))
    assert "Project-Id-Version" not in kept and "Plural-Forms" not in kept and 'msgid ""' not in kept
    assert '"Usage: %s [OPTION]...\\n"' in kept and '"Aufruf: %s [OPTION]...\\n"' in kept


def test_debian_copyright_keeps_holders_and_licence_but_not_path_lists():
    kept = " ".join(sentences_kept(DEP5))
    assert "packages/vms" not in kept and "m4/*" not in kept
    assert "Copyright: 2009-2022, Daniel Stenberg" in kept and "License: curl" in kept


@pytest.mark.parametrize("line", ["TCP/IP", "and/or", "input/output", "README.md", "km/h", "docs/"])
def test_words_with_slashes_are_not_paths(line):
    assert not is_junk_line(line)


@pytest.mark.parametrize("line", ["lib/vtls/rustls.h", "m4/*", "debian/*", "src/main.c"])
def test_bare_paths_are_junk(line):
    assert is_junk_line(line)
