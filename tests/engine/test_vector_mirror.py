"""The vector copy beside the FAISS index (engine/index/vector_mirror.py): re-scoring reads
it instead of SQLite, and it never answers with a vector the store no longer holds."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
from compressed_libraries import COMPRESSED, QUERIES, SeededEncoder, index_folder, write_folder

from engine.config import data_paths
from engine.index import live_index, vector_mirror
from engine.index.live_index import LiveIndex
from engine.index.vector_mirror import VectorMirror
from engine.integrity import check_home, check_library
from engine.library import Library
from engine.locking import WriteLock
from engine.store.vector_blobs import as_stored

DIM = 8


def unit_rows(n: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return as_stored(rows / np.linalg.norm(rows, axis=1, keepdims=True))


class FakeStore:
    """What a save reads: every vector of one version, in id order, in batches."""

    def __init__(self, ids, vectors, version: int = 1):
        self.held = dict(zip(np.asarray(ids).tolist(), vectors))
        self.version = version
        self.reads = 0

    def change(self, removed=(), added=(), vectors=()):
        for i in removed:
            self.held.pop(int(i), None)
        self.held.update(zip(np.asarray(added, np.int64).tolist(), vectors))
        self.version += 1

    def read_all(self):
        self.reads += 1
        ids = np.array(sorted(self.held), np.int64)
        for start in range(0, len(ids), 3):  # several batches
            batch = ids[start:start + 3]
            yield batch, np.stack([self.held[int(i)] for i in batch])

    def save(self, mirror: VectorMirror) -> None:
        mirror.save(self.version, self.read_all, lambda: self.version)


def answers(mirror: VectorMirror, ids) -> dict[int, np.ndarray]:
    found, vectors = mirror.get(np.asarray(ids, np.int64))
    assert len(set(found.tolist())) == len(found), "an id answered twice"
    return dict(zip(found.tolist(), vectors))


def assert_holds(mirror: VectorMirror, store: FakeStore) -> None:
    asked = range(max(store.held) + 5)  # also the ids removed and some it never had
    got = answers(mirror, asked)
    assert sorted(got) == sorted(store.held)
    for i, vector in store.held.items():
        np.testing.assert_array_equal(got[i], vector)


def data_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("generation-1.vectors-*.f16"))


@pytest.fixture
def saved(tmp_path):
    store = FakeStore(np.arange(1, 11), unit_rows(10, seed=0))
    mirror = VectorMirror(tmp_path, 1, DIM)
    store.save(mirror)
    return mirror, store


def test_a_saved_copy_answers_with_the_stored_vectors(saved, tmp_path):
    mirror, store = saved
    assert_holds(mirror, store)
    reopened = VectorMirror(tmp_path, 1, DIM)
    assert reopened.load(store.version)
    assert_holds(reopened, store)


def test_rows_are_read_the_same_where_there_is_no_positioned_read(saved, monkeypatch):
    mirror, store = saved
    monkeypatch.delattr(vector_mirror.os, "pread")  # as on Windows
    assert_holds(mirror, store)


def test_a_copy_of_another_version_is_not_used(saved, tmp_path):
    _mirror, store = saved
    other = VectorMirror(tmp_path, 1, DIM)
    assert not other.load(store.version + 1)
    assert answers(other, list(store.held)) == {}


def test_changes_are_answered_before_the_save_and_appended_by_it(saved, tmp_path):
    mirror, store = saved
    before = data_files(tmp_path)
    # id 10 removed and given again to another passage, as SQLite may after a delete
    new_ids, new_vectors = np.array([10, 11, 12]), unit_rows(3, seed=1)
    store.change(removed=[3, 10], added=new_ids, vectors=new_vectors)
    mirror.apply(np.array([3, 10]), new_ids, new_vectors)
    assert_holds(mirror, store)
    store.save(mirror)
    assert data_files(tmp_path) == before and store.reads == 1  # appended, not read again
    reopened = VectorMirror(tmp_path, 1, DIM)
    assert reopened.load(store.version)
    assert_holds(reopened, store)


def test_a_copy_of_mostly_dead_rows_is_written_anew(saved, tmp_path, monkeypatch):
    monkeypatch.setattr(vector_mirror, "COMPACT_MIN_DEAD", 0)
    mirror, store = saved
    before = data_files(tmp_path)
    store.change(removed=range(1, 9))
    mirror.apply(np.arange(1, 9), np.empty(0, np.int64), None)
    store.save(mirror)
    assert data_files(tmp_path) != before and len(data_files(tmp_path)) == 1
    assert (tmp_path / data_files(tmp_path)[0]).stat().st_size == 2 * DIM * 2
    assert_holds(mirror, store)


def test_an_append_a_crash_cut_short_is_overwritten(saved, tmp_path):
    mirror, store = saved
    with open(tmp_path / data_files(tmp_path)[0], "ab") as f:
        f.write(b"\x7f" * (DIM * 2 + 5))  # half-written rows past the map's count
    reopened = VectorMirror(tmp_path, 1, DIM)
    assert reopened.load(store.version)
    store.change(added=[20], vectors=unit_rows(1, seed=2))
    reopened.apply(np.empty(0, np.int64), np.array([20]), store.held[20][None])
    store.save(reopened)
    again = VectorMirror(tmp_path, 1, DIM)
    assert again.load(store.version)
    assert_holds(again, store)


def test_the_data_file_of_a_killed_full_write_is_removed_by_the_next_save(saved, tmp_path):
    mirror, store = saved
    kept = data_files(tmp_path)
    (tmp_path / "generation-1.vectors-0badf00d.f16").write_bytes(b"\0" * 1000)  # no map names it
    store.change(added=[30], vectors=unit_rows(1, seed=5))
    mirror.apply(np.empty(0, np.int64), np.array([30]), store.held[30][None])
    store.save(mirror)
    assert data_files(tmp_path) == kept
    assert_holds(mirror, store)


@pytest.mark.parametrize("damage", ["map", "data"])
def test_a_damaged_copy_is_noted_left_to_the_store_and_written_again(saved, tmp_path, damage, caplog):
    mirror, store = saved
    if damage == "map":
        mirror.map_path.write_bytes(b"PK\x03\x04 not a zip")
    else:  # shorter than its rows
        data = tmp_path / data_files(tmp_path)[0]
        data.write_bytes(data.read_bytes()[:DIM * 2 * 4])
    reopened = VectorMirror(tmp_path, 1, DIM)
    with caplog.at_level(logging.WARNING):
        assert not reopened.load(store.version)
    assert any("vector copy" in r.getMessage() and "damaged" in r.getMessage() for r in caplog.records)
    assert answers(reopened, list(store.held)) == {}
    store.save(reopened)
    assert reopened.usable
    assert_holds(reopened, store)


@pytest.mark.parametrize("how", ["removed", "cut short"])
def test_a_data_file_changed_behind_a_reader_leaves_the_answers_to_the_store(saved, tmp_path, how, caplog):
    mirror, store = saved
    data = tmp_path / data_files(tmp_path)[0]
    if how == "removed":
        data.unlink()
    else:
        data.write_bytes(data.read_bytes()[: DIM * 2 * 3])
    with caplog.at_level(logging.INFO, logger=vector_mirror.__name__):
        for _ in range(3):  # query after query: one note, and the file is not tried again
            assert answers(mirror, list(store.held)) == {}
    assert len([r for r in caplog.records if "vector copy" in r.getMessage()]) == 1
    assert not mirror.usable
    store.save(mirror)  # the next save writes it anew
    assert_holds(mirror, store)


def test_a_full_write_is_dropped_when_the_store_moves_on_meanwhile(tmp_path):
    store = FakeStore(np.arange(1, 5), unit_rows(4, seed=3))
    mirror = VectorMirror(tmp_path, 1, DIM)
    versions = iter([store.version, store.version + 1])  # a commit lands while it reads
    mirror.save(store.version, store.read_all, lambda: next(versions))
    assert not mirror.usable and not mirror.map_path.exists() and data_files(tmp_path) == []


def test_a_save_waits_for_no_one_and_leaves_the_copy_to_the_process_writing_it(tmp_path):
    store = FakeStore(np.arange(1, 5), unit_rows(4, seed=4))
    other = WriteLock(tmp_path / "generation-1.vectors.lock")
    assert other.try_acquire("another process's save")
    try:
        mirror = VectorMirror(tmp_path, 1, DIM)
        store.save(mirror)
        assert not mirror.map_path.exists() and store.reads == 0
    finally:
        other.release()


# -- in a library ------------------------------------------------------------------------


@pytest.fixture
def compressed_library(babelfind_home, tmp_path, monkeypatch):
    """A library whose index re-scores (8-bit IVF codes above 100 passages)."""
    monkeypatch.setattr(live_index, "VectorIndexConfig", lambda: COMPRESSED)
    index_folder(babelfind_home, write_folder(tmp_path / "docs"))
    return babelfind_home


def top(library: Library) -> list[list[tuple[str, float]]]:
    return [[(hit.path, round(hit.score, 5)) for hit in library.search(q, 5, mode="dense")] for q in QUERIES]


def count_database_reads(monkeypatch) -> list[int]:
    asked: list[int] = []
    real = live_index.vectors_of

    def counting(store, generation_id, dim, ids):
        asked.extend(ids)
        return real(store, generation_id, dim, ids)

    monkeypatch.setattr(live_index, "vectors_of", counting)
    return asked


def test_a_library_re_scores_from_the_copy_with_the_same_results(compressed_library, monkeypatch):
    paths = data_paths(compressed_library)
    library = Library.open(paths, encoder=SeededEncoder())
    try:
        assert library.live.mirror.usable and not library.live.index.exact
        asked = count_database_reads(monkeypatch)
        with_copy = top(library)
        assert asked == []  # every candidate came from the copy
    finally:
        library.close()
    library.live.mirror.delete_files()
    library = Library.open(paths, encoder=SeededEncoder())
    try:
        assert not library.live.mirror.usable
        assert top(library) == with_copy and asked  # the same, read from the database
    finally:
        library.close()


def test_documents_added_and_removed_are_seen_through_the_copy(compressed_library, tmp_path, monkeypatch):
    paths = data_paths(compressed_library)
    more = write_folder(tmp_path / "more", documents=60, seed=1)
    library = Library.open(paths, encoder=SeededEncoder())
    try:
        *_, _finished = library.index_paths([more])
        assert library.forget(tmp_path / "docs" / "doc0001.txt") == 1
        live = library.live
        ids = live.index.ids()
        from_copy = live.vectors(ids)
        stored = live_index.StoredVectors(live.store, live.generation, live.searchable,
                                          VectorMirror(tmp_path, 99, live.generation.dim))  # no copy
        from_database = stored.get(ids)
        np.testing.assert_array_equal(from_copy[0], from_database[0])
        np.testing.assert_allclose(from_copy[1], from_database[1], atol=1e-6)
        version, every_id = live.version, np.arange(ids.max() + 10)
        assert sorted(live.mirror.get(every_id)[0]) == sorted(ids)  # the removed passage's too
    finally:
        library.close()
    reopened = VectorMirror(paths.indexes, 1, from_copy[1].shape[1])
    assert reopened.load(version)  # the saves kept the copy at the library's version
    assert sorted(reopened.get(every_id)[0]) == sorted(ids)


def test_a_library_of_an_earlier_version_gets_its_copy_at_the_next_save(compressed_library):
    paths = data_paths(compressed_library)
    for path in paths.indexes.glob("generation-*.vectors*"):
        path.unlink()
    library = Library.open(paths, encoder=SeededEncoder())
    try:
        assert not library.live.mirror.usable
        expected = top(library)
        library.live.save()
        assert library.live.mirror.usable and top(library) == expected
    finally:
        library.close()
    assert LiveIndex.file_for(paths.indexes, 1).exists()


def test_check_compares_the_copy_with_the_database(compressed_library):
    paths = data_paths(compressed_library)
    assert check_home(paths).ok
    data = next(paths.indexes.glob("generation-1.vectors-*.f16"))
    damaged = bytearray(data.read_bytes())
    damaged[100:110] = b"\x00" * 10  # one row's values changed behind the map's back
    data.write_bytes(bytes(damaged))
    report = check_home(paths)
    assert any("differs from the database for 1 passage(s)" in p for p in report.problems), report.problems


def test_the_copy_serves_a_library_on_either_database(babelfind_home, db_url, tmp_path, monkeypatch):
    monkeypatch.setattr(live_index, "VectorIndexConfig", lambda: COMPRESSED)
    paths = data_paths(babelfind_home)
    library = Library.open(paths, db_url=db_url, encoder=SeededEncoder())
    try:
        *_, _finished = library.index_paths([write_folder(tmp_path / "docs", documents=200)])
        assert library.live.mirror.usable and not library.live.index.exact
        asked = count_database_reads(monkeypatch)
        with_copy = top(library)
        assert asked == []
        assert check_library(library.store, paths.indexes).ok
    finally:
        library.close()
    library.live.mirror.delete_files()
    library = Library.open(paths, db_url=db_url, encoder=SeededEncoder())
    try:
        assert top(library) == with_copy and asked
    finally:
        library.close()
