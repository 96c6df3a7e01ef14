"""Where indexing time goes: extraction, encoding, SQL and FAISS, with the real default model.

    python bench/bench_indexing.py --sentences 4000 --per-doc 100

Builds documents from the English Wikipedia sentences in ../shared/data (or from the
sample corpus repeated, when that folder is absent), indexes them into a fresh home
with the active default model, and prints each stage's share of the run. The goal is
SQL + FAISS <= 10% of indexing time: encoding should dominate.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WIKI = REPO.parent / "shared" / "data" / "corpus" / "wiki-en" / "wiki1m_for_simcse.head.txt"


def make_corpus(folder: Path, sentences: int, per_doc: int) -> int:
    lines = [line.strip() for line in WIKI.read_text(encoding="utf-8").splitlines() if line.strip()]
    lines = lines[:sentences]
    for i in range(0, len(lines), per_doc):
        (folder / f"wiki{i // per_doc:04d}.txt").write_text(" ".join(lines[i : i + per_doc]), encoding="utf-8")
    return len(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sentences", type=int, default=4000)
    parser.add_argument("--per-doc", type=int, default=100)
    parser.add_argument("--models", type=Path, help="an installed models folder to reuse")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        home, corpus = Path(tmp) / "home", Path(tmp) / "corpus"
        home.mkdir()
        corpus.mkdir()
        os.environ["BABELFIND_HOME"] = str(home)
        from engine.config import data_paths, save_settings
        from engine.events import IndexFinished
        from engine.library import Library
        from trainer.serving.default_models import DEFAULT_MODEL, ensure_default_models

        paths = data_paths(home)
        if args.models:
            (home / "models").symlink_to(args.models.resolve(), target_is_directory=True)
            save_settings(paths, active_model=DEFAULT_MODEL)
        ensure_default_models(paths)
        n = make_corpus(corpus, args.sentences, args.per_doc)
        library = Library.open(paths)
        t0 = time.perf_counter()
        *_, finished = library.index_paths([corpus])
        wall = time.perf_counter() - t0
        assert isinstance(finished, IndexFinished)
        stages = dict(finished.summary.stage_seconds)
        print(f"{n} sentences in {finished.summary.indexed} documents, "
              f"{finished.summary.passages} passages, {wall:.1f} s wall "
              f"({finished.summary.passages / wall:.0f} passages/s), model {library.encoder.name}")
        print("| stage | seconds | share of wall time |")
        print("|---|---|---|")
        for stage in ("extract", "encode", "store", "vectors"):
            seconds = stages.get(stage, 0.0)
            print(f"| {stage} | {seconds:.2f} | {100 * seconds / wall:.1f}% |")
        other = wall - sum(stages.values())
        print(f"| other (scan, hashing, events) | {other:.2f} | {100 * other / wall:.1f}% |")
        sql_faiss = stages.get("store", 0.0) + stages.get("vectors", 0.0)
        print(f"\nSQL + FAISS: {100 * sql_faiss / wall:.1f}% of indexing time (goal <= 10%)")
        library.close()


if __name__ == "__main__":
    main()
