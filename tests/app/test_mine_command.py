"""`babelfind mine`: output files, JSON, one-line errors; and a data test with the real model."""

from __future__ import annotations

import json
import random
import xml.etree.ElementTree as ET

import pytest

from app.cli import main
from app.cli import mine_command
from engine.mining.bitext_io import read_tsv
from mining_fakes import ENGLISH, GERMAN, TranslationEncoder

GERMAN, ENGLISH = GERMAN[:6], ENGLISH[:6]


@pytest.fixture
def fake_encoder(monkeypatch):
    """The command's encoder replaced by the test double from tests/engine/test_bitext.py
    (and no model install: the double needs none)."""
    from app.cli import model_setup

    encoder = TranslationEncoder()
    monkeypatch.setattr(mine_command, "get_encoder", lambda model: encoder)
    monkeypatch.setattr(model_setup, "prepare_models", lambda paths, which: None)
    return encoder


@pytest.fixture
def documents(tmp_path):
    order = [2, 0, 5, 1, 4, 3]
    de = tmp_path / "de.txt"
    de.write_text("\n".join(GERMAN) + "\n", encoding="utf-8")
    en = tmp_path / "en.txt"
    en.write_text("\n".join(ENGLISH[j] for j in order) + "\n", encoding="utf-8")
    return de, en


def test_mine_writes_tsv_and_reports_on_stderr(fake_encoder, documents, tmp_path, capsys):
    out = tmp_path / "pairs.tsv"
    assert main(["mine", str(documents[0]), str(documents[1]), "-o", str(out)]) == 0
    rows = read_tsv(out)
    assert {(src, tgt) for _, src, tgt in rows} == set(zip(GERMAN, ENGLISH))
    err = capsys.readouterr().err
    assert "6 pairs mined (max, ratio > 1.26, neutral vectors), de -> en, from 6 and 6 sentences" in err


def test_mine_space_plain_scores_the_vectors_as_encoded(fake_encoder, documents, tmp_path, capsys):
    out = tmp_path / "pairs.tsv"
    assert main(["mine", str(documents[0]), str(documents[1]), "-o", str(out), "--space", "plain"]) == 0
    assert {(src, tgt) for _, src, tgt in read_tsv(out)} == set(zip(GERMAN, ENGLISH))
    assert "6 pairs mined (max, ratio > 1.03, plain vectors)" in capsys.readouterr().err


def test_mine_writes_tmx_with_detected_languages(fake_encoder, documents, tmp_path):
    out = tmp_path / "pairs.tmx"
    assert main(["mine", str(documents[0]), str(documents[1]), "-o", str(out), "--mode", "intersect"]) == 0
    root = ET.parse(out).getroot()
    assert root.get("version") == "1.4" and root.find("header").get("srclang") == "de"
    langs = {tuv.get("{http://www.w3.org/XML/1998/namespace}lang") for tuv in root.iter("tuv")}
    assert langs == {"de", "en"} and len(root.findall("body/tu")) == 6


def test_mine_json_on_stdout(fake_encoder, documents, capsys):
    code = main(["mine", str(documents[0]), str(documents[1]), "--json", "--margin", "distance", "--threshold", "0"])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["src_lang"], result["tgt_lang"], result["aligned"]) == ("de", "en", False)
    assert len(result["pairs"]) == 6 and result["threshold"] == 0
    first = result["pairs"][0]
    assert GERMAN.index(first["source"]) == first["src_indices"][0]


def test_mine_without_output_prints_tsv(fake_encoder, documents, capsys):
    assert main(["mine", str(documents[0]), str(documents[1]), "--align", "off"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 6 and all(len(line.split("\t")) == 3 for line in lines)


def run_error(argv, capsys) -> str:
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("babelfind: error: ")
    return err[0]


def test_empty_side_is_one_line_error(fake_encoder, documents, tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    assert "empty" in run_error(["mine", str(documents[0]), str(empty)], capsys)


def test_same_language_is_one_line_error(fake_encoder, documents, capsys):
    message = run_error(["mine", str(documents[0]), str(documents[0])], capsys)
    assert "same language (de)" in message
    assert main(["mine", str(documents[0]), str(documents[0]), "--same-language"]) == 0


def test_binary_file_is_one_line_error(fake_encoder, documents, tmp_path, capsys):
    binary = tmp_path / "photo.txt"
    binary.write_bytes(bytes(range(256)) * 50)
    assert "binary" in run_error(["mine", str(documents[0]), str(binary)], capsys)


def test_missing_file_and_bad_output_extension(fake_encoder, documents, tmp_path, capsys):
    assert main(["mine", str(documents[0]), str(tmp_path / "nope.txt")]) == 2  # a wrong command line
    assert "argument B: no such file" in capsys.readouterr().err
    message = run_error(["mine", str(documents[0]), str(documents[1]), "-o", str(tmp_path / "x.csv")], capsys)
    assert ".tsv or .tmx" in message
    assert fake_encoder.encoded == []  # refused before any encoding


# ---- the real default model -----------------------------------------------------------


def pud_sentences(shared_data, lang: str) -> list[str]:
    path = shared_data / "corpus" / "pud-parallel" / f"pud.{lang}.tsv"
    return [line.split("\t", 1)[1] for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.data
@pytest.mark.slow
def test_mining_pud_german_english_recovers_the_pairs(default_models, shared_data, tmp_path, capsys):
    """1000 PUD German-English sentence pairs, English shuffled: >= 95% found exactly."""
    german, english = pud_sentences(shared_data, "de"), pud_sentences(shared_data, "en")
    order = list(range(len(english)))
    random.Random(0).shuffle(order)
    (tmp_path / "de.txt").write_text("\n".join(german) + "\n", encoding="utf-8")
    (tmp_path / "en.txt").write_text("\n".join(english[j] for j in order) + "\n", encoding="utf-8")
    out = tmp_path / "pairs.tsv"
    argv = ["mine", str(tmp_path / "de.txt"), str(tmp_path / "en.txt"), "--lines", "-o", str(out), "--json"]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["src_lang"], result["tgt_lang"], result["aligned"]) == ("de", "en", False)
    gold = {(i, order.index(i)) for i in range(len(german))}
    found = {(p["src_indices"][0], p["tgt_indices"][0]) for p in result["pairs"]}
    recall = len(found & gold) / len(gold)
    precision = len(found & gold) / max(len(found), 1)
    assert recall >= 0.95, (recall, precision)
    assert precision >= 0.95, (recall, precision)
