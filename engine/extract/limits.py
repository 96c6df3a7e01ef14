"""What one document may cost: a deadline, and zip containers checked before parsing.

    >>> budget = Budget.start(path, ExtractLimits(max_seconds=10))
    >>> check_archive(path, data, budget, "DOCX")   # DocumentTooLargeError for a bomb
    >>> budget.check_time()                         # between pages and members

python-docx, odfpy and ebooklib unpack members with `zipfile` themselves and hold them
in memory. zipfile never returns more than the size the directory declares, so checking
the declared sizes first bounds what the libraries can unpack; the streaming pass then
proves each member really is that size (a lying directory fails its CRC check) without
ever holding more than one block.
"""

from __future__ import annotations

import io
import time
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from engine.config import ExtractLimits
from engine.errors import (
    CorruptDocumentError,
    DocumentTooLargeError,
    EncryptedDocumentError,
    ExtractionTimeoutError,
)
from engine.safe_open import human_size

_STREAM_BLOCK = 1 << 20
# The methods Office and EPUB writers use; bzip2/LZMA decompress without an output
# bound in zipfile, so a member in those is refused rather than trusted.
_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)


@dataclass
class Budget:
    """The limits for one document, the moment its time runs out, the text read so far."""

    path: Path
    limits: ExtractLimits
    deadline: float
    text_chars: int = 0
    cells: int = 0
    # Members of an archive or mailbox, nested ones included, and their unpacked bytes.
    members: int = 0
    unpacked_bytes: int = 0
    started: float = 0.0
    ocr_allowed: bool = False

    @classmethod
    def start(cls, path: Path, limits: ExtractLimits | None = None) -> Budget:
        """Example: Budget.start(Path("a.pdf")).limits.max_pages == 5000"""
        limits = limits or ExtractLimits()
        now = time.monotonic()
        return cls(Path(path), limits, now + limits.max_seconds, started=now)

    def allow_ocr(self) -> None:
        """Gives the document OCR's longer deadline (`max_ocr_seconds` from its start)."""
        if not self.ocr_allowed:
            self.ocr_allowed = True
            self.deadline = max(self.deadline, self.started + self.limits.max_ocr_seconds)

    @property
    def seconds_allowed(self) -> float:
        return self.deadline - self.started

    def check_time(self) -> None:
        """Raises ExtractionTimeoutError once the document has used its time."""
        if time.monotonic() > self.deadline:
            raise ExtractionTimeoutError(
                self.path, f"reading took longer than the {self.seconds_allowed:g} s limit per document"
            )

    def add_text(self, text: str) -> None:
        """Counts a page's or chapter's text; DocumentTooLargeError past `max_text_chars`."""
        self.text_chars += len(text)
        if self.text_chars > self.limits.max_text_chars:
            raise DocumentTooLargeError(
                self.path, f"too large to read safely: over {self.limits.max_text_chars:,} characters of text"
            )

    def add_cells(self, count: int) -> None:
        """Counts a spreadsheet's filled cells; DocumentTooLargeError past `max_cells`."""
        self.cells += count
        if self.cells > self.limits.max_cells:
            raise DocumentTooLargeError(
                self.path, f"too large to read safely: over {self.limits.max_cells:,} filled cells"
            )

    def add_member(self, name: str, size: int) -> None:
        """Counts one member of an archive or mailbox before it is unpacked.

        Raises DocumentTooLargeError past `max_members`, `max_member_bytes` or, for all
        members together, `max_unpacked_bytes`.
        """
        limits = self.limits
        self.members += 1
        if self.members > limits.max_members:
            raise DocumentTooLargeError(
                self.path, f"too large to read safely: over {limits.max_members:,} members")
        if size > limits.max_member_bytes:
            raise self.too_large(f"member {name!r}", size, limits.max_member_bytes)
        self.unpacked_bytes += size
        if self.unpacked_bytes > limits.max_unpacked_bytes:
            raise self.too_large("the archive", self.unpacked_bytes, limits.max_unpacked_bytes)

    def too_large(self, what: str, size: int, limit: int) -> DocumentTooLargeError:
        """Example: "too large to read safely: member 'content.xml' unpacks to 2.0 GiB, over ..."."""
        return DocumentTooLargeError(
            self.path,
            f"too large to read safely: {what} unpacks to {human_size(size)}, "
            f"over the {human_size(limit)} limit (zip bomb?)",
        )


def check_archive(path: Path, data: bytes, budget: Budget, kind: str) -> None:
    """Refuses a zip container whose members are too many, too large or lie about their size.

    Example: check_archive(Path("bomb.docx"), data, Budget.start(path), "DOCX")

    Raises:
        DocumentTooLargeError: over a member count or unpacked size limit.
        CorruptDocumentError: a damaged archive, a CRC mismatch, an unusual compression.
        EncryptedDocumentError: members are encrypted with a zip password.
        ExtractionTimeoutError: unpacking ran past the document's deadline.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            members = zf.infolist()
            _check_directory(path, members, budget, kind)
            _stream_members(zf, members, budget)
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, NotImplementedError) as e:
        raise CorruptDocumentError(path, f"not a valid {kind} file (damaged zip archive: {e})") from e


def _check_directory(path: Path, members: list[zipfile.ZipInfo], budget: Budget, kind: str) -> None:
    limits = budget.limits
    if len(members) > limits.max_members:
        raise DocumentTooLargeError(
            path, f"too large to read safely: {len(members):,} zip members, over the limit of {limits.max_members:,}"
        )
    total = 0
    for info in members:
        if info.flag_bits & 0x1:
            raise EncryptedDocumentError(path, f"encrypted {kind} (zip password)")
        if info.compress_type not in _METHODS:
            raise CorruptDocumentError(
                path, f"not a valid {kind} file (member {info.filename!r} uses compression method {info.compress_type})"
            )
        if info.file_size > limits.max_member_bytes:
            raise budget.too_large(f"member {info.filename!r}", info.file_size, limits.max_member_bytes)
        total += info.file_size
        if total > limits.max_unpacked_bytes:
            raise budget.too_large("the archive", total, limits.max_unpacked_bytes)


def _stream_members(zf: zipfile.ZipFile, members: list[zipfile.ZipInfo], budget: Budget) -> None:
    """Unpacks every member block by block, counting what really comes out."""
    limits = budget.limits
    total = 0
    for info in members:
        if info.is_dir():
            continue
        seen = 0
        with zf.open(info) as member:
            while block := member.read(_STREAM_BLOCK):
                seen += len(block)
                total += len(block)
                if seen > min(info.file_size, limits.max_member_bytes):
                    raise budget.too_large(f"member {info.filename!r}", seen, limits.max_member_bytes)
                if total > limits.max_unpacked_bytes:
                    raise budget.too_large("the archive", total, limits.max_unpacked_bytes)
                budget.check_time()
        budget.check_time()
