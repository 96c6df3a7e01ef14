"""What the extraction limits cost on ordinary documents, and how fast hostile ones are refused.

    python bench/bench_extract_limits.py [--repeats 15]

The baseline is the same extraction in the same process with the zip-archive pass
(directory check + streamed CRC pass, engine/extract/limits.py) switched off; runs
alternate so load on the machine hits both alike. Medians are printed.
"""

from __future__ import annotations

import argparse
import io
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import engine.extract.docx_file as docx_file  # noqa: E402
import engine.extract.epub_file as epub_file  # noqa: E402
import engine.extract.odt_file as odt_file  # noqa: E402
from engine.errors import ExtractionError  # noqa: E402
from engine.extract import extract_data  # noqa: E402
from engine.extract.limits import Budget  # noqa: E402

WORDS = "honey bees dance glaciers retreat bread rises slowly rivers flow mountains valleys".split()


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20))).capitalize() + "."


def make_docx(rng: random.Random) -> bytes:
    """A 2,000-paragraph report with a 2 MB (incompressible) picture part."""
    import docx

    doc = docx.Document()
    for i in range(2000):
        doc.add_paragraph(" ".join(sentence(rng) for _ in range(3)))
    buffer = io.BytesIO()
    doc.save(buffer)
    import zipfile

    with zipfile.ZipFile(buffer, "a") as zf:
        zf.writestr("word/media/photo.bin", rng.randbytes(2 << 20))
    return buffer.getvalue()


def make_odt(rng: random.Random) -> bytes:
    from odf.opendocument import OpenDocumentText
    from odf.text import P

    doc = OpenDocumentText()
    for _ in range(2000):
        doc.text.addElement(P(text=" ".join(sentence(rng) for _ in range(3))))
    buffer = io.BytesIO()
    doc.save(buffer)
    return buffer.getvalue()


def make_epub(rng: random.Random) -> bytes:
    from hostile_docs import EPUB_CONTAINER, EPUB_METADATA, zip_bytes

    chapters = {f"OEBPS/c{i}.xhtml": "<html xmlns='http://www.w3.org/1999/xhtml'><body>"
                + "".join(f"<p>{sentence(rng)}</p>" for _ in range(300)) + "</body></html>" for i in range(20)}
    manifest = "".join(f"<item id='c{i}' href='c{i}.xhtml' media-type='application/xhtml+xml'/>" for i in range(20))
    spine = "".join(f"<itemref idref='c{i}'/>" for i in range(20))
    package = (f"<?xml version='1.0'?><package xmlns='http://www.idpf.org/2007/opf' version='3.0' "
               f"unique-identifier='id'>{EPUB_METADATA}<manifest>{manifest}</manifest><spine>{spine}</spine></package>")
    return zip_bytes({"mimetype": "application/epub+zip", "META-INF/container.xml": EPUB_CONTAINER,
                      "OEBPS/content.opf": package, **chapters})


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def overhead(name: str, data: bytes, repeats: int) -> None:
    modules = (docx_file, odt_file, epub_file)
    real = [m.check_archive for m in modules]
    with_check, without = [], []
    for _ in range(repeats):
        with_check.append(timed(lambda: extract_data(Path(name), data)))
        for m in modules:
            m.check_archive = lambda *args: None
        without.append(timed(lambda: extract_data(Path(name), data)))
        for m, fn in zip(modules, real):
            m.check_archive = fn
    alone = [timed(lambda: real[0](Path(name), data, Budget.start(Path(name)), "ZIP")) for _ in range(repeats)]
    a, b = statistics.median(with_check), statistics.median(without)
    print(f"| {name} ({len(data) / 2**20:.1f} MB) | {b * 1000:.0f} ms | {a * 1000:.0f} ms | {a / b:.2f}x "
          f"| {statistics.median(alone) * 1000:.1f} ms |")


def refusal(name: str, path: Path, repeats: int) -> None:
    data = path.read_bytes()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        try:
            extract_data(path, data)
        except ExtractionError as e:
            reason = e.reason
        times.append(time.perf_counter() - start)
    print(f"| {name} ({len(data) / 1024:.0f} KB) | {statistics.median(times) * 1000:.0f} ms | {reason} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    rng = random.Random(0)
    print("| document | without archive pass | with it | ratio | archive pass alone |\n|---|---|---|---|---|")
    for name, make in (("report.docx", make_docx), ("report.odt", make_odt), ("book.epub", make_epub)):
        overhead(name, make(rng), args.repeats)

    import tempfile

    from hostile_docs import DOCX_MEMBERS, shared_page_pdf, write_zip_with_raw_member

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        bomb = write_zip_with_raw_member(folder / "bomb.docx", [(k, v) for k, v in DOCX_MEMBERS.items()
                                                                 if k != "word/document.xml"],
                                         "word/document.xml", 2 << 30)
        print("\n| hostile document | time to refuse | reason |\n|---|---|---|")
        refusal("2 GiB zip bomb", bomb, args.repeats)
        refusal("99,000 shared pages", shared_page_pdf(folder / "pages.pdf"), args.repeats)


if __name__ == "__main__":
    main()
