"""Path keys: collision-free, reversible, unchanged for ordinary names; old databases migrate."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa
from helpers import WordEncoder, database_at_revision

from engine.config import data_paths
from engine.library import Library
from engine.scan import key_path, path_key
from engine.store import Store

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="Linux file names are bytes")


def named(raw: bytes) -> Path:
    return Path(os.fsdecode(raw))


def test_ordinary_names_are_stored_unchanged():
    for text in ("/home/me/notes.txt", "/home/me/Grüße/日本語.md", "/home/me/a\\b c.txt", "/x/back\\"):
        assert path_key(Path(text)) == text


@linux_only
def test_keys_are_text_and_give_the_exact_name_back():
    rng = random.Random(7)
    pieces = [b"\\", b"x", b"u", b"d", b"8", b"f", b"e9", b"a", b"\xff", b"\xe9", b"\xc3\xa9", b"\xed\xa0\x80"]
    owners: dict[str, bytes] = {}
    for _ in range(20_000):
        raw = b"/r/" + b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 9))) + b"/n"
        key = path_key(named(raw))
        key.encode("utf-8")  # storable as text
        assert os.fsencode(key_path(key)) == raw
        assert owners.setdefault(key, raw) == raw, f"{raw!r} and {owners[key]!r} share the key {key!r}"


@linux_only
def test_escaped_bytes_and_a_literal_escape_get_different_keys():
    as_bytes = path_key(named(b"/n/coll\xff.txt"))
    literal = path_key(Path("/n/coll\\xff.txt"))
    assert as_bytes == "/n/coll\\xff.txt"
    assert literal == "/n/coll\\\\xff.txt"
    assert key_path(literal) == Path("/n/coll\\xff.txt")


@linux_only
def test_a_folder_key_prefixes_its_files_keys():
    for folder in (b"/r/caf\xe9", b"/r/end\\", b"/r/x\\\\u", b"/r/plain"):
        for name in (b"a.txt", b"\\xff.txt", b"\xff\\.txt", b"u"):
            assert path_key(named(folder + b"/" + name)).startswith(path_key(named(folder)) + "/")


@linux_only
def test_colliding_names_are_both_indexed(babelfind_home, tmp_path):
    corpus = tmp_path / "collide"
    corpus.mkdir()
    with open(os.fsencode(corpus) + b"/coll\xff.txt", "wb") as f:
        f.write(b"Honey bees dance to tell the hive where flowers are.")
    (corpus / "coll\\xff.txt").write_text("Glaciers carve valleys over thousands of years.", encoding="utf-8")
    (corpus / "good.txt").write_text("Sourdough bread rises slowly overnight.", encoding="utf-8")
    library = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    try:
        summary = list(library.index_paths([corpus]))[-1].summary
        assert (summary.indexed, summary.skipped) == (3, ())
        again = list(library.index_paths([corpus]))[-1].summary
        assert (again.indexed, again.unchanged, again.removed) == (0, 3, 0)
        hit = library.search("honey bees dance hive flowers")[0]
        assert os.fsencode(key_path(hit.path)).endswith(b"/coll\xff.txt")
        assert library.document_text(hit.path).text.startswith("Honey bees dance")
    finally:
        library.close()


OLD_KEYS = {
    "/r/plain.txt": "/r/plain.txt",
    "/r/caf\\xe9.txt": "/r/caf\\xe9.txt",  # bytes caf<E9>: un-escaped it is not UTF-8
    "/r/a\\b\\xff.txt": "/r/a\\b\\xff.txt",  # bytes with a literal backslash before b
    "/r/lit\\xc3\\xa9.txt": "/r/lit\\\\xc3\\\\xa9.txt",  # un-escaped it is UTF-8: a literal name
    "/r/w\\\\x.txt": "/r/w\\\\\\\\x.txt",  # a literal name with two backslashes: both doubled
    "/r/b\\\\xff.txt": "/r/b\\\\\\xff.txt",  # bytes b\<FF>: the literal backslash now doubled
}


def _write_revision_0001(url: str, rows: dict[str, str]) -> None:
    with database_at_revision(url, "0001") as connection:
        connection.execute(sa.text(
            "INSERT INTO roots (id, path, watch, added_at) VALUES (1, '/r', 0, '2026-01-01')"))
        for number, old in enumerate(rows, start=1):
            connection.execute(
                sa.text("INSERT INTO documents (id, root_id, path, size, mtime, file_type, status, indexed_at) "
                        "VALUES (:id, 1, :path, 1, 0, 'txt', 'indexed', '2026-01-01')"),
                {"id": number, "path": old},
            )


@pytest.mark.skipif(os.name == "nt", reason="Windows keys had no escapes before")
def test_migration_rewrites_old_keys(tmp_path):
    url = f"sqlite:///{tmp_path / 'old.db'}"
    _write_revision_0001(url, OLD_KEYS)
    store = Store.open(url)
    try:
        with store.engine.connect() as connection:
            stored = dict(connection.execute(sa.text("SELECT id, path FROM documents ORDER BY id")).all())
        assert list(stored.values()) == list(OLD_KEYS.values())
        assert os.fsencode(key_path(stored[2])) == b"/r/caf\xe9.txt"
        assert os.fsencode(key_path(stored[6])) == b"/r/b\\\xff.txt"
        assert key_path(stored[4]) == Path("/r/lit\\xc3\\xa9.txt")
    finally:
        store.close()
