"""Extraction cost per format, and the share of a real folder's files that get indexed.

    python bench/bench_formats.py cost                     # ms per document and per page
    python bench/bench_formats.py share /usr/share/doc     # files indexed, by outcome

`cost` writes one document of each format (tests/format_docs.py builders, scaled up to
realistic sizes), extracts it through engine.extract.extract_tree (what indexing runs:
members included) `--repeat` times, and reports the median time per document, per
unit (page, sheet row block, slide, message, member) and per 1,000 characters of
text, next to plain .txt of the same text in the same session (the baseline ratio).

`share` indexes FOLDER into a throw-away home with a hashed-words encoder (no model:
the encoder is not what is measured) and counts the files on disk whose text is
searchable (the file itself, or any document inside it), by extension, with the
skip reasons of the rest. Run it from two checkouts (before and after a change) to
compare; docs/benchmarks.md gives both.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import time
import zipfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))


def _sentences(count: int) -> list[str]:
    words = ("honey bees glaciers railway harbour telescope saffron lighthouse quince orchard "
             "schooner caravan meltwater sourdough cardamom engine budget treasury").split()
    return [" ".join(words[(i * 7 + j) % len(words)] for j in range(12)).capitalize() + "." for i in range(count)]


def build(folder: Path) -> dict[str, tuple[Path, int, str]]:
    """{label: (file, units, unit name)} of one realistic document per format."""
    import mailbox
    import tarfile

    import format_docs as docs
    import openpyxl
    import pptx

    folder.mkdir(parents=True, exist_ok=True)
    lines = _sentences(2000)
    built: dict[str, tuple[Path, int, str]] = {}
    (folder / "plain.txt").write_text("\n".join(lines), encoding="utf-8")
    built["txt (baseline)"] = (folder / "plain.txt", 1, "document")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Item", "Place", "Amount", "Note"])
    for i, line in enumerate(lines):
        sheet.append([f"item {i}", line[:30], i * 1.5, line])
    book.save(folder / "rows.xlsx")
    built["xlsx, 2,000 rows x 4"] = (folder / "rows.xlsx", 20, "100 rows")
    deck = pptx.Presentation()
    for i in range(30):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"Slide {i}"
        slide.placeholders[1].text = " ".join(lines[i * 5:(i + 1) * 5])
        slide.notes_slide.notes_text_frame.text = lines[i]
    deck.save(folder / "deck.pptx")
    built["pptx, 30 slides"] = (folder / "deck.pptx", 30, "slide")
    docs.make_odp(folder / "deck.odp")
    built["odp, 2 slides"] = (folder / "deck.odp", 2, "slide")
    docs.make_ods(folder / "small.ods")
    built["ods, 2 sheets"] = (folder / "small.ods", 2, "sheet")
    built["xls (fixture), 3 sheets"] = (docs.FIXTURES / "prices.xls", 3, "sheet")
    rtf = r"{\rtf1\ansi " + r"\par ".join(lines[:500]) + "}"
    (folder / "memo.rtf").write_text(rtf, encoding="ascii")
    built["rtf, 500 paragraphs"] = (folder / "memo.rtf", 500, "paragraph")
    built["doc (fixture, antiword)"] = (docs.FIXTURES / "murano.doc", 1, "document")
    docs.make_eml(folder / "mail.eml", folder)
    built["eml + docx + pdf attached"] = (folder / "mail.eml", 3, "document")
    box = mailbox.mbox(str(folder / "box.mbox"))
    for i in range(200):
        box.add(docs.message(f"Message {i}", "\n".join(lines[i * 3:(i + 1) * 3])))
    box.close()
    built["mbox, 200 messages"] = (folder / "box.mbox", 200, "message")
    docs.make_msg(folder / "figures.msg")
    built["msg + 1 attachment"] = (folder / "figures.msg", 2, "document")
    with zipfile.ZipFile(folder / "texts.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        for i in range(100):
            zf.writestr(f"notes/n{i}.txt", "\n".join(lines[i * 10:(i + 1) * 10]))
    built["zip, 100 text members"] = (folder / "texts.zip", 100, "member")
    with tarfile.open(folder / "texts.tar.gz", "w:gz") as tar:
        for i in range(100):
            data = "\n".join(lines[i * 10:(i + 1) * 10]).encode()
            info = tarfile.TarInfo(f"notes/n{i}.txt")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    built["tar.gz, 100 text members"] = (folder / "texts.tar.gz", 100, "member")
    (folder / "module.py").write_text((docs.PYTHON_SOURCE + "\n") * 150, encoding="utf-8")
    built["py, 1,500 lines"] = (folder / "module.py", 1, "document")
    cues = "".join(f"{i}\n00:00:{i % 60:02d},000 --> 00:00:{i % 60:02d},900\n{lines[i]}\n\n" for i in range(1, 1000))
    (folder / "film.srt").write_text(cues, encoding="utf-8")
    built["srt, 1,000 cues"] = (folder / "film.srt", 1, "document")
    return built


def cost(repeat: int) -> None:
    from engine.extract import extract_tree

    with tempfile.TemporaryDirectory() as tmp:
        built = build(Path(tmp))
        rows = []
        for label, (path, units, unit) in built.items():
            data = path.read_bytes()
            times, chars = [], 0
            for _ in range(repeat):
                started = time.perf_counter()
                documents = list(extract_tree(path, data))
                times.append(time.perf_counter() - started)
            chars = sum(len(d.extracted.text) for d in documents if d.extracted)
            errors = [d.error.reason for d in documents if d.error]
            rows.append((label, statistics.median(times) * 1000, units, unit, chars, errors))
    base = rows[0][1] / max(rows[0][4], 1) * 1000
    print("| format | ms / document | ms / unit | ms / 1,000 chars | x plain text | documents read |")
    print("|---|---|---|---|---|---|")
    for label, ms, units, unit, chars, errors in rows:
        per_k = ms / max(chars, 1) * 1000
        note = f" ({errors[0]})" if errors else ""
        print(f"| {label} | {ms:.1f} | {ms / units:.2f} per {unit} | {per_k:.3f} | {per_k / base:.1f} | "
              f"{chars:,} chars{note} |")


def share(folder: Path, limit_files: int | None) -> None:
    from helpers import WordEncoder

    from engine.config import data_paths
    from engine.library import Library

    with tempfile.TemporaryDirectory() as home:
        library = Library.open(data_paths(Path(home)), encoder=WordEncoder())
        started = time.monotonic()
        summary = list(library.index_paths([folder]))[-1].summary
        seconds = time.monotonic() - started
        with library.store.session() as s:
            from sqlalchemy import select

            from engine.store.schema import Document, Passage

            searchable = {row[0] for row in s.execute(select(Document.path).join(Passage).distinct())}
        library.close()
    files = [p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()
             and not any(part.startswith(".") for part in p.relative_to(folder).parts)]
    on_disk = {str(f) for f in files}
    indexed_keys = {_file_of(key, on_disk) for key in searchable} - {None}
    indexed = [f for f in files if str(f) in indexed_keys]
    by_ext = Counter(f.suffix.lower() or "(none)" for f in files)
    got = Counter(f.suffix.lower() or "(none)" for f in indexed)
    print(f"{folder}: {len(indexed):,} of {len(files):,} files searchable ({len(indexed) / len(files):.1%}), "
          f"{summary.passages:,} passages, {seconds:.0f} s")
    print("| extension | files | searchable |")
    print("|---|---|---|")
    for ext, count in by_ext.most_common(25):
        print(f"| {ext} | {count:,} | {got[ext]:,} |")
    reasons = Counter(_reason_kind(s.reason) for s in summary.skipped)
    print("skip reasons:", "; ".join(f"{r}: {n:,}" for r, n in reasons.most_common(12)))


def _file_of(key: str, on_disk: set[str]) -> str | None:
    """The file on disk a stored key belongs to: the key itself, or the longest prefix that is a file."""
    parts = key.split("/")
    for end in range(len(parts), 1, -1):
        candidate = "/".join(parts[:end])
        if candidate in on_disk:
            return candidate
    return None


def _reason_kind(reason: str) -> str:
    return reason.split(":")[0].split("(")[0].strip()[:60]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("cost")
    c.add_argument("--repeat", type=int, default=5)
    s = sub.add_parser("share")
    s.add_argument("folder", type=Path)
    s.add_argument("--limit", type=int)
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    if args.command == "cost":
        cost(args.repeat)
    else:
        share(args.folder.resolve(), args.limit)


if __name__ == "__main__":
    main()
