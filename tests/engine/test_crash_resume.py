"""Indexing survives `kill -9` at random moments: after resuming, database rows, FAISS ids
and keyword index ids agree exactly and search works."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import WordEncoder
from sqlalchemy import func, select

from engine.config import data_paths
from engine.events import IndexFinished
from engine.library import Library
from engine.store.schema import Document, Passage, Vector

TESTS_DIR = Path(__file__).resolve().parents[1]

WORKER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from helpers import WordEncoder
    from engine.config import data_paths
    from engine.indexer import IndexerConfig
    from engine.library import Library

    home, corpus = Path(sys.argv[1]), Path(sys.argv[2])
    # Small batches and a save after every batch: many moments to be killed in.
    library = Library.open(data_paths(home), encoder=WordEncoder(),
                           config=IndexerConfig(batch_passages=3, save_every_s=0))
    for event in library.index_paths([corpus]):
        print(type(event).__name__, flush=True)
    """
)


def make_corpus(root: Path, n: int = 150) -> Path:
    rng = random.Random(7)
    words = "river mountain honey train glacier bread tea volcano glass road".split()
    for i in range(n):
        sentences = [" ".join(rng.choices(words, k=8)).capitalize() + f" number{i}." for _ in range(6)]
        (root / f"doc{i:03d}.txt").write_text(" ".join(sentences), encoding="utf-8")
    return root


def run_and_kill(home: Path, corpus: Path, after_lines: int) -> None:
    env = os.environ | {"PYTHONPATH": str(TESTS_DIR), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-c", WORKER, str(home), str(corpus)],
                            stdout=subprocess.PIPE, text=True, env=env)
    for _ in range(after_lines):
        if not proc.stdout.readline():
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    proc.stdout.close()


@pytest.mark.slow
def test_kill_at_random_points_then_resume(babelfind_home, tmp_path):
    corpus = make_corpus(tmp_path / "corpus" if (tmp_path / "corpus").mkdir() is None else None)
    rng = random.Random(1234)
    for _ in range(5):
        run_and_kill(babelfind_home, corpus, after_lines=rng.randint(2, 140))

    library = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    *_, last = library.index_paths([corpus])
    assert isinstance(last, IndexFinished)
    with library.store.session() as s:
        passage_ids = set(s.scalars(select(Passage.id)))
        vector_ids = set(s.scalars(select(Vector.passage_id)))
        documents = s.scalar(select(func.count()).select_from(Document))
        orphans = s.scalar(
            select(func.count()).select_from(Passage).where(Passage.document_id.not_in(select(Document.id)))
        )
    assert documents == 150 and orphans == 0
    assert passage_ids == vector_ids == set(library.live.index.ids().tolist())
    assert len(library.live) == len(passage_ids)  # no duplicates in FAISS
    assert set(library.live.keywords.ids().tolist()) == passage_ids  # the keyword index too
    assert len(library.live.keywords) == len(passage_ids)
    keyword_hits = library.search("number42", k=3, mode="keyword")
    assert [Path(h.path).name for h in keyword_hits] == ["doc042.txt"]
    hits = library.search("number42 honey", k=3)
    assert Path(hits[0].path).name == "doc042.txt"
    library.close()
