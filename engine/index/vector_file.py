"""One-file, crash-safe storage of a FAISS index with its generation number.

    write_index_file(path, faiss_index, generation=7, meta={"kind": "flat", "trained_count": 0})

Layout: [FAISS index bytes][JSON trailer][trailer length u32][trailer CRC32 u32][MAGIC]
(little endian). The trailer comes last because the payload's length and CRC32 are only
known once it is written, and a magic tail makes truncation obvious. Writes go to a temp
file of their own in the same directory, are fsynced, then `os.replace`d over the old file
(engine.atomic), so a crash at any moment leaves either the old or the new complete file
(plus at worst a stray temp file, removed by a later save once it is stale).
"""

from __future__ import annotations

import json
import logging
import os
import struct
import zlib
from pathlib import Path

from engine.atomic import atomic_file
from engine.repairs import move_aside

log = logging.getLogger(__name__)

MAGIC = b"BFVECIX1"
# 2: IVF holds 8-bit codes (IndexIVFScalarQuantizer). Files of format 1 (IVF-Flat float32)
# are an earlier format: not loaded, so the caller rebuilds the index from the database.
FORMAT_VERSION = 2
_TAIL = struct.Struct("<II8s")  # trailer length, trailer CRC32, magic
_CHUNK = 16 << 20  # bytes per read while checking the CRC: bounded memory for big files
_KINDS = {"flat": "IndexIDMap2", "ivf": "IndexIVFScalarQuantizer", "ivf-pq": "IndexIVFPQ"}


def write_index_file(path: Path, faiss_index, *, generation: int, meta: dict) -> None:
    """Atomically replaces `path` with `faiss_index` plus a trailer holding `meta`."""
    import faiss

    crc, size = 0, 0
    move_aside(path)  # a folder there would fail the rename at the end
    with atomic_file(path) as f:

        def write(chunk: bytes) -> int:
            nonlocal crc, size
            f.write(chunk)
            crc, size = zlib.crc32(chunk, crc), size + len(chunk)
            return len(chunk)

        # Streams the index straight to disk: no second in-memory copy of a 1.5 GB index.
        faiss.write_index(faiss_index, faiss.PyCallbackIOWriter(write))
        trailer = dict(meta, format=FORMAT_VERSION, generation=int(generation),
                       dim=int(faiss_index.d), count=int(faiss_index.ntotal),
                       payload_bytes=size, payload_crc32=crc)
        encoded = json.dumps(trailer, sort_keys=True).encode()
        f.write(encoded + _TAIL.pack(len(encoded), zlib.crc32(encoded), MAGIC))


def read_index_file(path: Path, *, expected_generation: int, dim: int):
    """Returns (faiss index, trailer dict), or None when unusable; never raises for bad files."""
    if not path.is_file():
        log.info("no saved vector index at %s", path)
        return None
    try:
        with open(path, "rb") as f:
            trailer = _read_trailer(f, path)
            if trailer is None:
                return None
            if trailer.get("format") != FORMAT_VERSION:
                log.info("saved vector index %s is of an earlier format (%s); rebuilding it as "
                         "format %d", path, trailer.get("format"), FORMAT_VERSION)
                return None
            if trailer.get("generation") != expected_generation:
                # Not damage: the database moved on since this file was saved.
                log.info("saved vector index %s is generation %s, expected %s; rebuilding",
                         path, trailer.get("generation"), expected_generation)
                return None
            problem = _trailer_problem(trailer, dim)
            if problem is None:
                problem = _payload_problem(f, trailer)
            if problem is not None:
                log.warning("ignoring saved vector index %s: %s", path, problem)
                return None
            f.seek(0)
            index = _read_faiss(f, trailer["payload_bytes"])
    except (OSError, ValueError, RuntimeError, KeyError, TypeError, struct.error, MemoryError) as e:
        log.warning("ignoring unreadable vector index %s: %s", path, e)
        return None
    problem = _index_problem(index, trailer)
    if problem is not None:
        log.warning("ignoring saved vector index %s: %s", path, problem)
        return None
    return index, trailer


