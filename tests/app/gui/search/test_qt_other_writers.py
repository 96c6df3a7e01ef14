"""The window follows what another process does to its library: the command line indexes
a folder while the window is open, and the sidebar, the status line and then the results
on screen show it, without the window indexing anything itself; while the other process
writes, the status line names it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from gui_helpers import drop_and_wait, shown_names, type_query, write_files

from app.gui.search import qt_main_window

TESTS_DIR = Path(__file__).resolve().parents[3]

# Another process, as `babelfind index FOLDER` is one, on the window's test encoder.
INDEXER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from helpers import WordEncoder
    from engine.config import data_paths
    from engine.library import Library

    library = Library.open(data_paths(Path(sys.argv[1])), encoder=WordEncoder())
    for _ in library.index_paths([Path(sys.argv[2])]):
        pass
    library.close()
    """
)


def index_in_another_process(home: Path, folder: Path) -> None:
    env = os.environ | {"PYTHONPATH": str(TESTS_DIR), "OMP_NUM_THREADS": "1"}
    subprocess.run([sys.executable, "-c", INDEXER, str(home), str(folder)], env=env, check=True, timeout=120)


def test_what_the_command_line_indexes_reaches_the_counts_then_the_results(qtbot, window, babelfind_home,
                                                                           tmp_path, monkeypatch):
    monkeypatch.setattr(qt_main_window, "OTHER_WRITERS_QUIET_S", 0.5)
    window._others_timer.setInterval(100)
    drop_and_wait(qtbot, window, [write_files(tmp_path / "mine", {"bees.txt": "Honey bees collect nectar."})])
    type_query(qtbot, window, "turquoise glacier lake")
    assert "glacier.txt" not in shown_names(window)
    other = write_files(tmp_path / "theirs", {"glacier.txt": "The glacier melts into a turquoise lake."})

    index_in_another_process(babelfind_home, other)

    qtbot.waitUntil(lambda: window.status_label.text().startswith("2 documents"), timeout=10_000)
    assert "theirs" in [Path(r.path).name for r in window.library.roots()]
    qtbot.waitUntil(lambda: shown_names(window)[:1] == ["glacier.txt"], timeout=10_000)


def test_the_results_wait_until_the_other_process_has_been_quiet(qtbot, window, babelfind_home, tmp_path,
                                                                monkeypatch):
    monkeypatch.setattr(qt_main_window, "OTHER_WRITERS_QUIET_S", 3600.0)
    window._others_timer.setInterval(100)
    type_query(qtbot, window, "turquoise glacier lake")
    index_in_another_process(babelfind_home, write_files(tmp_path / "theirs", {"glacier.txt": "A turquoise glacier lake."}))
    qtbot.waitUntil(lambda: window.status_label.text().startswith("1 document"), timeout=10_000)
    qtbot.wait(500)
    assert shown_names(window) == []  # counts follow at once; the results only once it is quiet


# Another process in the middle of a write, as the command line is while it indexes.
HOLDER = textwrap.dedent(
    """
    import sys, time
    from engine.locking import WriteLock
    assert WriteLock(sys.argv[1]).try_acquire("indexing")
    print("held", flush=True)
    time.sleep(600)
    """
)


def test_the_status_line_names_another_process_while_it_writes(qtbot, window, babelfind_home):
    window._others_timer.setInterval(100)
    env = os.environ | {"PYTHONPATH": str(TESTS_DIR.parent)}
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(window.library.lock.path)],
                              stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert holder.stdout.readline().strip() == "held"
        qtbot.waitUntil(lambda: f"another Babelfind process (pid {holder.pid}) is indexing"
                        in window.status_label.text(), timeout=10_000)
        assert window.status_label.text().startswith("0 documents")
    finally:
        holder.kill()
        holder.wait(timeout=30)
        holder.stdout.close()
    qtbot.waitUntil(lambda: "another" not in window.status_label.text(), timeout=10_000)
