"""The command line with archives, mail and spreadsheets: pages named, members unpacked, OCR off."""

from __future__ import annotations

import json

import pytest
from format_docs import make_mbox, make_png, make_xlsx, make_zip
from helpers import run_cli as run


@pytest.mark.slow
def test_search_names_sheets_and_subjects_and_unpack_copies_a_member(default_models, capsys, tmp_path):
    folder = tmp_path / "disk"
    folder.mkdir()
    make_xlsx(folder / "prices.xlsx")
    make_mbox(folder / "Inbox")
    make_zip(folder / "bundle.zip", tmp_path)
    make_png(folder / "harbour.png")
    code, out, _ = run(capsys, "index", str(folder), "--no-ocr")
    assert code == 0 and "harbour.png: an image: OCR is turned off in the settings" in out
    code, out, _ = run(capsys, "search", '"Roquefort"', "--mode", "keyword")
    assert "prices.xlsx, sheet 2" in out
    code, out, _ = run(capsys, "search", '"Eddystone"', "--mode", "keyword", "--json")
    hit = json.loads(out)[0]
    assert hit["title"] == "Lighthouse keepers" and hit["format"] == "eml" and hit["file_type"] == "eml"
    code, out, _ = run(capsys, "search", '"Eddystone"', "--mode", "keyword")
    assert "\u201cLighthouse keepers\u201d" in out
    target = tmp_path / "out"
    code, out, _ = run(capsys, "unpack", str(folder / "bundle.zip" / "docs.tar.gz" / "manual" / "guide.md"),
                       "--to", str(target))
    assert code == 0 and out.strip() == str(target / "guide.md")
    assert (target / "guide.md").read_text(encoding="utf-8").startswith("# Guide")
    code, _, err = run(capsys, "unpack", str(folder / "bundle.zip" / "missing.txt"))
    assert code != 0 and "is not indexed" in err
