"""Probe, not in the product: passages encoded with their title and section heading.

Measured through the real search of bench_search's dev-set homes (docs/benchmarks.md,
"Passages encoded with their section heading"):

    BABELFIND_TEST_MODELS=<models> python bench/probe_passage_context.py \
        --form heading+title --mix 0.35 --same-language --devsets xling manual5 --modes fused

A passage is encoded alone, so a paragraph of the DHCP section that never says "DHCP" (or
says it in Russian) carries none of what the section is about. Here each passage of a
dev-set home is encoded again as "<context>: <passage>", where the context is

  title          the document's title (HTML <title>, PDF metadata: documents.title)
  heading+title  the title and the nearest section heading (h1-h6) at or before the
                 passage, "title / heading"; a passage holding three or more of the
                 document's headings is a table of contents and gets the title only

and, with --same-language, only for passages in their document's language (an English
paragraph left untranslated in a Russian chapter keeps its text alone). With --mix
lambda, the context is encoded on its own instead and added to the stored passage
vector, normalise(v + lambda v_context); with --heading-mix too, the title and the heading
are two vectors, weighing --mix and --heading-mix. The stored text is not changed, nor
the queries. Headings are read from the dev set's HTML files with selectolax and found in
the passages in order, as an extractor that kept their offsets would place them.

Each home is copied to bench/out/context-homes/<setting>/ (SQLite: the vectors are rewritten
in place, and the side files are left to be rebuilt from them), then bench_search runs on
the copies with the same arguments it takes (--modes, --spaces, --per-query, ...). Dev
sets whose passages get no context (no titles, no HTML) are encoded the same and need no
run.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_search  # noqa: E402  (puts the checkout on sys.path)

from engine.config import DataPaths  # noqa: E402
from engine.models import load_encoder  # noqa: E402
from engine.store.vector_blobs import decode_vectors, vector_blobs  # noqa: E402

FORMS = ("title", "heading+title")
TABLE_OF_CONTENTS = 3  # headings in one passage that make it a table of contents
LOOK_AHEAD = 4  # headings searched past the current one (a heading text may repeat later)
BATCH = 64


def _normal(text: str) -> str:
    return " ".join(text.split()).casefold()


def html_headings(path: Path) -> list[str]:
    """The h1-h6 texts of an HTML file, in document order ([] for any other file)."""
    if path.suffix.lower() not in (".html", ".htm") or not path.is_file():
        return []
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(path.read_bytes().decode("utf-8", "replace"))
    texts = (" ".join(node.text().split()) for node in tree.css("h1, h2, h3, h4, h5, h6"))
    return [text for text in texts if text]


def section_headings(passages: list[str], headings: list[str]) -> list[str | None]:
    """The section heading each of one document's passages (in order) falls under."""
    current, following, out = None, 0, []
    wanted = [_normal(h) for h in headings]
    for text in passages:
        body = _normal(text)
        ahead = [i for i in range(following, min(len(wanted), following + LOOK_AHEAD)) if wanted[i] in body]
        if ahead and sum(h in body for h in wanted) < TABLE_OF_CONTENTS:
            current, following = headings[ahead[-1]], ahead[-1] + 1
        out.append(current)
    return out


def titles_and_headings(rows: list[tuple], same_language: bool) -> list[tuple[str | None, str | None]]:
    """(title, section heading unless it is the title) of each passage row (id, text, path,
    title, passage language, document language), rows grouped by document in passage
    order; (None, None) with `same_language` for a passage in another language than its
    document's."""
    out: list[tuple[str | None, str | None]] = []
    start = 0
    while start < len(rows):
        end = start
        while end < len(rows) and rows[end][2] == rows[start][2]:
            end += 1
        document = rows[start:end]
        title = document[0][3] or None
        headings = section_headings([r[1] for r in document], html_headings(Path(document[0][2])))
        for row, heading in zip(document, headings):
            if heading and title is not None and _normal(heading) == _normal(title):
                heading = None
            out.append((None, None) if same_language and row[4] != row[5] else (title, heading))
        start = end
    return out


def contexts(parts: list[tuple[str | None, str | None]], form: str) -> list[str | None]:
    """One context string per passage: its title, or "title / heading"."""
    if form == "title":
        return [title for title, _ in parts]
    return [f"{title} / {heading}" if title and heading else heading or title for title, heading in parts]


