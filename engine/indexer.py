"""Indexing as a generator of progress events: scan -> compare -> extract -> segment ->
detect language -> encode in batches -> write.

    >>> for event in Indexer(store, live_index, encoder).run([Path("~/Documents")]):
    ...     print(event)          # IndexProgress ..., then IndexFinished(summary)

The caller may stop at any event (close the generator): every write is a transaction,
so the database stays consistent and the next run picks up where this one stopped.
Archive members, attachments and mailbox messages are documents of their own, stored
below their file (engine.extract.tree, engine.index_writes); images come last in each
folder, since OCR costs seconds a page.
"""

from __future__ import annotations

import hashlib
import logging
import os
import random
import stat
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

import numpy as np
from sqlalchemy.exc import OperationalError, SQLAlchemyError

from engine.config import ExtractLimits
from engine.encoders.base import Encoder
from engine.errors import ExtractionError
from engine.events import IndexFinished, IndexProgress, IndexSummary, SkippedFile
from engine.extract import SUPPORTED_EXTENSIONS, SkipBelow, extension_format, short_error
from engine.extract.isolated import ExtractionProcess, SameProcess
from engine.extract.sniff import HEAD_BYTES, ZIP_MAGIC, is_pdf, sniff_bytes, sniff_format
from engine.extract.text_file import bom_encoding
from engine.index.live_index import LiveIndex
from engine.index_writes import DocumentPlace, Unsupported, document_outcome, file_type
from engine.passage_context import CONTEXT_WEIGHT, encode_passages, with_contexts
from engine.scan import is_excluded, path_key, scan_files, user_path
from engine.safe_open import open_regular, os_error_reason, read_regular, special_file_reason
from engine.store import DocumentState, DocumentWrite, FailureWrite, Store
from engine.throughput import Throughput, work_chars

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class IndexerConfig:
    # Passages encoded per encoder call: large enough that length-sorted batches pay off,
    # small enough that progress stays lively and a cancel loses little work.
    batch_passages: int = 256
    # Larger files are skipped with a reason; encoding them would take many minutes.
    max_file_bytes: int = 32 * 1024 * 1024
    passage_max_chars: int = 600
    passage_max_sentences: int = 5
    passage_overlap: int = 1
    # A paragraph shorter than this joins the next one (make_passages' tiny_chars).
    passage_join_chars: int = 100
    # Leave content-free lines (tables of contents, page numbers, navigation bars) out of
    # passages and merge tiny fragments into neighbours (engine/junk.py): encoded alone,
    # they sit close to every query and outrank real answers. False only to measure that.
    drop_junk: bool = True
    # The FAISS file is rewritten at most this often during a run, and always at the end.
    save_every_s: float = 30.0
    # Dense scores compare language-neutral vectors (engine/index/language_means.py): each
    # language's mean taken out, so a query finds the answer in another language rather
    # than any text in its own. False only to measure the plain cosine space.
    language_neutral: bool = True
    # Nice increment of the thread that runs a library job (engine.priority): 10 keeps the
    # desktop and the window's searches responsive; 0 runs at the process's priority.
    nice: int = 10
    # Unpacked size, pages, seconds and memory one document may cost (zip bombs, page bombs).
    limits: ExtractLimits = field(default_factory=ExtractLimits)
    # Read documents in a child process killed at the deadline (engine/extract/isolated.py);
    # False reads them here, where a parser stuck in C code cannot be stopped (to measure).
    extract_in_child: bool = True
    # How far each passage's vector moves toward its title and section heading's
    # (engine/passage_context.py); 0 encodes passages by their own words only (to measure).
    context_weight: float = CONTEXT_WEIGHT


# The files read first, a sample spread over the run, so that the time left is estimated
# from every part of the folder (engine.throughput): 2% of the files to read, at least 10
# and at most 400; none where 10 would be more than a fifth of them. Images are sampled
# apart, 2% of them, at least IMAGE_SAMPLE_MIN (the pace fits a cost per image and one per
# byte) and at most IMAGE_SAMPLE_MAX: their OCR costs far more per byte than reading any
# other file, and they come last.
SAMPLE_SHARE = 0.02
SAMPLE_MIN, SAMPLE_MAX = 10, 400
IMAGE_SAMPLE_MIN, IMAGE_SAMPLE_MAX = 3, 5


