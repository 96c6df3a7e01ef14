"""Archives (.zip, .tar, .tar.gz/.tgz/.tar.bz2/.tar.xz) and single compressed files (.gz .bz2 .xz).

    >>> [m.name for m in archive_members("zip", Path("a.zip"), data, budget)]
    ['inside/report.pdf', 'notes.txt']

The standard library's zipfile, tarfile, gzip/bz2/lzma do the unpacking. Every member
is counted against the document's limits before it is read (its declared size), and
read with a cap at that size, so a directory that lies cannot unpack more. A tar
stream cannot skip a member without unpacking it, so a member over the limits ends
the archive there (the members before it are kept).
"""

from __future__ import annotations

import bz2
import io
import lzma
import tarfile
import time
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

from engine.errors import CorruptDocumentError, EncryptedDocumentError
from engine.extract.limits import Budget
from engine.extract.members import Member, MemberNames, member_path

_BLOCK = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"
BZIP2_MAGIC = b"BZh"
XZ_MAGIC = b"\xfd7zXZ\x00"
_ZIP_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)
_DAMAGED = (zipfile.BadZipFile, tarfile.TarError, zlib.error, lzma.LZMAError, EOFError, OSError, ValueError)


def is_tar(data: bytes) -> bool:
    """A POSIX or GNU tar header: "ustar" at offset 257."""
    return data[257:262] == b"ustar"


def is_compressed(data: bytes) -> bool:
    return data.startswith((GZIP_MAGIC, XZ_MAGIC)) or (data[:3] == BZIP2_MAGIC and data[3:4].isdigit())


def archive_members(fmt: str, path: Path, data: bytes, budget: Budget) -> Iterator[Member]:
    """Members of a zip, a tar (compressed or not) or a single compressed file."""
    try:
        if fmt == "zip":
            yield from _zip_members(path, data, budget)
        elif fmt == "tar" or _holds_tar(data):
            yield from _tar_members(path, data, budget)
        else:
            yield _single_member(path, data, budget)
    except _DAMAGED as e:
        raise CorruptDocumentError(path, f"damaged {fmt} archive ({type(e).__name__}: {e})") from e


def _mtime(date_time: tuple[int, ...]) -> float | None:
    try:
        return time.mktime((*date_time, 0, 0, -1))
    except (OverflowError, ValueError):
        return None


def _zip_members(path: Path, data: bytes, budget: Budget) -> Iterator[Member]:
    names = MemberNames()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for number, info in enumerate(zf.infolist(), start=1):
            budget.check_time()
            if info.is_dir():
                continue
            name = names.add(info.filename, f"member-{number}")
            budget.add_member(name, info.file_size)
            mtime = _mtime(info.date_time)
            if info.flag_bits & 0x1:
                yield Member(name, b"", mtime, EncryptedDocumentError(
                    member_path(path, name), "encrypted archive member (zip password)"))
            elif info.compress_type not in _ZIP_METHODS:
                yield Member(name, b"", mtime, CorruptDocumentError(
                    member_path(path, name), f"unsupported zip compression method {info.compress_type}"))
            else:
                yield Member(name, _read_capped(zf.open(info), info.file_size, budget), mtime)


def _read_capped(stream, size: int, budget: Budget) -> bytes:
    """At most `size` bytes of `stream`, block by block, looking at the clock between blocks."""
    chunks = []
    left = size
    with stream:
        while left > 0 and (block := stream.read(min(_BLOCK, left))):
            chunks.append(block)
            left -= len(block)
            budget.check_time()
    return b"".join(chunks)


def _tar_members(path: Path, data: bytes, budget: Budget) -> Iterator[Member]:
    names = MemberNames()
    # "r|*": a stream, members in order, any compression; no seeking back over gzip data
    with tarfile.open(fileobj=io.BytesIO(data), mode="r|*") as tar:
        for number, info in enumerate(tar, start=1):
            budget.check_time()
            if not info.isfile():
                continue
            name = names.add(info.name, f"member-{number}")
            budget.add_member(name, info.size)
            stream = tar.extractfile(info)
            content = _read_capped(stream, info.size, budget) if stream is not None else b""
            yield Member(name, content, float(info.mtime) if info.mtime else None)


def _decompressor(data: bytes):
    if data.startswith(GZIP_MAGIC):
        return zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # gzip header and trailer
    if data.startswith(XZ_MAGIC):
        return lzma.LZMADecompressor()
    return bz2.BZ2Decompressor()


def _holds_tar(data: bytes) -> bool:
    """Whether a compressed file unpacks to a tar archive (its first 512 bytes tell)."""
    head = _decompressor(data).decompress(data[:65536], 1024)
    return is_tar(head)


def _single_member(path: Path, data: bytes, budget: Budget) -> Member:
    """changelog.gz holds changelog: one member, unpacked with a cap at the size limits.

    Concatenated gzip streams (`cat a.gz b.gz`) are one file, as gunzip reads them.
    """
    name = MemberNames().add(Path(path).stem or "content", "content")
    limits = budget.limits
    limit = min(limits.max_member_bytes, limits.max_unpacked_bytes - budget.unpacked_bytes)
    out = bytearray()
    pending = data
    while pending:
        pending = _unpack_stream(path, _decompressor(pending), pending, out, limit, budget)
        if not is_compressed(pending):
            break  # trailing garbage after the last stream, as gzip ignores it
    budget.add_member(name, len(out))
    return Member(name, bytes(out), None)


def _unpack_stream(path: Path, decompressor, data: bytes, out: bytearray, limit: int, budget: Budget) -> bytes:
    """Appends one compressed stream's content to `out`; returns the bytes after the stream."""
    uses_tail = hasattr(decompressor, "unconsumed_tail")  # zlib keeps unread input there
    position = 0
    feed = b""
    while not decompressor.eof:
        if uses_tail or decompressor.needs_input:
            if not feed:
                feed = data[position : position + _BLOCK]
                position += len(feed)
                if not feed:
                    raise CorruptDocumentError(path, "damaged or truncated compressed file")
        else:
            feed = b""  # bz2/lzma still hold output for the input they had
        out += decompressor.decompress(feed, _BLOCK)
        feed = decompressor.unconsumed_tail if uses_tail else b""
        if len(out) > limit:
            raise budget.too_large(f"{Path(path).name}", len(out), limit)
        budget.check_time()
    return decompressor.unused_data + data[position:]
