"""The compressed vector index of a library: 8-bit IVF codes re-scored from the store's
float16 vectors give exact search; libraries of earlier versions (float32 vectors, a
float32 IVF-Flat file) migrate in place, keep every passage and their top results, and a
kill during the migration leaves the old or the new state, never a mix."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from compressed_libraries import COMPRESSED, QUERIES, SeededEncoder, index_folder, write_folder

from engine.config import data_paths
from engine.index import live_index, vector_file
from engine.index.live_index import LiveIndex
from engine.library import Library
from engine.store import DocumentWrite, NewPassage, Store
from engine.store.schema import Vector
from engine.store.vector_blobs import EARLIER, STORED

TESTS = Path(__file__).resolve().parents[1]
def top_documents(home: Path, k: int = 5) -> list[list[tuple[str, float]]]:
    library = Library.open(data_paths(home), encoder=SeededEncoder())
    try:
        return [[(hit.path, round(hit.score, 4)) for hit in library.search(q, k, mode="dense")]
                for q in QUERIES]
    finally:
        library.close()


def brute_force(live: LiveIndex, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    ids, vectors = live.vectors(live.index.ids())
    scores = queries @ vectors.T
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(scores, order, axis=1), ids[order]


@pytest.fixture
def compressed(monkeypatch):
    """Libraries opened in this test build their index with COMPRESSED."""
    monkeypatch.setattr(live_index, "VectorIndexConfig", lambda: COMPRESSED)


def test_compressed_search_equals_exact_search_after_rescoring(babelfind_home, tmp_path, compressed):
    index_folder(babelfind_home, write_folder(tmp_path / "docs"))
    library = Library.open(data_paths(babelfind_home), encoder=SeededEncoder())
    live = library.live
    assert live.index.kind == "ivf" and not live.index.exact
    queries = SeededEncoder().encode(QUERIES, kind="query")
    scores, ids = live.search(queries, 10)
    exact_scores, exact_ids = brute_force(live, queries, 10)
    np.testing.assert_array_equal(ids, exact_ids)
    np.testing.assert_allclose(scores, exact_scores, atol=1e-6)
    # what the 8-bit codes alone say is close but not exact: the re-scoring is what makes it so
    code_scores, code_ids = live.index._search_locked(queries, 10, None)
    assert 1e-6 < np.abs(code_scores - exact_scores).max() < 0.05
    library.close()


def test_compressed_and_flat_libraries_give_the_same_results(babelfind_home, tmp_path, monkeypatch):
    index_folder(babelfind_home, write_folder(tmp_path / "docs"))
    flat = top_documents(babelfind_home)
    LiveIndex.file_for(data_paths(babelfind_home).indexes, 1).unlink()  # rebuilt compressed
    monkeypatch.setattr(live_index, "VectorIndexConfig", lambda: COMPRESSED)
    assert top_documents(babelfind_home) == flat
    assert vector_file.read_trailer(LiveIndex.file_for(data_paths(babelfind_home).indexes, 1))["kind"] == "ivf"


def test_stored_float16_vectors_round_trip_within_tolerance(tmp_path):
    store = Store.open(f"sqlite:///{tmp_path / 'store.db'}")
    generation = store.create_generation("model", 384, "active")
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((50, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    passages = tuple(NewPassage(f"p{i}", 0, 2, None, "en") for i in range(50))
    store.write_documents(store.ensure_root("/"), generation.id,
                          [DocumentWrite("/a.txt", 1, 1.0, "h", "txt", "text", "en", passages, vectors)])
    (ids, got), = store.iter_vectors(generation.id, 384)
    with store.session() as s:
        sizes = {len(b) for b in s.scalars(Vector.__table__.select().with_only_columns(Vector.data))}
    assert sizes == {STORED.itemsize * 384}  # half of float32
    assert np.abs(got - vectors).max() < 1e-3
    assert ((got * vectors).sum(1) / np.linalg.norm(got, axis=1)).min() > 0.99999
    store.close()


# ---- libraries of earlier versions -------------------------------------------------------


def make_earlier_version(home: Path) -> None:
    """Turns a library into what versions before the compressed index left: float32
    vector blobs and a float32 IVF-Flat file (format 1), stamped as current."""
    import faiss

    library = Library.open(data_paths(home), encoder=SeededEncoder())
    store, generation = library.store, library.live.generation
    with store.session() as s:
        rows = s.execute(Vector.__table__.select().where(Vector.generation_id == generation.id)).all()
        for row in rows:
            value = np.frombuffer(row.data, dtype=STORED).astype(EARLIER)
            s.execute(Vector.__table__.update().where(
                Vector.generation_id == row.generation_id, Vector.passage_id == row.passage_id)
                .values(data=value.tobytes()))
    ids, vectors = library.live.vectors(library.live.index.ids())
    nlist = 8
    ivf = faiss.IndexIVFFlat(faiss.IndexFlatIP(generation.dim), generation.dim, nlist, faiss.METRIC_INNER_PRODUCT)
    ivf.train(vectors)
    ivf.add_with_ids(vectors, ids)
    path = LiveIndex.file_for(data_paths(home).indexes, generation.id)
    saved_format = vector_file.FORMAT_VERSION
    vector_file.FORMAT_VERSION = 1
    try:
        vector_file.write_index_file(path, ivf, generation=generation.version,
                                     meta={"kind": "ivf", "trained_count": len(ids)})
    finally:
        vector_file.FORMAT_VERSION = saved_format
    assert store.has_earlier_vectors(generation.id, generation.dim) and len(ids) > 100
    library.close()


def state(home: Path) -> tuple[str, str]:
    """(the stored vectors: "float32", "float16" or "mixed"; the index file: "format 1",
    "format 2" or "none")."""
    store = Store.open(data_paths(home).db_url)
    with store.session() as s:
        sizes = {len(b) for b in s.scalars(Vector.__table__.select().with_only_columns(Vector.data))}
    store.close()
    vectors = {frozenset({EARLIER.itemsize * 64}): "float32",
               frozenset({STORED.itemsize * 64}): "float16"}.get(frozenset(sizes), "mixed")
    trailer = vector_file.read_trailer(LiveIndex.file_for(data_paths(home).indexes, 1))
    return vectors, "none" if trailer is None else f"format {trailer['format']}"


def test_an_earlier_library_migrates_in_place_keeping_its_passages_and_results(
        babelfind_home, tmp_path, compressed):
    index_folder(babelfind_home, write_folder(tmp_path / "docs"))
    before = top_documents(babelfind_home)
    make_earlier_version(babelfind_home)
    assert state(babelfind_home) == ("float32", "format 1")
    library = Library.open(data_paths(babelfind_home), encoder=SeededEncoder())
    assert state(babelfind_home) == ("float16", "format 2")
    assert library.live.index.kind == "ivf" and library.check().ok
    ids, vectors = library.live.vectors(library.live.index.ids())
    assert len(ids) == 400
    _, found = library.live.search(vectors, 1)  # every passage finds itself first
    assert (found[:, 0] == ids).all()
    library.close()
    assert top_documents(babelfind_home) == before


KILLER = """
import os, signal, sys
sys.path[:0] = [{tests!r}]
from compressed_libraries import SeededEncoder
import engine.index.live_index as live_index
import engine.index.vectors as vectors
import engine.store.store as store
from engine.config import data_paths
from engine.index.vector_config import VectorIndexConfig
from engine.library import Library

