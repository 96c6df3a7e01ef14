"""A generation's stored vectors, copied into a file beside its FAISS index, so that
re-scoring reads rows of a plain file instead of looking each vector up in SQLite.

    mirror = VectorMirror(folder, generation_id, dim)
    mirror.load(version)                          # usable only if the file holds `version`
    found, vectors = mirror.get(ids)              # those it holds, float32 as stored
    mirror.apply(removed, added, stored)          # a committed change, held until the save
    mirror.save(version, read_all, database_version)

Why: a fused search re-scores about 400 candidates a query with full-precision vectors.
From SQLite that is two B-tree lookups a row, about 11 ms a query at 100k passages, the
largest cost left (docs/benchmarks.md); 400 rows read from a file cost about 2 ms. They
are read, not memory-mapped (0.5 ms): a mapped file's touched pages count as the
process's resident memory (the window's would grow by up to 768 bytes a passage over a
session), and a mapped file cut short under a reader kills it (SIGBUS); read ones stay in
the system's file cache, and a short read falls back to the store.

The store stays the one truth. The file is used only when it holds exactly the version
of the generation that the index was opened at, as the FAISS file is; a passage it lacks
is read from the store. Passage ids can be reused after a delete, so a change applied in
this process hides the file's row of every id it touches until the next save.

Files, per generation:
  * `generation-<id>.vectors-<token>.f16`: rows of float16, appended to and never
    rewritten (a reader may be reading it);
  * `generation-<id>.vectors.npz`: replaced atomically; the version it holds, the data
    file's name, its rows written, and each held passage id's row.
A save appends the rows added since the last one and writes a new map; an append a
crash cut short lies past the map's row count and is overwritten by the next. A data file
with more dead rows than live, or a map another process replaced, is written anew from
the store. One process writes at a time (a lock file beside them); a save that finds it
taken leaves the files to the next save.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import threading
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.atomic import atomic_file
from engine.index.exact_vectors import HeldVectors
from engine.locking import WriteLock
from engine.private import private_file
from engine.repairs import move_aside, repaired
from engine.store.vector_blobs import STORED

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
# a data file is written anew when its dead rows outnumber the live ones and pass this
COMPACT_MIN_DEAD = 10_000

VectorBatches = Callable[[], Iterable[tuple[np.ndarray, np.ndarray]]]


@dataclass(frozen=True)
class _Mirrored:
    """One saved state: swapped whole, so a reader never mixes two."""

    version: int
    data_name: str
    rows_written: int
    ids: np.ndarray  # int64, sorted
    rows: np.ndarray  # int64, each id's row in the data file

    @property
    def dead_rows(self) -> int:
        return self.rows_written - len(self.ids)


def _mostly_dead(mine: _Mirrored, changed: np.ndarray, added: HeldVectors) -> bool:
    """Whether the data file, with these changes appended, would hold more dead rows than live."""
    replaced = int(np.isin(mine.ids, changed, assume_unique=True).sum())
    dead, live = mine.dead_rows + replaced, len(mine.ids) - replaced + len(added)
    return dead > max(COMPACT_MIN_DEAD, live)


class VectorMirror:
    """The stored vectors of one generation, as a file: see the module docstring."""

    def __init__(self, folder: Path, generation_id: int, dim: int):
        self.folder, self.generation_id, self.dim = Path(folder), generation_id, dim
        self._mirrored: _Mirrored | None = None  # None: no usable file (the store answers)
        # ids a change in this process touched since the file's state, and what it added
        self._changed = np.empty(0, np.int64)
        self._added = HeldVectors(dim)
        self._lock = threading.Lock()  # apply and save (an indexing thread) against get (a search)

    @property
    def map_path(self) -> Path:
        return self.folder / f"generation-{self.generation_id}.vectors.npz"

    def _data_path(self, name: str) -> Path:
        return self.folder / name

    # -- reading ------------------------------------------------------------------------

    def load(self, version: int) -> bool:
        """Takes the file if it holds `version`; True if it does. A damaged one is noted
        and left for the next save to replace."""
        mirrored = self._read_map(expect_version=version)
        with self._lock:
            self._mirrored = mirrored
            self._changed, self._added = np.empty(0, np.int64), HeldVectors(self.dim)
        return mirrored is not None

    @property
    def usable(self) -> bool:
        return self._mirrored is not None

    def get(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ids int64 [m], vectors float32 [m, dim] as stored) of those of `ids` (unique) it
        holds, in no particular order; the caller reads the rest from the store."""
        with self._lock:
            mirrored, changed, added = self._mirrored, self._changed, self._added
        if mirrored is None or len(ids) == 0:
            return np.empty(0, np.int64), np.empty((0, self.dim), np.float32)
        added_ids, added_vectors = added.get(ids)
        asked = ids[~np.isin(ids, changed)]
        at = np.minimum(np.searchsorted(mirrored.ids, asked), max(len(mirrored.ids) - 1, 0))
        held = (mirrored.ids[at] == asked) if len(mirrored.ids) else np.zeros(len(asked), bool)
        found = asked[held]
        vectors = self._read_rows(self._data_path(mirrored.data_name), mirrored.rows[at[held]])
        if vectors is None:  # the file went away or was cut since it was checked: the store
            # answers, from now until the map is read again or the copy written anew, rather
            # than a failed read (and a note) for every query
            with self._lock:
                if self._mirrored is mirrored:
                    self._mirrored = None
            found, vectors = found[:0], np.empty((0, self.dim), np.float32)
        return np.concatenate([found, added_ids]), np.concatenate([vectors, added_vectors])

    def ids(self) -> np.ndarray:
        """The ids it holds, sorted (empty when no file is usable)."""
        with self._lock:
            mirrored, changed, added = self._mirrored, self._changed, self._added
        if mirrored is None:
            return np.empty(0, np.int64)
        kept = mirrored.ids[~np.isin(mirrored.ids, changed)]
        return np.union1d(kept, next(iter(added.batches()))[0])

    # -- changes ------------------------------------------------------------------------

    def apply(self, removed: np.ndarray, added: np.ndarray, stored: np.ndarray | None) -> None:
        """A committed change: `removed` ids gone, `added` ids with `stored` vectors (float32,
        as the store gives them back). Nothing to hold when no file is usable: the next save
        writes one from the store."""
        removed, added = np.asarray(removed, np.int64), np.asarray(added, np.int64)
        with self._lock:
            if self._mirrored is None:
                return
            self._changed = np.union1d(self._changed, np.concatenate([removed, added]))
            self._added.remove(removed)
            if len(added):
                self._added.add(added, np.asarray(stored, np.float32))

    # -- saving -------------------------------------------------------------------------

    def save(self, version: int, read_all: VectorBatches, database_version: Callable[[], int | None]) -> None:
        """Brings the file to `version`, the state this process holds: appends what it
        added, or writes every vector `read_all` yields when the file is missing, replaced
        by another process, or mostly dead rows. `database_version` is asked around a full
        write, which is kept only if the store held `version` throughout."""
        lock = WriteLock(self.folder / f"generation-{self.generation_id}.vectors.lock")
        if not lock.try_acquire("saving the vectors' copy"):
            log.info("another process is saving the vector copy of generation %d; left to it", self.generation_id)
            return
        try:
            # the header only: the ids and rows of a map this process wrote or took are its own
            on_disk = self._read_meta()
            on_disk_version = on_disk.get("generation") if on_disk else None
            with self._lock:
                mine, changed, added = self._mirrored, self._changed, self._added
            if isinstance(on_disk_version, int) and on_disk_version > version:
                return  # a later writer's: this process reloads it when it refreshes
            if on_disk_version == version:  # the one state of that version: this process's, or saved elsewhere
                if mine is not None and (mine.version, mine.data_name) == (version, on_disk.get("data")):
                    return
                taken = self._read_map(expect_version=version, quiet=True)
                if taken is not None:
                    self._take(taken)
                    return
            if (mine is not None and on_disk is not None
                    and (on_disk_version, on_disk.get("data")) == (mine.version, mine.data_name)
                    and self._data_whole(mine.data_name, mine.rows_written)
                    and not _mostly_dead(mine, changed, added)):
                self._append(mine, changed, added, version)
            elif database_version() == version:
                self._write_anew(version, read_all, database_version)
        finally:
            lock.release()

    def _append(self, mine: _Mirrored, changed: np.ndarray, added: HeldVectors, version: int) -> None:
        new_ids, new_vectors = next(iter(added.batches()))
        path = self._data_path(mine.data_name)
        with open(path, "r+b") as f:  # rows past `rows_written` are a cut-short append's
            f.seek(mine.rows_written * self.dim * STORED.itemsize)
            f.write(np.ascontiguousarray(new_vectors, STORED).tobytes())
            f.flush()
            os.fsync(f.fileno())
        kept = ~np.isin(mine.ids, changed)
        ids = np.concatenate([mine.ids[kept], new_ids])
        rows = np.concatenate([mine.rows[kept], mine.rows_written + np.arange(len(new_ids))])
        order = np.argsort(ids, kind="stable")
        self._adopt(version, mine.data_name, mine.rows_written + len(new_ids), ids[order], rows[order])

    def _write_anew(self, version: int, read_all: VectorBatches, database_version: Callable[[], int | None]) -> None:
        name = f"generation-{self.generation_id}.vectors-{secrets.token_hex(4)}.f16"
        path = self._data_path(name)
        id_batches: list[np.ndarray] = []
        try:
            with open(private_file(path), "wb") as f:
                for ids, vectors in read_all():
                    f.write(np.ascontiguousarray(vectors, STORED).tobytes())
                    id_batches.append(np.asarray(ids, np.int64))
                f.flush()
                os.fsync(f.fileno())
            if database_version() != version:  # a writer committed while the store was read
                path.unlink(missing_ok=True)
                return
        except BaseException:
            path.unlink(missing_ok=True)
            raise
        ids = np.concatenate(id_batches) if id_batches else np.empty(0, np.int64)
        order = np.argsort(ids, kind="stable")
        self._adopt(version, name, len(ids), ids[order], order.astype(np.int64))

    def _adopt(self, version: int, data_name: str, rows_written: int, ids: np.ndarray, rows: np.ndarray) -> None:
        """Writes the map, then makes it this process's state."""
        meta = {"format": FORMAT_VERSION, "generation": int(version), "dim": self.dim,
                "data": data_name, "rows_written": int(rows_written)}
        move_aside(self.map_path)
        with atomic_file(self.map_path) as f:
            np.savez(f, ids=ids, rows=rows, meta=np.frombuffer(json.dumps(meta).encode(), np.uint8))
        self._take(_Mirrored(version, data_name, rows_written, ids, rows))
        self._remove_unused_data_files(keep=data_name)  # replaced ones, and a killed full write's

    def _take(self, mirrored: _Mirrored) -> None:
        # apply and save run on the one thread that writes the library, so nothing was
        # applied since the save began: the file now holds every change held
        with self._lock:
            self._mirrored = mirrored
            self._changed, self._added = np.empty(0, np.int64), HeldVectors(self.dim)

    def _remove_unused_data_files(self, keep: str) -> None:
        for path in self.folder.glob(f"generation-{self.generation_id}.vectors-*.f16"):
            if path.name != keep:
                try:
                    path.unlink()
                except OSError:  # open in a reader on Windows: the next save retries
                    log.info("could not remove %s yet", path)

    def delete_files(self) -> None:
        with self._lock:
            self._mirrored = None
        for path in self.folder.glob(f"generation-{self.generation_id}.vectors*"):
            try:
                path.unlink()
            except OSError:
                log.info("could not remove %s", path)

    # -- the map ------------------------------------------------------------------------

    def _read_meta(self) -> dict | None:
        """The map's header (format, version, data file, rows written), or None when there
        is no readable map."""
        try:
            with np.load(self.map_path, allow_pickle=False) as saved:
                meta = json.loads(saved["meta"].tobytes().decode())
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, UnicodeDecodeError):
            return None
        return meta if isinstance(meta, dict) else None

    def _data_whole(self, name: str, rows_written: int) -> bool:
        """Whether the data file still holds every row written (nobody removed or cut it)."""
        path = self._data_path(name)
        return path.is_file() and path.stat().st_size >= rows_written * self.dim * STORED.itemsize

    def _read_map(self, expect_version: int | None, quiet: bool = False) -> _Mirrored | None:
        """The saved state if the map and its data file agree (and it holds
        `expect_version` when given); None otherwise, a damaged one noted unless `quiet`."""
        try:
            with np.load(self.map_path, allow_pickle=False) as saved:
                meta = json.loads(saved["meta"].tobytes().decode())
                if (expect_version is not None and isinstance(meta, dict) and meta.get("format") == FORMAT_VERSION
                        and isinstance(meta.get("generation"), int) and meta["generation"] != expect_version):
                    return None  # another version's: the store answers until the next save
                ids, rows = saved["ids"], saved["rows"]
            problem = self._problem(meta, ids, rows)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile, UnicodeDecodeError) as e:
            problem = str(e)
        if problem:
            if not quiet:
                repaired("the vector copy %s is damaged (%s); vectors are read from the database "
                         "until the next save writes it again", self.map_path, problem)
            return None
        return _Mirrored(meta["generation"], meta["data"], meta["rows_written"], ids.astype(np.int64),
                         rows.astype(np.int64))

    def _problem(self, meta: dict, ids: np.ndarray, rows: np.ndarray) -> str | None:
        if (meta.get("format") != FORMAT_VERSION or meta.get("dim") != self.dim
                or not isinstance(meta.get("generation"), int)):
            return "another format or dimension"
        name, written = meta.get("data"), meta.get("rows_written")
        if not isinstance(name, str) or Path(name).name != name or not isinstance(written, int):
            return "no data file named"
        if ids.ndim != 1 or ids.shape != rows.shape or (len(ids) and np.any(np.diff(ids) <= 0)):
            return "ids and rows disagree"
        if len(rows) and (rows.min() < 0 or rows.max() >= written):
            return "a row past the data file's end"
        if not self._data_whole(name, written):
            return f"the data file {name} is missing or shorter than its {written} rows"
        return None

    def _read_rows(self, path: Path, rows: np.ndarray) -> np.ndarray | None:
        """float32 [len(rows), dim] of those rows of the data file; None when it cannot be read."""
        size = self.dim * STORED.itemsize
        try:
            with open(path, "rb", buffering=0) as f:
                data = b"".join(_read_each(f, (rows * size).tolist(), size))
        except OSError as e:
            log.info("cannot read the vector copy %s (%s); reading the database", path, e)
            return None
        if len(data) != len(rows) * size:  # cut short since it was checked
            log.info("the vector copy %s ends early; reading the database", path)
            return None
        return np.frombuffer(data, STORED).reshape(len(rows), self.dim).astype(np.float32)


def _read_each(f, offsets: list[int], size: int) -> list[bytes]:
    """`size` bytes at each of `offsets`: a positioned read each (one call, and no shared
    file position), or a seek and a read where there is none (Windows)."""
    if hasattr(os, "pread"):
        pread, fd = os.pread, f.fileno()
        return [pread(fd, size, offset) for offset in offsets]
    chunks = []
    for offset in offsets:
        f.seek(offset)
        chunks.append(f.read(size))
    return chunks
