"""A side file rebuilt while the window works is said in the status bar, as the command
line says it on stderr (engine.repairs)."""

from __future__ import annotations

import logging
import sqlite3
import threading

from engine.repairs import REPAIR_LOGGER, repaired


def test_a_repair_in_another_thread_shows_in_the_status_bar(qtbot, window):
    worker = threading.Thread(target=repaired, args=("the keyword index %s failed; rebuilding it", "k\x1b[2J.sqlite"))
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: "rebuilding it" in window.statusBar().currentMessage(), timeout=5000)
    assert "k\\x1b[2J.sqlite" in window.statusBar().currentMessage()  # escaped, as printed


def test_a_closed_window_no_longer_listens(qtbot, window):
    window.shutdown()
    assert all(type(h).__name__ != "_Forward" for h in logging.getLogger(REPAIR_LOGGER).handlers)


def test_damage_found_by_a_search_is_said(qtbot, window, tmp_path):
    corpus = tmp_path / "c"
    corpus.mkdir()
    for i in range(40):
        (corpus / f"{i}.txt").write_text(f"Walrus number {i} rests on ice floe {i * 3}. " * 30, encoding="utf-8")
    list(window.library.index_paths([corpus]))
    keywords = window.library.live.keywords
    keywords.close()  # everything written into the file itself (the log checkpointed)...
    keywords._db = sqlite3.connect(keywords.path)  # ...and read again by a connection that caches no page
    path = keywords.path
    with open(path, "r+b") as f:
        f.seek(4096)
        f.write(b"\xff" * (path.stat().st_size - 4096))
    assert window.library.search("walrus", mode="keyword")
    qtbot.waitUntil(lambda: "keyword index" in window.statusBar().currentMessage(), timeout=5000)
