"""Library jobs run at a lower CPU priority in the thread that runs them, and only there:
the window's searches (other threads) and the caller keep theirs; "normal" in the
settings or on the command line keeps the process's priority."""

from __future__ import annotations

import os
import sys
import threading

import pytest
from helpers import WordEncoder

from engine.config import data_paths, save_settings
from engine.library import Library, indexer_config

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="threads have nice values of their own on Linux only")


def nice_of_this_thread() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


class RecordingEncoder(WordEncoder):
    """Notes the nice value of the thread that encodes."""

    def __init__(self):
        super().__init__()
        self.nice: set[int] = set()

    def encode(self, texts, kind="passage"):
        self.nice.add(nice_of_this_thread())
        return super().encode(texts, kind)


def index_in_a_thread(library: Library, folder) -> None:
    """As the window does: the job runs in a thread of its own, which ends with it."""
    worker = threading.Thread(target=lambda: list(library.index_paths([folder])))
    worker.start()
    worker.join()


@pytest.fixture
def folder(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(3):
        (folder / f"{i}.txt").write_text(f"Passage number {i} about rivers and bridges.", encoding="utf-8")
    return folder


def test_indexing_runs_niced_in_its_thread_while_other_threads_keep_their_priority(babelfind_home, folder):
    encoder = RecordingEncoder()
    library = Library.open(data_paths(babelfind_home), encoder=encoder)
    before = nice_of_this_thread()
    index_in_a_thread(library, folder)
    assert encoder.nice == {min(19, before + 10)}
    assert nice_of_this_thread() == before  # the thread that started the job (a search's) is untouched
    assert library.search("rivers", 3)  # and searches from it as ever
    library.close()


def test_normal_priority_from_the_settings_keeps_the_process_priority(babelfind_home, folder):
    save_settings(data_paths(babelfind_home), index_priority="normal")
    encoder = RecordingEncoder()
    library = Library.open(data_paths(babelfind_home), encoder=encoder)
    index_in_a_thread(library, folder)
    assert encoder.nice == {nice_of_this_thread()}
    library.close()


def test_priority_choices(babelfind_home, caplog):
    paths = data_paths(babelfind_home)
    assert indexer_config(paths).nice == 10 and indexer_config(paths, "normal").nice == 0
    save_settings(paths, index_priority="lowest")  # hand-edited: low, with a warning
    assert indexer_config(paths).nice == 10 and "index_priority 'lowest'" in caplog.text
    from engine.errors import InputError

    with pytest.raises(InputError, match="low, normal"):
        indexer_config(paths, "high")