@dataclass
class _Run:
    pace: Throughput
    files_total: int = 0
    files_done: int = 0
    indexed: int = 0
    unchanged: int = 0
    removed: int = 0
    passages: int = 0
    skipped: list[SkippedFile] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    planned: dict[Path, tuple[str, int]] = field(default_factory=dict)  # file -> (kind, bytes to read)
    placed: int = 0  # files of the roots already ordered: the next root's places start here

    def progress(self, current: str | None = None) -> IndexProgress:
        """Files stored (or skipped) so far; the rate follows passages encoded, the time left
        the work of reading and encoding what is left (engine.throughput)."""
        return IndexProgress(self.files_done, self.files_total, self.passages, self.pace.rate(),
                             self.pace.seconds_left(), current, encoded=self.pace.passages_encoded)

    def plan(self, file: Path, size: int) -> None:
        kind = _pace_kind(file)
        self.planned[file] = (kind, size)
        self.pace.plan(kind, size)

    def visited(self, file: Path, chars: int, seconds: float, position: int, ahead: bool) -> None:
        """Tells the pace what reading `file` cost and gave: `seconds`, and `chars` of text
        to encode (its members' too); `position` is its place in the reading order, `ahead`
        whether it was read before its turn, as part of the sample (reading_order)."""
        kind, size = self.planned.pop(file, ("", 0))
        if size and ahead:
            self.pace.read_ahead(kind, size, position, chars=chars, seconds=seconds)
        elif size:
            self.pace.read(kind, size, chars=chars, seconds=seconds)
        if not ahead:
            self.pace.reached(position)

    def reading_order(self, files: list[Path]) -> list[tuple[int, Path, bool]]:
        """(place in the reading order, file, read ahead) for one root's files, in the order
        they are read: a sample of the files that need reading first, then the others in
        order. The sample is one file drawn at random (seeded) from each of equal stretches
        of the order, so every part of the folder is in it, then a few images. Images
        come last (OCR costs seconds a page: the other files are searchable first)."""
        image = {f: extension_format(f) == "image" for f in files}
        order = sorted(files, key=image.__getitem__)
        base, self.placed = self.placed, self.placed + len(order)
        to_read = [i for i, f in enumerate(order) if self.planned.get(f, ("", 0))[1] > 0]
        texts = [i for i in to_read if not image[order[i]]]
        size = min(SAMPLE_MAX, max(SAMPLE_MIN, round(SAMPLE_SHARE * len(texts))))
        if size > len(texts) // 5:  # a small folder: a sample of it would say little, read it in order
            return [(base + i, f, False) for i, f in enumerate(order)]
        images = [i for i in to_read if image[order[i]]]
        rng = random.Random(len(order))
        image_size = min(IMAGE_SAMPLE_MAX, max(IMAGE_SAMPLE_MIN, round(SAMPLE_SHARE * len(images))))
        ahead = _spread(texts, size, rng) + _spread(images, image_size, rng)
        chosen = set(ahead)
        return ([(base + i, order[i], True) for i in ahead]
                + [(base + i, f, False) for i, f in enumerate(order) if i not in chosen])

    def summary(self, cancelled: bool) -> IndexSummary:
        return IndexSummary(
            indexed=self.indexed,
            unchanged=self.unchanged,
            removed=self.removed,
            skipped=tuple(self.skipped),
            passages=self.passages,
            cancelled=cancelled,
            stage_seconds=tuple(sorted(self.seconds.items())),
        )


class _Timer:
    def __init__(self, run: _Run, stage: str):
        self.run, self.stage = run, stage

    def __enter__(self):
        self.t0 = time.perf_counter()

    def __exit__(self, *exc):
        self.run.seconds[self.stage] += time.perf_counter() - self.t0