live_index.VectorIndexConfig = lambda: VectorIndexConfig(exact_max=100, nprobe=10**6, min_scanned=0,
                                                         use_gpu="never")
at = {at!r}
if at == "converting":  # half-way through the one transaction that rewrites the vectors
    blobs, calls = store.vector_blobs, []
    def vector_blobs(v):
        calls.append(1)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        return blobs(v)
    store.vector_blobs = vector_blobs
    convert = store.Store.convert_vectors
    store.Store.convert_vectors = lambda self, g, d, batch=5000: convert(self, g, d, batch=150)
else:  # while the new index file is being written
    write = vectors.write_index_file
    def write_index_file(path, index, **kw):
        import faiss
        real = faiss.write_index
        def half_then_die(ix, writer):
            writer.callback(b"x" * 1000)  # the start of a file, then the process dies
            os.kill(os.getpid(), signal.SIGKILL)
        faiss.write_index = half_then_die
        write(path, index, **kw)
    vectors.write_index_file = write_index_file
Library.open(data_paths({home!r}), encoder=SeededEncoder())
"""


@pytest.mark.parametrize("at, after_kill", [("converting", ("float32", "format 1")),
                                            ("saving", ("float16", "none"))])
def test_a_kill_during_the_migration_leaves_the_old_or_the_new_state(
        babelfind_home, tmp_path, compressed, at, after_kill):
    index_folder(babelfind_home, write_folder(tmp_path / "docs"))
    before = top_documents(babelfind_home)
    make_earlier_version(babelfind_home)
    script = KILLER.format(tests=str(TESTS), at=at, home=str(babelfind_home))
    done = subprocess.run([sys.executable, "-c", script], env=os.environ | {"PYTHONPATH": str(TESTS.parent)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert state(babelfind_home) == after_kill  # all old, or the stored vectors all new
    assert top_documents(babelfind_home) == before  # the next open finishes the migration
    assert state(babelfind_home) == ("float16", "format 2")
