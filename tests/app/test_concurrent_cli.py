"""`babelfind index` (a real subprocess) while the window's engine indexes the same home."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import assert_database_matches_vector_file

from engine.config import data_paths
from engine.events import IndexProgress
from engine.indexer import IndexerConfig
from engine.library import Library

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "resources" / "sample"


def cli(*argv: str) -> subprocess.Popen:
    env = os.environ | {"PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-c", "import sys; from app.cli import main; sys.exit(main())", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def copy_samples(folder: Path, names: list[str]) -> Path:
    folder.mkdir()
    for name in names:
        shutil.copy(SAMPLE / name, folder / name)
    return folder


@pytest.mark.slow
def test_cli_indexing_while_the_window_indexes_keeps_every_document(default_models, babelfind_home,
                                                                     tmp_path):
    window_docs = copy_samples(tmp_path / "window", ["gletscher_de.txt", "polders_nl.txt", "cha_zh.txt"])
    cli_docs = copy_samples(tmp_path / "cli", ["transsib_ru.txt", "beekeeping_en.md"])
    window = Library.open(data_paths(babelfind_home), config=IndexerConfig(batch_passages=2))
    run = window.index_paths([window_docs])
    for event in run:  # stop mid-run, holding the write lock
        if isinstance(event, IndexProgress) and event.files_done:
            break
    other = cli("index", str(cli_docs))
    waiting = other.stderr.readline()
    assert "another Babelfind process" in waiting and f"pid {os.getpid()}, indexing" in waiting
    list(run)  # the window finishes; the CLI then takes its turn
    out, err = other.communicate(timeout=300)
    assert other.returncode == 0, err
    assert "indexed 2" in out

    hits = window.search("Trans-Siberian railway from Moscow to Vladivostok", k=1)
    assert Path(hits[0].path).name == "transsib_ru.txt"  # the window sees the CLI's documents
    window.close()
    assert assert_database_matches_vector_file(babelfind_home) == 5

    busy = Library.open(data_paths(babelfind_home))
    run = busy.reindex()
    next(event for event in run if isinstance(event, IndexProgress))
    refused = cli("--no-wait", "forget", str(cli_docs))
    _, err = refused.communicate(timeout=300)
    run.close()
    busy.close()
    assert refused.returncode == 1 and err.count("\n") == 1
    assert "another Babelfind process" in err and "re-indexing" in err
