"""The language model's faster copy (engine.langid.keep_model_copy_in): written at the
first load, read at the next with the same answers, replaced when damaged, and never a
reason for the model not to load."""

from __future__ import annotations

import os

import numpy as np
import pytest

import engine.langid as langid

SENTENCES = ["The invoice is due at the end of the month.", "Die Rechnung ist am Monatsende fällig.",
             "La facture est due à la fin du mois.", "請在月底前支付這張發票。", "Счёт нужно оплатить до конца месяца."]


@pytest.fixture
def copy_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(langid, "_copy_folder", None)
    langid.keep_model_copy_in(tmp_path / "models")
    return tmp_path / "models"


def readings(identifier) -> list[tuple[str, float]]:
    return [identifier.classify(text) for text in SENTENCES]


def test_the_copy_is_written_once_and_gives_the_same_answers(copy_folder):
    shipped = langid._load_identifier()
    (copy,) = copy_folder.iterdir()
    assert copy.name.startswith("py3langid-") and copy.suffix == ".npz"
    written = copy.stat().st_mtime_ns
    from_copy = langid._load_identifier()
    assert copy.stat().st_mtime_ns == written  # read, not written again
    assert readings(from_copy) == readings(shipped)
    assert [r[0] for r in readings(from_copy)] == ["en", "de", "fr", "zh", "ru"]
    assert np.array_equal(np.asarray(from_copy.tk_nextmove), np.asarray(shipped.tk_nextmove))


def test_a_damaged_copy_is_replaced_from_the_shipped_model(copy_folder):
    expected = readings(langid._load_identifier())
    (copy,) = copy_folder.iterdir()
    copy.write_bytes(b"PK\x03\x04 not a zip archive")
    assert readings(langid._load_identifier()) == expected
    assert readings(langid._read_copy(copy, type(langid._load_identifier()))) == expected  # whole again


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only folders")
def test_a_folder_that_cannot_hold_the_copy_costs_nothing_but_time(copy_folder):
    copy_folder.mkdir()
    copy_folder.chmod(0o500)
    try:
        assert readings(langid._load_identifier())[0][0] == "en"
        assert not list(copy_folder.iterdir())
    finally:
        copy_folder.chmod(0o700)


def test_a_file_in_the_folders_place_costs_nothing_but_time(copy_folder):
    copy_folder.write_text("not a folder")
    assert readings(langid._load_identifier())[0][0] == "en"


def test_a_py3langid_that_holds_its_model_otherwise_still_loads(copy_folder, monkeypatch):
    """Another py3langid release may lack an array the copy names: no copy, the model loads."""
    monkeypatch.setattr(langid, "_COPY_ARRAYS", langid._COPY_ARRAYS + ("a_table_this_release_lacks",))
    assert readings(langid._load_identifier())[0][0] == "en"
    assert not copy_folder.exists() or not list(copy_folder.iterdir())