class Indexer:
    """Brings the store and the live index in line with folders on disk."""

    def __init__(self, store: Store, live: LiveIndex, encoder: Encoder,
                 config: IndexerConfig | None = None, *, clock: Callable[[], float] = time.monotonic):
        self.store = store
        self.live = live
        self.encoder = encoder
        self.config = config or IndexerConfig()
        self.clock = clock  # what the rate and time left are measured with (tests pass a fake)
        self._reader: ExtractionProcess | SameProcess = SameProcess()  # the run's own, in run()

    def run(self, paths: Sequence[Path]) -> Iterator[IndexProgress | IndexFinished]:
        run = _Run(Throughput(self.clock))
        self._reader = ExtractionProcess() if self.config.extract_in_child else SameProcess()
        try:
            excluded = self.store.exclusions()
            self._excluded = excluded
            plans = [self._plan(user_path(p).absolute(), run, excluded) for p in paths]
            run.files_total = sum(len(files) for _, _, files, _ in plans)
            for _, _, files, known in plans:
                for file in files:
                    run.plan(file, self._bytes_to_read(file, known.get(path_key(file))))
            if any(size for _, size in run.planned.values()):
                # Their start-up is not the first file's reading, nor the first image's.
                images = any(size and kind == "image" for kind, size in run.planned.values())
                self._reader.start(ocr=self.config.limits if images else None)
            yield run.progress()
            for root_id, root_path, files, known in plans:
                yield from self._index_root(run, root_id, files, known)
                self._keep_or_drop_root(root_id, root_path)
            yield run.progress()
        finally:  # also when the caller stops early: what was committed is saved
            self._reader.close()
            with _Timer(run, "vectors"):
                self.live.save()
        yield IndexFinished(run.summary(cancelled=False))

    # -- planning ----------------------------------------------------------------

    def _plan(self, path: Path, run: _Run, excluded: list[str]):
        """(root id, root path, files on disk, known documents) for one requested path.

        Every regular file is planned, whatever its extension: the ones we cannot read
        are reported with a reason, never dropped silently. Forgotten paths (`excluded`)
        are passed by. Documents the store has under `path` that are no longer on disk
        (or now excluded) are removed here.
        """
        if not path.exists():
            raise ExtractionError(path, "no such file or folder")
        key = path_key(path)
        root_id = self.store.root_for(key) or self.store.ensure_root(key)

        def unreadable(folder: Path, error: OSError) -> None:  # listed, not stored: nothing to retry
            run.skipped.append(SkippedFile(path_key(folder), f"folder not read: {_os_reason(error)}"))

        files = [] if is_excluded(key, excluded) else list(scan_files(path, None, excluded, unreadable))
        known = self.store.documents_under(key)
        on_disk = {path_key(f) for f in files}
        gone = [p for p in known if _file_of(p, known) not in on_disk]
        if gone:
            with _Timer(run, "store"):
                removed_ids = self.store.remove_documents(gone)
            with _Timer(run, "vectors"):
                self.live.apply(removed_ids, [], None)
            # A member that a killed run stored before its file's own record goes too, and
            # its file is read again below: the user removed nothing.
            run.removed += sum(1 for p in gone if _outermost(p, known) not in on_disk)
        return root_id, key, files, known

    def _bytes_to_read(self, file: Path, state: DocumentState | None) -> int:
        """What `file` will cost to extract and encode, as far as its size tells: 0 when it
        is unchanged, too large, or of a kind that is refused (photos, binaries)."""
        try:
            info = file.stat()
        except OSError:
            return 0
        if state and state.size == info.st_size and state.mtime == info.st_mtime:
            return 0
        if info.st_size > self.config.max_file_bytes:
            return 0
        suffix = file.suffix.lower()
        return info.st_size if not suffix or suffix in SUPPORTED_EXTENSIONS else 0

    # -- the main loop ---------------------------------------------------------------

    def _keep_or_drop_root(self, root_id: int, root_path: str) -> None:
        """A single file that could not be indexed must not linger as an empty root (nor
        its failure record: the run's summary said why)."""
        if Path(root_path).is_file():
            under = self.store.documents_under(root_path)
            if not any(state.status == "indexed" for state in under.values()):
                if under:
                    self.store.remove_documents(list(under))
                self.store.delete_root(root_path)
                return
        self.store.mark_root_indexed(root_id)

    def _index_root(self, run: _Run, root_id: int, files: list[Path],
                    known: dict[str, DocumentState]) -> Iterator[IndexProgress]:
        failures: list[FailureWrite] = []
        batch = _Batch()
        for position, file, ahead in run.reading_order(files):
            kind, chars = run.planned.get(file, ("", 0))[0], 0
            reading = _Stopwatch(self.clock)  # the file's reading alone, not the encoding between
            for outcome, is_file in reading.over(self._visit(run, file, known.get(path_key(file)), known)):
                if isinstance(outcome, DocumentWrite):
                    chars += batch.add(outcome, kind, is_file)  # done once its vectors are written
                else:
                    run.files_done += is_file
                    if isinstance(outcome, FailureWrite):
                        failures.append(outcome)
                if is_file:
                    run.visited(file, chars, reading.seconds, position, ahead)
                if batch.passages >= self.config.batch_passages:
                    yield from self._flush(run, root_id, batch, failures, current=str(file))
                    run.files_done += batch.files
                    failures, batch = [], _Batch()
            yield run.progress(str(file))
        yield from self._flush(run, root_id, batch, failures)
        run.files_done += batch.files

    def _visit(self, run: _Run, file: Path, state: DocumentState | None, known: dict[str, DocumentState]):
        """What a file needs: nothing, a failure record, or indexing of it and what it holds.

        Yields (outcome, is_file) pairs: a DocumentWrite, FailureWrite or None, and
        whether it is the file's own (it comes last, after its archive members or
        attachments, so a stored file record means all it holds is stored too).
        """
        key = path_key(file)
        try:
            info = file.stat()
        except OSError as e:
            reason = "a broken link (what it points to does not exist)" if file.is_symlink() else _os_reason(e)
            yield self._failure(run, key, file, 0, 0.0, None, reason), True
            return
        if not stat.S_ISREG(info.st_mode):  # never opened: a FIFO would block, /dev/zero never ends
            yield self._failure(run, key, file, 0, info.st_mtime, None, special_file_reason(info.st_mode)), True
            return
        if state and state.size == info.st_size and state.mtime == info.st_mtime:
            yield self._unchanged(run, key, state), True
            return
        if (state is None or state.status == "failed") and (reason := _refusal(file)):
            # Recorded like any file that could not be indexed (one small row), so that
            # `status` counts what the run said it skipped, and the next run passes it by
            # on its size and time without reading it again.
            yield self._failure(run, key, file, info.st_size, info.st_mtime, None, reason), True
            return
        if info.st_size > self.config.max_file_bytes:
            reason = (f"file too large ({info.st_size / 2**20:.1f} MB; "
                      f"the limit is {self.config.max_file_bytes / 2**20:.0f} MB)")
            yield self._failure(run, key, file, info.st_size, info.st_mtime, None, reason), True
            return
        try:
            data = _read_document(file, self.config.max_file_bytes)
        except ExtractionError as e:
            cause = e.__cause__
            reason = _os_reason(cause) if isinstance(cause, OSError) else e.reason
            yield self._failure(run, key, file, info.st_size, info.st_mtime, None, reason), True
            return
        digest = hashlib.sha256(data).hexdigest()
        if state and state.content_hash == digest:
            self.store.touch_document(key, info.st_size, info.st_mtime)
            yield self._unchanged(run, key, state), True
            return
        self._drop_members(run, key, known)  # what the old content held; the new one is read now
        yield from self._documents(run, file, key, info, digest, data)

    def _documents(self, run: _Run, file: Path, key: str, info: os.stat_result, digest: str, data: bytes):
        """(outcome, is_file) for each document of the file, members first (engine.extract.tree)."""
        unsupported = Unsupported()
        skip = SkipBelow(key, tuple(self._excluded)) if self._excluded else None
        documents = None
        while True:
            with _Timer(run, "extract"):
                try:
                    documents = documents or iter(self._reader.extract_tree(file, data, self.config.limits, skip))
                    document = next(documents, None)
                    outcome = None if document is None else document_outcome(
                        DocumentPlace(file, key, info.st_size, info.st_mtime, digest), document, self.config,
                        self.encoder.dim, unsupported)
                except ExtractionError as e:  # the reader ran out of time or memory, or crashed
                    yield self._failure(run, key, file, info.st_size, info.st_mtime, digest, e.reason), True
                    return
                except Exception as e:  # noqa: BLE001 -- one file must never end the run
                    log.exception("unexpected error while indexing %s", file)
                    reason = f"could not be read ({short_error(e)})"
                    yield self._failure(run, key, file, info.st_size, info.st_mtime, digest, reason), True
                    return
            if document is None:
                return
            is_file = not document.inner
            if is_file and unsupported:
                run.skipped.append(SkippedFile(key, unsupported.reason()))
            if isinstance(outcome, FailureWrite):
                log.info("skipping %s: %s", outcome.path, outcome.reason)
                run.skipped.append(SkippedFile(outcome.path, outcome.reason))
            yield outcome, is_file

    def _drop_members(self, run: _Run, key: str, known: dict[str, DocumentState]) -> None:
        """Removes the documents stored inside the file at `key` (it changed, or cannot be read)."""
        members = [p for p, state in known.items() if state.parent is not None and _file_of(p, known) == key]
        if members:
            with _Timer(run, "store"):
                removed_ids = self.store.remove_documents(members)
            with _Timer(run, "vectors"):
                self.live.apply(removed_ids, [], None)

    def _unchanged(self, run: _Run, key: str, state: DocumentState) -> None:
        """Counts the file once: as unchanged, or (still broken) as skipped again."""
        if state.status == "failed":  # report it again, don't retry
            run.skipped.append(SkippedFile(key, state.error or "could not be indexed"))
        else:
            run.unchanged += 1

    def _failure(self, run: _Run, key: str, file: Path, size: int, mtime: float,
                 digest: str | None, reason: str) -> FailureWrite:
        log.info("skipping %s: %s", file, reason)
        run.skipped.append(SkippedFile(key, reason))
        return FailureWrite(key, size, mtime, digest, file_type(file), reason)

    def _flush(self, run: _Run, root_id: int, batch: _Batch, failures: list[FailureWrite],
               current: str | None = None) -> Iterator[IndexProgress]:
        """Encodes the batch's documents together, then writes them in one transaction; yields
        progress after each encoder call, so a large file's rate and time left move."""
        pending = batch.writes
        if pending:
            vectors = yield from self._encode(run, batch, current)
            bounds = np.cumsum([0] + [len(w.passages) for w in pending])
            writes = [replace(w, vectors=vectors[a:b]) for w, a, b in zip(pending, bounds, bounds[1:])]
            with _Timer(run, "store"):
                removed, new_ids, writes, unstored = self._store_batch(run, root_id, writes)
            stored = np.concatenate([w.vectors for w in writes]) if writes else None
            languages = [p.language for w in writes for p in w.passages]
            with _Timer(run, "vectors"):
                began = self.clock()
                self.live.ensure_corrections(self.encoder, passage_languages=languages)
                run.pace.aside(self.clock() - began)  # once per new language: no share of what is left
                self.live.apply(removed, [i for ids in new_ids for i in ids], stored, languages)
            run.indexed += sum(1 for w in writes if w.passages)  # an archive's own record holds none
            run.passages += sum(len(w.passages) for w in writes)
            failures = failures + unstored
        if failures:
            with _Timer(run, "store"):
                removed = self.store.write_failures(root_id, failures)
            self.live.apply(removed, [], None)
        with _Timer(run, "vectors"):
            began = self.clock()
            if self.live.save_if_due(self.config.save_every_s):
                run.pace.saved(self.clock() - began)

    def _encode(self, run: _Run, batch: _Batch, current: str | None) -> Iterator[IndexProgress]:
        """Vectors of the batch's passages [n, dim], encoded `batch_passages` at a time; the
        last call's progress is left to the caller, which yields once the documents are
        stored."""
        texts = [p.text for write in batch.writes for p in write.passages]
        step = self.config.batch_passages
        parts = []
        for start in range(0, len(texts), step):
            if parts:
                yield run.progress(current)
            chars = defaultdict(int)  # per kind of file, for the pace
            for kind, n in zip(batch.kinds[start:start + step], batch.chars[start:start + step]):
                chars[kind] += n
            began = self.clock()
            with _Timer(run, "encode"):
                parts.append(encode_passages(self.encoder, texts[start:start + step]))
            run.pace.encoded(len(parts[-1]), chars, self.clock() - began)
        vectors = np.concatenate(parts) if len(parts) > 1 else parts[0]
        contexts = [p.context for write in batch.writes for p in write.passages]
        with _Timer(run, "encode"):
            return with_contexts(vectors, contexts, partial(encode_passages, self.encoder), self.config.context_weight)

    def _store_batch(self, run: _Run, root_id: int, writes: list[DocumentWrite]):
        """(removed ids, new ids per stored write, stored writes, failures for the rest).

        One transaction for the batch; if that fails on some document's data, each is
        stored on its own, so one unstorable document cannot cost the others their place.
        A database in trouble (locked, disk full: OperationalError) still ends the run.
        """
        generation = self.live.generation.id
        try:
            removed, new_ids = self.store.write_documents(root_id, generation, writes)
            return removed, new_ids, writes, []
        except OperationalError:
            raise
        except (SQLAlchemyError, UnicodeError, ValueError) as e:
            log.warning("%d documents could not be stored together (%s); storing them one by one",
                        len(writes), short_error(e))
        removed, new_ids, stored, failed = [], [], [], []
        for write in writes:
            try:
                gone, ids = self.store.write_documents(root_id, generation, [write])
            except OperationalError:
                raise
            except (SQLAlchemyError, UnicodeError, ValueError) as e:
                log.exception("cannot store %s", write.path)
                reason = f"could not be stored ({short_error(e)})"
                run.skipped.append(SkippedFile(write.path, reason))
                failed.append(FailureWrite(write.path, write.size, write.mtime, write.content_hash,
                                           write.file_type, reason, write.parent))
                continue
            removed += gone
            new_ids += ids
            stored.append(write)
        return removed, new_ids, stored, failed


