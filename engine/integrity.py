"""Is the library whole? The database's own check, then database against vector files.

    >>> report = check_library(store, paths.indexes)
    >>> report.ok, report.problems            # (False, ['passage 17 has no vector in ...'])

Also the guard `Library.open` runs first: a home whose database vanished (deleted,
truncated to 0 bytes) while vector indexes remain must not be recreated empty, which
would silently forget every document and overwrite the indexes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from sqlalchemy.exc import SQLAlchemyError

from engine.config import DataPaths
from engine.errors import LibraryDamagedError, StoreError
from engine.index import keyword_index
from engine.index.live_index import LiveIndex
from engine.index.vector_file import FORMAT_VERSION, read_trailer
from engine.index.vector_mirror import VectorMirror
from engine.index.vectors import PLAIN_SPACE, VectorIndex
from engine.locking import WRITE_LOCK_FILE, LockHolder, WriteLock
from engine.store import GenerationInfo, Store
from engine.store.health import (
    bad_vector_sizes,
    database_is_new,
    integrity_problems,
    passage_ids,
    vector_ids,
)
from engine.store.search_queries import vectors_of
from engine.store.urls import mask_url, one_line
from engine.store.vector_blobs import as_stored

SHOWN_IDS = 5  # example ids per mismatch line
COPY_SAMPLE = 5_000  # vectors of the copy compared with the database's


@dataclass
class CheckReport:
    """Problems (the library is damaged) and notes (worth knowing, nothing lost)."""

    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def refuse_lost_database(db_url: str, indexes: Path) -> None:
    """LibraryDamagedError when the database is missing or empty but vector indexes hold data."""
    saved = _nonempty_index_files(indexes)
    if not saved or not database_is_new(db_url):
        return
    names = ", ".join(p.name for p in saved[:3])
    raise LibraryDamagedError(
        f"the database {mask_url(db_url)} is missing or empty, but {indexes} holds vector "
        f"indexes ({names}) of documents indexed before. Restore the database from a backup "
        f"(or set the right 'db_url'); to start an empty library instead, move {indexes} away."
    )


def check_home(paths: DataPaths, db_url: str | None = None, *, lock_timeout: float | None = None,
               on_busy: Callable[[LockHolder], None] | None = None) -> CheckReport:
    """Checks a home's library without opening it as a Library (which damage could stop).

    Holds the write lock, so that a writer in another process has saved its vectors
    and cannot change things half-way through the comparison.
    """
    db_url = db_url or paths.db_url
    try:
        refuse_lost_database(db_url, paths.indexes)
    except LibraryDamagedError as e:
        return CheckReport(problems=[str(e)])
    lock = WriteLock(paths.home / WRITE_LOCK_FILE)
    with lock.hold("checking", timeout=lock_timeout, on_wait=on_busy):
        try:
            store = Store.open(db_url)
        except StoreError as e:
            return CheckReport(problems=[str(e)])
        try:
            return check_library(store, paths.indexes)
        finally:
            store.close()


def check_library(store: Store, indexes: Path) -> CheckReport:
    """Runs every check; never raises for damage it finds, only reports it."""
    report = CheckReport(problems=[f"database integrity: {p}" for p in integrity_problems(store)])
    if report.problems:  # a damaged file gives unreliable answers to everything else
        return report
    try:
        _check_contents(store, indexes, report)
    except (StoreError, SQLAlchemyError) as e:
        report.problems.append(f"the database cannot be read: {one_line(e)}")
    return report


def _check_contents(store: Store, indexes: Path, report: CheckReport) -> None:
    all_passages = passage_ids(store)
    for status in ("active", "building"):
        generation = store.generation(status)
        if generation is not None:
            _check_generation(store, generation, all_passages, indexes, report)
    if store.generation("active") is None and len(all_passages):
        report.problems.append(f"{len(all_passages)} passages but no active index generation")
    _check_keywords(indexes / keyword_index.FILE_NAME, all_passages, report)


def _check_keywords(path: Path, all_passages: np.ndarray, report: CheckReport) -> None:
    """The keyword index is a cache: what is wrong with it is a note, rebuilt on open."""
    problem, held = keyword_index.inspect(path)
    if problem is not None:
        report.notes.append(f"keyword index: {path} {problem}; it is rebuilt from the database on open")
        return
    lacking, extra = np.setdiff1d(all_passages, held), np.setdiff1d(held, all_passages)
    differences = [f"lacks {len(lacking)} passage(s) ({_ids_text(lacking, count=False)})" if len(lacking) else "",
                   f"holds {len(extra)} the database does not ({_ids_text(extra, count=False)})" if len(extra) else ""]
    if len(lacking) or len(extra):
        report.notes.append(f"keyword index {' and '.join(filter(None, differences))}; "
                            "it is brought in step on open")


def _check_generation(store: Store, generation: GenerationInfo, all_passages: np.ndarray,
                      indexes: Path, report: CheckReport) -> None:
    label = f"generation {generation.id} ({generation.status}, model {generation.model_name})"
    stored = vector_ids(store, generation.id)
    orphans = np.setdiff1d(stored, all_passages)
    if len(orphans):
        report.problems.append(f"{label}: {_ids_text(orphans)} stored vector(s) of missing passages")
    wrong = bad_vector_sizes(store, generation.id, generation.dim)
    if wrong:
        report.problems.append(f"{label}: {wrong} stored vector(s) are not {generation.dim}-d")
    if store.has_earlier_vectors(generation.id, generation.dim):
        report.notes.append(f"{label}: vectors stored as float32 by an earlier version; they are "
                            "converted to float16 when the library is next opened for searching")
    missing = np.setdiff1d(all_passages, stored)
    if len(missing) and generation.status == "active":
        report.problems.append(f"{label}: {_ids_text(missing)} passage(s) have no stored vector")
    elif len(missing):
        report.notes.append(f"{label}: {len(missing)} passage(s) still to re-encode")
    if generation.status == "active":
        _check_file(generation, stored, indexes, label, report)
        _check_copy(store, generation, stored, indexes, label, report)


def _check_file(generation: GenerationInfo, stored: np.ndarray, indexes: Path, label: str,
                report: CheckReport) -> None:
    path = LiveIndex.file_for(indexes, generation.id)
    trailer = read_trailer(path)
    if trailer is None:
        what = "is missing" if not path.exists() else "is damaged or not a vector index"
        report.notes.append(f"{label}: {path} {what}; it is rebuilt from stored vectors on open")
        return
    if trailer.get("format") != FORMAT_VERSION:
        report.notes.append(f"{label}: {path.name} is of an earlier format; it is rebuilt from "
                            "stored vectors on open")
        return
    if trailer.get("generation") != generation.version:
        report.notes.append(f"{label}: {path.name} holds version {trailer.get('generation')}, "
                            f"the database {generation.version}; it is rebuilt on open")
        return
    # the ids are what is checked, whatever form the vectors are in (engine.index.live_index)
    index = VectorIndex.load(path, expected_generation=generation.version, dim=generation.dim,
                             space=trailer.get("space", PLAIN_SPACE))
    if index is None:
        report.notes.append(f"{label}: {path} is damaged; it is rebuilt from stored vectors on open")
        return
    in_file = np.sort(index.ids())
    lacking, extra = np.setdiff1d(stored, in_file), np.setdiff1d(in_file, stored)
    if len(lacking):
        report.problems.append(f"{label}: {path.name} lacks {_ids_text(lacking)} passage(s) "
                               "the database holds (those documents cannot be found)")
    if len(extra):
        report.problems.append(f"{label}: {path.name} holds {_ids_text(extra)} id(s) "
                               "the database does not")


def _check_copy(store: Store, generation: GenerationInfo, stored: np.ndarray, indexes: Path, label: str,
                report: CheckReport) -> None:
    """The vector copy re-scoring reads (engine.index.vector_mirror) against the database:
    its ids, and the vectors of a sample of them."""
    copy = VectorMirror(indexes, generation.id, generation.dim)
    if not copy.load(generation.version):
        if copy.map_path.exists():
            report.notes.append(f"{label}: {copy.map_path.name} is damaged or of another version; "
                                "re-scoring reads the database until the next index run writes it again")
        return
    held = copy.ids()
    wrong = len(np.setdiff1d(stored, held)) + len(np.setdiff1d(held, stored))
    sample = np.random.default_rng(0).permutation(np.intersect1d(stored, held))[:COPY_SAMPLE]
    copied_ids, copied = copy.get(np.sort(sample))
    found, vectors = vectors_of(store, generation.id, generation.dim, copied_ids.tolist())
    order = np.argsort(found)
    rows = order[np.searchsorted(found[order], copied_ids)]
    wrong += int((copied != as_stored(vectors[rows])).any(axis=1).sum())  # float32 of earlier versions, rounded
    if wrong:
        report.problems.append(f"{label}: {copy.map_path.name} differs from the database for {wrong} "
                               "passage(s); delete it (the next index run writes it again)")


def _nonempty_index_files(indexes: Path) -> list[Path]:
    files = sorted(indexes.glob("generation-*.faiss")) if indexes.is_dir() else []
    # an unreadable trailer counts as data: better to ask than to overwrite it
    return [p for p in files if (t := read_trailer(p)) is None or t.get("count", 1) > 0]


def _ids_text(ids: np.ndarray, count: bool = True) -> str:
    """Example: _ids_text(np.arange(7)) == "7 (0, 1, 2, 3, 4, ...)"; without `count`, only the ids."""
    shown = ", ".join(str(int(i)) for i in ids[:SHOWN_IDS])
    more = ", ..." if len(ids) > SHOWN_IDS else ""
    return f"{len(ids)} ({shown}{more})" if count else shown + more
