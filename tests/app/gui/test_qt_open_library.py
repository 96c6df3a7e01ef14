"""The window's library opens in a worker behind a busy dialog: a keyword index of an
earlier version is rebuilt there, the dialog says so, and an error reaches the caller."""

from __future__ import annotations

import logging
import sqlite3

import pytest
from helpers import WordEncoder
from PySide6.QtWidgets import QProgressDialog

import engine.library
from app.gui import open_library
from engine.config import data_paths
from engine.errors import StoreError
from engine.library import Library


def test_an_earlier_keyword_index_is_rebuilt_behind_the_dialog_which_says_so(qtbot, monkeypatch, babelfind_home,
                                                                             tmp_path, caplog):
    caplog.set_level(logging.INFO)  # as the window's log set-up has it (app.logging_setup)
    paths = data_paths(babelfind_home)
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "pic.txt").write_text("Pic draws box-and-arrow diagrams in troff documents.", encoding="utf-8")
    for i in range(8):  # BM25's idf needs a few documents
        (folder / f"note{i}.txt").write_text(f"Note {i} on the weather of week {i}.", encoding="utf-8")
    library = Library.open(paths, encoder=WordEncoder())
    for _event in library.index_paths([folder]):
        pass
    library.close()
    keywords = paths.indexes / "keywords.sqlite"
    keywords.unlink()
    with sqlite3.connect(keywords) as db:  # what the version before the stems wrote
        db.execute("CREATE VIRTUAL TABLE passages USING fts5(terms, document UNINDEXED)")
        db.execute("PRAGMA user_version = 1")
    labels: list[str] = []
    monkeypatch.setattr(QProgressDialog, "setLabelText", lambda dialog, text: labels.append(text))
    monkeypatch.setattr(engine.library, "_load_encoder", lambda name, paths, defer=False: WordEncoder())

    library = open_library(paths)
    try:
        shown = [" ".join(text.split()) for text in labels]  # the dialog wraps the line where the path ends it
        assert any("Updating the keyword index" in text and "(format 1, now 2)" in text for text in shown)
        found = library.search_results("drawing boxes with arrows", 5, mode="keyword")
        assert [hit.path.rsplit("/", 1)[-1] for hit in found.hits] == ["pic.txt"]
    finally:
        library.close()


def test_an_error_opening_the_library_is_raised_to_the_caller(qtbot, monkeypatch, babelfind_home):
    def broken(*args, **kwargs):
        raise StoreError("the database is locked by another program")

    monkeypatch.setattr(engine.library.Library, "open", broken)
    with pytest.raises(StoreError, match="locked by another program"):
        open_library(data_paths(babelfind_home))