def _read_document(path: Path, max_bytes: int) -> bytes:
    """The file's bytes, read once: hashed, then extracted (no second open to race with)."""
    return read_regular(path, max_bytes)


def _refusal(file: Path) -> str | None:
    """Why a file whose extension we do not know is not read, judged by its first bytes.

    Example: _refusal(Path("messages.mo")) == "not a supported format: .mo"; None for
    text (LICENSE, corpus.de), which then goes through extraction like any .txt.
    """
    if file.suffix.lower() in SUPPORTED_EXTENSIONS:
        return None
    from engine.extract import unsupported_reason

    try:
        with open_regular(file) as f:  # never a FIFO or device swapped in after the scan
            head = f.read(HEAD_BYTES)
    except ExtractionError as e:
        return e.reason
    except OSError as e:
        return _os_reason(e)
    if not head:
        return "file is empty"
    if b"\x00" in head and bom_encoding(head) is None and not is_pdf(head):
        # NUL bytes: an image, an archive, a compiled file. Saying so at once spares
        # the encoding detector, which is slow on binary data (a folder of photos).
        return unsupported_reason(file)
    if head.startswith(ZIP_MAGIC):  # a zip is told apart by its directory, at the end
        known = _sniff_file(file)
    else:
        cut = head.rfind(b"\n")  # no character split at the end of the sample
        known = sniff_bytes(head[: cut + 1] if cut > 0 and len(head) == HEAD_BYTES else head)
    return None if known is not None else unsupported_reason(file)


