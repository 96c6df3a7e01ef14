"""Indexing as a generator of progress events: scan -> compare -> extract -> segment ->
detect language -> encode in batches -> write.

    >>> for event in Indexer(store, live_index, encoder).run([Path("~/Documents")]):
    ...     print(event)          # IndexProgress ..., then IndexFinished(summary)

The caller may stop at any event (close the generator): every write is a transaction,
so the database stays consistent and the next run picks up where this one stopped.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from sqlalchemy.exc import OperationalError, SQLAlchemyError

from engine.config import ExtractLimits
from engine.encoders.base import Encoder
from engine.errors import BabelfindError, ExtractionError
from engine.events import IndexFinished, IndexProgress, IndexSummary, SkippedFile
from engine.extract import SUPPORTED_EXTENSIONS, extract_data, page_of, short_error
from engine.extract.sniff import HEAD_BYTES, ZIP_MAGIC, is_pdf, sniff_bytes, sniff_format
from engine.extract.text_file import bom_encoding
from engine.langid import detect_language, detect_languages, document_language
from engine.index.live_index import LiveIndex
from engine.junk import passage_text
from engine.scan import path_key, scan_files
from engine.safe_open import open_regular, os_error_reason, read_regular
from engine.store.exclusions import is_excluded
from engine.segment import segment
from engine.store import DocumentState, DocumentWrite, FailureWrite, NewPassage, Store

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
    # Leave content-free lines (tables of contents, page numbers, navigation bars) out of
    # passages and merge tiny fragments into neighbours (engine/junk.py): encoded alone,
    # they sit close to every query and outrank real answers. False only to measure that.
    drop_junk: bool = True
    # The FAISS file is rewritten at most this often during a run, and always at the end.
    save_every_s: float = 30.0
    # Nice increment of the thread that runs a library job (engine.priority): 10 keeps the
    # desktop and the window's searches responsive; 0 runs at the process's priority.
    nice: int = 10
    # Unpacked size, pages and seconds one document may cost (zip bombs, page bombs).
    limits: ExtractLimits = field(default_factory=ExtractLimits)


@dataclass
class _Run:
    files_total: int = 0
    files_done: int = 0
    indexed: int = 0
    unchanged: int = 0
    removed: int = 0
    passages: int = 0
    skipped: list[SkippedFile] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    started: float = field(default_factory=time.monotonic)

    def progress(self, current: str | None = None) -> IndexProgress:
        """Files stored (or skipped) so far; the rate and ETA follow stored files."""
        elapsed = max(time.monotonic() - self.started, 1e-6)
        rate = self.files_done / elapsed
        remaining = self.files_total - self.files_done
        eta = remaining / rate if rate > 0 else None
        return IndexProgress(self.files_done, self.files_total, self.passages, rate, eta, current)

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
                 config: IndexerConfig | None = None):
        self.store = store
        self.live = live
        self.encoder = encoder
        self.config = config or IndexerConfig()

    def run(self, paths: Sequence[Path]) -> Iterator[IndexProgress | IndexFinished]:
        run = _Run()
        try:
            excluded = self.store.exclusions()
            plans = [self._plan(Path(p).expanduser().absolute(), run, excluded) for p in paths]
            run.files_total = sum(len(files) for _, _, files, _ in plans)
            yield run.progress()
            for root_id, root_path, files, known in plans:
                yield from self._index_root(run, root_id, files, known)
                self._keep_or_drop_root(root_id, root_path)
            yield run.progress()
        finally:  # also when the caller stops early: what was committed is saved

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
        files = [] if is_excluded(key, excluded) else list(scan_files(path, None, excluded))
        known = self.store.documents_under(key)
        on_disk = {path_key(f) for f in files}
        gone = [p for p in known if p not in on_disk]
        if gone:
            with _Timer(run, "store"):
                removed_ids = self.store.remove_documents(gone)
            with _Timer(run, "vectors"):
                self.live.apply(removed_ids, [], None)
            run.removed += len(gone)
        return root_id, key, files, known

    # -- the main loop ---------------------------------------------------------------

    def _keep_or_drop_root(self, root_id: int, root_path: str) -> None:
        """A single file that could not be indexed must not linger as an empty root."""
        if Path(root_path).is_file() and not self.store.documents_under(root_path):
            self.store.delete_root(root_path)
        else:
            self.store.mark_root_indexed(root_id)

    def _index_root(self, run: _Run, root_id: int, files: list[Path],
                    known: dict[str, DocumentState]) -> Iterator[IndexProgress]:
        pending: list[DocumentWrite] = []
        failures: list[FailureWrite] = []
        for file in files:
            outcome = self._visit(run, file, known.get(path_key(file)))
            if isinstance(outcome, DocumentWrite):
                pending.append(outcome)  # done once its vectors are written
            else:
                run.files_done += 1
                if isinstance(outcome, FailureWrite):
                    failures.append(outcome)
            if sum(len(w.passages) for w in pending) >= self.config.batch_passages:
                self._flush(run, root_id, pending, failures)
                pending, failures = [], []
            yield run.progress(str(file))
        self._flush(run, root_id, pending, failures)

    def _visit(self, run: _Run, file: Path, state: DocumentState | None):
        """Decides what a file needs: nothing, a failure record, or indexing."""
        key = path_key(file)
        try:
            info = file.stat()
        except OSError as e:
            return self._failure(run, key, file, 0, 0.0, None, _os_reason(e))
        if state and state.size == info.st_size and state.mtime == info.st_mtime:
            return self._unchanged(run, key, state)
        if state is None and (reason := _refusal(file)):
            # Not stored: a folder of photos must not fill the database with failures.
            log.info("skipping %s: %s", file, reason)
            run.skipped.append(SkippedFile(key, reason))
            return None
        if info.st_size > self.config.max_file_bytes:
            reason = (f"file too large ({info.st_size / 2**20:.1f} MB; "
                      f"the limit is {self.config.max_file_bytes / 2**20:.0f} MB)")
            return self._failure(run, key, file, info.st_size, info.st_mtime, None, reason)
        try:
            data = _read_document(file, self.config.max_file_bytes)
        except ExtractionError as e:
            cause = e.__cause__
            reason = _os_reason(cause) if isinstance(cause, OSError) else e.reason
            return self._failure(run, key, file, info.st_size, info.st_mtime, None, reason)
        digest = hashlib.sha256(data).hexdigest()
        if state and state.content_hash == digest:
            self.store.touch_document(key, info.st_size, info.st_mtime)
            return self._unchanged(run, key, state)
        with _Timer(run, "extract"):
            try:
                return self._prepare(file, key, info, digest, data)
            except BabelfindError as e:
                reason = getattr(e, "reason", str(e))
            except Exception as e:  # noqa: BLE001 -- one file must never end the run
                log.exception("unexpected error while indexing %s", file)
                reason = f"could not be read ({short_error(e)})"
            return self._failure(run, key, file, info.st_size, info.st_mtime, digest, reason)

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
        return FailureWrite(key, size, mtime, digest, _file_type(file), reason)

    def _prepare(self, file: Path, key: str, info: os.stat_result, digest: str,
                 data: bytes) -> DocumentWrite:
        extracted = extract_data(file, data, limits=self.config.limits)
        spans = segment(
            extracted.text,
            # The language's abbreviation and ordinal rules ("16. Jahrhundert") help the splitter.
            language=detect_language(extracted.text),
            max_chars=self.config.passage_max_chars,
            max_sentences=self.config.passage_max_sentences,
            overlap=self.config.passage_overlap,
            drop_junk=self.config.drop_junk,
        )
        texts = [passage_text(extracted.text, s) for s in spans]
        if not texts:
            raise ExtractionError(file, "no text to index")
        languages = detect_languages(texts)
        passages = tuple(
            NewPassage(text, s.start, s.end, page_of(extracted, s.start), lang)
            for text, s, lang in zip(texts, spans, languages)
        )
        return DocumentWrite(
            path=key,
            size=info.st_size,
            mtime=info.st_mtime,
            content_hash=digest,
            file_type=_file_type(file),
            format=extracted.format,
            language=document_language(languages, [len(t) for t in texts]),
            passages=passages,
            vectors=np.empty((0, self.encoder.dim), np.float32),
        )

    def _flush(self, run: _Run, root_id: int, pending: list[DocumentWrite],
               failures: list[FailureWrite]) -> None:
        """Encodes pending documents together, then writes them in one transaction."""
        if pending:
            texts = [p.text for write in pending for p in write.passages]
            with _Timer(run, "encode"):
                vectors = self.encoder.encode(texts, kind="passage")
            bounds = np.cumsum([0] + [len(w.passages) for w in pending])
            writes = [replace(w, vectors=vectors[a:b]) for w, a, b in zip(pending, bounds, bounds[1:])]
            with _Timer(run, "store"):
                removed, new_ids, writes, unstored = self._store_batch(run, root_id, writes)
            stored = np.concatenate([w.vectors for w in writes]) if writes else None
            with _Timer(run, "vectors"):
                self.live.apply(removed, [i for ids in new_ids for i in ids], stored)
            run.indexed += len(writes)
            run.files_done += len(pending)  # stored, or recorded as unstorable
            run.passages += sum(len(w.passages) for w in writes)
            failures = failures + unstored
        if failures:
            with _Timer(run, "store"):
                removed = self.store.write_failures(root_id, failures)
            self.live.apply(removed, [], None)
        with _Timer(run, "vectors"):
            self.live.save_if_due(self.config.save_every_s)


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
                                           write.file_type, reason))
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


def _file_type(path: Path) -> str:
    return path.suffix.lower().lstrip(".")


def _os_reason(error: OSError) -> str:
    if isinstance(error, FileNotFoundError):
        return "the file disappeared before it could be read"
    return os_error_reason(error)
