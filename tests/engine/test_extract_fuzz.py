"""Fuzzing the extractors: a mutated document either extracts or fails with one of our errors.

Small valid documents of every format are mutated (bytes flipped, cut, inserted,
repeated; for zip containers also inside one member, re-zipped, so the XML parsers see
the damage). Only success or an `ExtractionError` subclass is accepted: any other
exception would end an indexing run or print a traceback.

The run is seeded and bounded by time: 4 seconds in the normal suite (slow tests run
there too, so no longer run is marked slow). For a long run set BABELFIND_FUZZ_SECONDS,
and BABELFIND_FUZZ_SEED for other mutations.
"""

from __future__ import annotations

import io
import os
import random
import time
import zipfile
from pathlib import Path

import pytest
from hostile_docs import seed_documents, zip_bytes

from engine.config import ExtractLimits
from engine.errors import ExtractionError
from engine.extract import extract_data, extract_tree

TOKENS = [b"<", b">", b"&", b"&#0;", b"\x00", b"\xff\xfe", b"]]>", b"<!--", b"%%EOF", b"obj", b"endobj",
          b" 0 R", b"stream", b"/Kids", b"/Count 99999999", b"-1", b"99999999999999999999", b"\r", b"PK\x03\x04",
          b"<w:t>", b"</w:p>", b"<text:p>", b"<itemref idref='x'/>", b"\xc3", b"\xed\xa0\x80"]
LIMITS = ExtractLimits(max_seconds=5.0, max_pages=200, max_unpacked_bytes=32 << 20, max_member_bytes=16 << 20)
ZIP_FORMATS = (".docx", ".odt", ".epub", ".xlsx", ".ods", ".pptx", ".odp", ".zip")


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    """One to three random edits of `data`."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        where = rng.randrange(len(out) + 1)
        kind = rng.randrange(6)
        if kind == 0 and out:  # flip some bytes
            for _ in range(rng.randint(1, 8)):
                out[rng.randrange(len(out))] = rng.randrange(256)
        elif kind == 1:  # cut the end off
            del out[where:]
        elif kind == 2:  # insert a token the parsers care about
            out[where:where] = rng.choice(TOKENS) * rng.randint(1, 4)
        elif kind == 3:  # delete a range
            del out[where:where + rng.randint(1, 64)]
        elif kind == 4 and out:  # repeat a range
            start = rng.randrange(len(out))
            out[where:where] = out[start:start + rng.randint(1, 256)] * rng.randint(1, 8)
        else:  # random junk
            out[where:where] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 32)))
        if not out:
            out = bytearray(b"x")
    return bytes(out)


def mutate_member(data: bytes, rng: random.Random) -> bytes:
    """Re-zips the container with one member mutated (or dropped, or a member added)."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        members = {info.filename: zf.read(info) for info in zf.infolist()}
    name = rng.choice(sorted(members))
    choice = rng.randrange(8)
    if choice == 0:
        del members[name]
    elif choice == 1:
        members["extra/" + name] = members[name]
    else:
        members[name] = mutate_bytes(members[name], rng)
    return zip_bytes(members)


def mutate(name: str, data: bytes, rng: random.Random) -> bytes:
    if name.endswith(ZIP_FORMATS) and rng.random() < 0.7:
        return mutate_member(data, rng)
    return mutate_bytes(data, rng)


def fuzz(seconds: float, seed: int, tmp_path: Path, documents: dict[str, bytes] | None = None) -> int:
    """Runs mutations until `seconds` pass; returns how many ran. Fails on an untyped error.

    Every mutation is read as indexing reads it: the file and every member inside it.
    """
    rng = random.Random(seed)
    seeds = sorted((documents or seed_documents()).items())
    deadline = time.monotonic() + seconds
    runs = 0
    while time.monotonic() < deadline:
        name, original = seeds[runs % len(seeds)]
        data = mutate(name, original, rng)
        try:
            for document in extract_tree(Path(name), data, limits=LIMITS):
                assert document.error is None or (document.error.reason and isinstance(document.error.reason, str))
        except ExtractionError as e:
            assert e.reason and isinstance(e.reason, str)
        except Exception as e:  # noqa: BLE001 -- the point of the test
            kept = tmp_path / f"crash-{seed}-{runs}-{name}"
            kept.write_bytes(data)
            pytest.fail(f"{name} run {runs} (seed {seed}) raised {type(e).__name__}: {e}; input kept in {kept}")
        runs += 1
    return runs


def test_every_seed_document_is_valid():
    for name, data in seed_documents().items():
        assert "bees" in extract_data(Path(name), data).text.lower(), name


def test_mutated_documents_give_only_typed_errors(tmp_path):
    seconds = float(os.environ.get("BABELFIND_FUZZ_SECONDS", "4"))
    seed = int(os.environ.get("BABELFIND_FUZZ_SEED", "20261201"))
    assert fuzz(seconds, seed, tmp_path) >= 9  # every format at least once



def new_format_documents(tmp_path: Path) -> dict[str, bytes]:
    """Spreadsheets, slides, RTF, mail, an archive and code, written by their libraries."""
    import format_docs as docs

    made = {
        "a.xlsx": docs.make_xlsx(tmp_path / "a.xlsx"), "a.ods": docs.make_ods(tmp_path / "a.ods"),
        "a.pptx": docs.make_pptx(tmp_path / "a.pptx"), "a.odp": docs.make_odp(tmp_path / "a.odp"),
        "a.rtf": docs.make_rtf(tmp_path / "a.rtf"), "a.eml": docs.make_eml(tmp_path / "a.eml", tmp_path),
        "a.mbox": docs.make_mbox(tmp_path / "a.mbox"), "a.msg": docs.make_msg(tmp_path / "a.msg"),
        "a.zip": docs.make_zip(tmp_path / "a.zip", tmp_path), "a.xls": docs.FIXTURES / "prices.xls",
    }
    documents = {name: path.read_bytes() for name, path in made.items()}
    documents["a.py"] = docs.PYTHON_SOURCE.encode()
    documents["a.srt"] = docs.SRT_TEXT.encode()
    return documents


def test_mutated_spreadsheets_slides_mail_and_archives_give_only_typed_errors(tmp_path):
    seconds = float(os.environ.get("BABELFIND_FUZZ_SECONDS", "4"))
    seed = int(os.environ.get("BABELFIND_FUZZ_SEED", "20261202"))
    assert fuzz(seconds, seed, tmp_path, new_format_documents(tmp_path)) >= 12