def _sniff_file(file: Path) -> str | None:
    try:
        return sniff_format(file)
    except OSError:
        return None


def _outermost(path: str, known: dict[str, DocumentState]) -> str:
    """The key of the file that holds the document `path`, whether or not the store has
    that file's own record yet (a killed run may have stored only its first members)."""
    for _ in range(64):  # parents never loop; a bound all the same
        state = known.get(path)
        if state is None or state.parent is None:
            return path
        path = state.parent
    return path


def _file_of(path: str, known: dict[str, DocumentState]) -> str | None:
    """The key of the file on disk that holds the document `path` (itself for a file);
    None when the store lacks that file's record."""
    outermost = _outermost(path, known)
    return outermost if outermost in known else None


class _Batch:
    """The writes waiting for their vectors, their passages' kind of file and size for the
    pace (work_chars), one entry a passage, and the files they complete."""

    def __init__(self):
        self.writes: list[DocumentWrite] = []
        self.kinds: list[str] = []
        self.chars: list[int] = []
        self.passages = 0
        self.files = 0

    def add(self, write: DocumentWrite, kind: str, is_file: bool) -> int:
        """Adds `write`, read from a file of `kind`; returns its passages' characters."""
        chars = [work_chars(p.text) for p in write.passages]
        self.writes.append(write)
        self.kinds += [kind] * len(chars)
        self.chars += chars
        self.passages += len(write.passages)
        self.files += is_file
        return sum(chars)


class _Stopwatch:
    """The seconds a generator spends producing its items, without the time its consumer
    spends on them in between."""

    def __init__(self, clock: Callable[[], float]):
        self.clock = clock
        self.seconds = 0.0

    def over(self, items: Iterator):
        items = iter(items)
        while True:
            began = self.clock()
            item = next(items, _END)
            self.seconds += self.clock() - began
            if item is _END:
                return
            yield item


_END = object()


def _pace_kind(file: Path) -> str:
    """The kind of file the pace measures costs by: its type, and all images one kind (a
    photo's OCR costs the same whatever its extension)."""
    return "image" if extension_format(file) == "image" else file_type(file)


def _spread(places: list[int], size: int, rng: random.Random) -> list[int]:
    """`size` of `places`, one drawn from each of equal stretches (all of them if fewer)."""
    n = len(places)
    if size >= n:
        return list(places)
    return [places[rng.randrange(k * n // size, (k + 1) * n // size)] for k in range(size)]


def _os_reason(error: OSError) -> str:
    if isinstance(error, FileNotFoundError):
        return "the file disappeared before it could be read"
    return os_error_reason(error)