def copy_home(devset: str, root: Path) -> Path:
    """A copy of the dev set's home under `root`, its side files left to be rebuilt from
    the stored vectors (which the caller rewrites)."""
    source, target = bench_search.HOMES / f"{devset}-filtered", root / f"{devset}-filtered"
    shutil.rmtree(target, ignore_errors=True)
    (target / "indexes").mkdir(parents=True)
    for name in ("babelfind.db", "bench-stamp.json", "settings.json", "indexes/keywords.sqlite"):
        shutil.copy2(source / name, target / name)
    (target / "models").symlink_to(bench_search.models_folder(), target_is_directory=True)
    return target


def build_home(devset: str, form: str, same_language: bool, mix: float, heading_mix: float, root: Path) -> None:
    """A copy of the dev set's home whose passages are encoded with their context."""
    target = copy_home(devset, root)
    db = sqlite3.connect(target / "babelfind.db")
    rows = db.execute(
        "SELECT p.id, p.text, d.path, d.title, p.language, d.language FROM passages p "
        "JOIN documents d ON d.id = p.document_id JOIN vectors v ON v.passage_id = p.id "
        "ORDER BY p.document_id, p.ordinal").fetchall()
    parts = titles_and_headings(rows, same_language)
    found = contexts(parts, form)
    encoder = load_encoder(bench_search.DEFAULT_MODEL, device="cpu", paths=DataPaths(target))
    started = time.perf_counter()
    if heading_mix:  # title and heading as two vectors, each with its weight
        stored = _stored(db, rows, encoder.dim)
        vectors = _mixed(_mixed(stored, [t for t, _ in parts], encoder, mix, False),
                         [h for _, h in parts], encoder, heading_mix)
    elif mix:
        vectors = _mixed(_stored(db, rows, encoder.dim), found, encoder, mix)
    else:
        vectors = _encode(encoder, [f"{c}: {row[1]}" if c else row[1] for c, row in zip(found, rows)])
    changed = sum(context is not None for context in found)
    print(f"{devset}: {changed} of {len(rows)} passages with a context, encoded in "
          f"{time.perf_counter() - started:.0f} s", flush=True)
    db.executemany("UPDATE vectors SET data = ? WHERE passage_id = ?", list(zip(vector_blobs(vectors), [r[0] for r in rows])))
    db.commit()
    db.close()


def _encode(encoder, texts: list[str]) -> np.ndarray:
    return np.concatenate([encoder.encode(texts[i:i + BATCH], kind="passage") for i in range(0, len(texts), BATCH)])


def _stored(db, rows: list[tuple], dim: int) -> np.ndarray:
    stored = dict(db.execute("SELECT passage_id, data FROM vectors"))
    return decode_vectors([stored[row[0]] for row in rows], dim).copy()


def _mixed(vectors: np.ndarray, found: list[str | None], encoder, mix: float, normalise: bool = True) -> np.ndarray:
    """`vectors` plus `mix` times each one's context's own vector (re-normalised)."""
    distinct = sorted({c for c in found if c})
    encoded = dict(zip(distinct, _encode(encoder, distinct))) if distinct else {}
    vectors = vectors.copy()
    for i, context in enumerate(found):
        if context:
            vectors[i] += mix * encoded[context]
    if not normalise:
        return vectors
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--form", choices=FORMS, default="heading+title")
    parser.add_argument("--same-language", action="store_true",
                        help="a context only for passages in their document's language")
    parser.add_argument("--mix", type=float, default=0.0,
                        help="instead of encoding the context with the passage, add this times the "
                             "context's own vector to the stored passage vector")
    parser.add_argument("--heading-mix", type=float, default=0.0,
                        help="with --mix: the title's vector weighs --mix and the heading's this")
    parser.add_argument("--reuse", action="store_true", help="search the copies built by an earlier run")
    args, rest = parser.parse_known_args(argv)
    root = bench_search.OUT / "context-homes" / _setting_name(args)
    for devset in _devsets(rest):
        bench_search.open_home(devset, "filtered", bench_search.DEFAULT_MODEL)[0].close()  # the source home exists
        if not args.reuse:
            build_home(devset, args.form, args.same_language, args.mix, args.heading_mix, root)
    bench_search.HOMES = root
    return bench_search.main(rest)


def _setting_name(args) -> str:
    name = args.form + ("+same-language" if args.same_language else "")
    if args.mix:
        name += f"+mix{args.mix:g}" + (f"+heading{args.heading_mix:g}" if args.heading_mix else "")
    return name


def _devsets(argv: list[str]) -> list[str]:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--devsets", nargs="+", default=list(bench_search.DEVSETS))
    return parser.parse_known_args(argv)[0].devsets


if __name__ == "__main__":
    sys.exit(main())
