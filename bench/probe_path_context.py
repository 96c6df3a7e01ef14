"""Probe, not in the product: untitled documents' passages encoded with their file's path.

    BABELFIND_TEST_MODELS=<models> python bench/probe_path_context.py --mix 0.35 \
        --folders 2 --devsets english-doc faq4 --modes fused --spaces neutral --per-query

A README, a copyright file, a changelog or a PDF without metadata has no title, so its
passages carry nothing of what the file belongs to: "/usr/bin/editor is used when neither
VISUAL nor EDITOR is set" never says it is about less, which only its folder (doc/less/)
says. Here a document with no title gets a path context: up to --folders folder names
above the file inside its root and the file's name without a document extension
("doc / less / README.Debian"), and each of its passages that has no context yet is moved
toward it, normalise(v + mix * v_context), as the section context is. Passages that
already have a heading context keep their vectors (the product would write
"path / heading" for them).

Each home is copied to bench/out/context-homes/path-<setting>/ and bench_search runs on
the copies with the arguments it takes.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import time
from pathlib import Path, PurePosixPath

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_search  # noqa: E402  (puts the checkout on sys.path)
from probe_passage_context import _devsets, _mixed, _stored, copy_home  # noqa: E402

from engine.config import DataPaths  # noqa: E402
from engine.extract import SUPPORTED_EXTENSIONS  # noqa: E402
from engine.extract.dispatch import EXTENSION_FORMATS  # noqa: E402
from engine.models import load_encoder  # noqa: E402
from engine.store.vector_blobs import vector_blobs  # noqa: E402

def path_title(relative: str, folders: int) -> str:
    """"doc/less/README.Debian" -> "doc / less / README.Debian" (folders=2)."""
    parts = [_plain(p) for p in PurePosixPath(relative).parts]
    # a compressed file's member repeats its container's name: doc/jq/changelog.gz/changelog
    parts = [p for i, p in enumerate(parts) if i + 1 == len(parts) or p != parts[i + 1]]
    name = parts[-1]
    stem, suffix = name.rsplit(".", 1) if "." in name else (name, "")
    if suffix and f".{suffix.lower()}" in SUPPORTED_EXTENSIONS:
        name = stem
    return " / ".join(parts[-1 - folders:-1] + [name]) if folders else name


def _plain(part: str) -> str:
    """A compressed file's name without its compression suffix ("changelog.gz" -> "changelog")."""
    stem, dot, suffix = part.rpartition(".")
    return stem if dot and EXTENSION_FORMATS.get(f".{suffix.lower()}") == "compressed" else part


def build_home(devset: str, mix: float, folders: int, root: Path) -> None:
    """A copy of the dev set's home whose untitled documents' passages are moved toward their path."""
    target = copy_home(devset, root)
    db = sqlite3.connect(target / "babelfind.db")
    rows = db.execute(
        "SELECT p.id, d.path, r.path FROM passages p JOIN documents d ON d.id = p.document_id "
        "JOIN roots r ON r.id = d.root_id JOIN vectors v ON v.passage_id = p.id "
        "WHERE d.title IS NULL AND p.context IS NULL AND p.language IS d.language").fetchall()
    found = [path_title(str(PurePosixPath(path).relative_to(root_path)), folders) for _, path, root_path in rows]
    encoder = load_encoder(bench_search.DEFAULT_MODEL, device="cpu", paths=DataPaths(target))
    started = time.perf_counter()
    vectors = _mixed(_stored(db, rows, encoder.dim), found, encoder, mix)
    print(f"{devset}: {len(rows)} passages with a path context ({len(set(found))} distinct), e.g. "
          f"{sorted(set(found))[:3]}; {time.perf_counter() - started:.0f} s", flush=True)
    db.executemany("UPDATE vectors SET data = ? WHERE passage_id = ?",
                   list(zip(vector_blobs(vectors), [r[0] for r in rows])))
    db.commit()
    db.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mix", type=float, default=0.35)
    parser.add_argument("--folders", type=int, default=2, help="folder names above the file in its context")
    parser.add_argument("--reuse", action="store_true", help="search the copies built by an earlier run")
    args, rest = parser.parse_known_args(argv)
    root = bench_search.OUT / "context-homes" / f"path-mix{args.mix:g}-folders{args.folders}"
    for devset in _devsets(rest):
        bench_search.open_home(devset, "filtered", bench_search.DEFAULT_MODEL)[0].close()
        if not args.reuse:
            build_home(devset, args.mix, args.folders, root)
    bench_search.HOMES = root
    return bench_search.main(rest)


if __name__ == "__main__":
    sys.exit(main())