def damage(path: Path, expected_generation: int, space: str) -> str | None:
    """Why a file that would not load is damaged; None when it is missing or only stale.

    Example: damage(path, 7, PLAIN_SPACE) == "is not a file" for a folder in its place.
    For after a failed `VectorIndex.load`: a stale file (another generation version, or
    vectors of another `space`) is not damage, the app was only stopped before it saved.
    """
    if not os.path.lexists(path):
        return None
    if not path.is_file() or path.is_symlink():
        return "is not a file"
    trailer = read_trailer(path)
    if trailer is None:
        return "is damaged (no valid trailer: cut short or overwritten)"
    if trailer.get("generation") != expected_generation or trailer.get("space", "plain") != space:
        return None
    return "is damaged (its contents fail their checksum or do not match their trailer)"


def read_trailer(path: Path) -> dict | None:
    """The trailer of a saved index file (generation, count, dim...), without loading it.

    None when there is no file or it is not a complete one of ours.
    """
    try:
        with open(path, "rb") as f:
            return _read_trailer(f, path)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, struct.error) as e:
        log.warning("unreadable vector index %s: %s", path, e)
        return None


def _read_trailer(f, path: Path) -> dict | None:
    f.seek(0, os.SEEK_END)
    file_size = f.tell()
    if file_size < _TAIL.size:
        log.warning("ignoring vector index %s: file too short (%d bytes)", path, file_size)
        return None
    f.seek(file_size - _TAIL.size)
    trailer_size, trailer_crc, magic = _TAIL.unpack(f.read(_TAIL.size))
    if magic != MAGIC or trailer_size > file_size - _TAIL.size:
        log.warning("ignoring vector index %s: no valid trailer (truncated or not ours)", path)
        return None
    f.seek(file_size - _TAIL.size - trailer_size)
    encoded = f.read(trailer_size)
    if zlib.crc32(encoded) != trailer_crc:
        log.warning("ignoring vector index %s: trailer checksum mismatch (damaged file)", path)
        return None
    trailer = json.loads(encoded.decode())
    if not isinstance(trailer, dict):
        raise ValueError("trailer is not a JSON object")
    if trailer["payload_bytes"] != file_size - _TAIL.size - trailer_size:
        log.warning("ignoring vector index %s: payload length does not match the file", path)
        return None
    return trailer


def _trailer_problem(trailer: dict, dim: int) -> str | None:
    if trailer["format"] != FORMAT_VERSION:
        return f"format {trailer['format']}, expected {FORMAT_VERSION}"
    if trailer["dim"] != dim:
        return f"dimension {trailer['dim']}, expected {dim}"
    if trailer.get("kind") not in _KINDS:
        return f"unknown kind {trailer.get('kind')!r}"
    if not isinstance(trailer.get("trained_count"), int):
        return "no trained_count"
    return None


def _payload_problem(f, trailer: dict) -> str | None:
    """Checks the CRC before FAISS parses anything: damaged sizes could ask for huge buffers."""
    f.seek(0)
    crc, remaining = 0, trailer["payload_bytes"]
    while remaining > 0:
        chunk = f.read(min(_CHUNK, remaining))
        if not chunk:
            return "file shorter than its payload"
        crc, remaining = zlib.crc32(chunk, crc), remaining - len(chunk)
    return None if crc == trailer["payload_crc32"] else "checksum mismatch (damaged file)"


def _read_faiss(f, payload_bytes: int):
    import faiss

    remaining = payload_bytes

    def read(size: int) -> bytes:
        nonlocal remaining
        chunk = f.read(min(size, remaining))
        remaining -= len(chunk)
        return chunk

    return faiss.read_index(faiss.PyCallbackIOReader(read))


def _index_problem(index, trailer: dict) -> str | None:
    expected_type = _KINDS[trailer["kind"]]
    if type(index).__name__ != expected_type:
        return f"holds a {type(index).__name__}, expected {expected_type}"
    if index.d != trailer["dim"] or index.ntotal != trailer["count"]:
        return "index dimension or count differs from its trailer"
    return None
