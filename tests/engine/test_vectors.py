"""VectorIndex against a numpy brute-force reference on small seeded random data.

Data used: `_sphere` draws uniform random unit vectors (Gaussian, normalised);
`_mixture` draws a clustered Gaussian mixture (unit centres plus per-dimension noise of
norm ~1, normalised), which resembles real sentence embeddings better.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import faiss
import numpy as np
import pytest

from engine.index import vector_file
from engine.errors import InputError
from engine.index.exact_vectors import HeldVectors
from engine.index.vectors import VectorIndex, gpu_available
from engine.index.vector_config import VectorIndexConfig

DIM = 32
# IVF above 1k vectors, so tests stay fast; min_scanned=0 lets nprobe alone decide.
SMALL = VectorIndexConfig(exact_max=1_000, nprobe=8, min_scanned=0)


def _sphere(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    x = rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _mixture(rng: np.random.Generator, n: int, dim: int, clusters: int) -> np.ndarray:
    centres = _sphere(rng, clusters, dim)
    x = centres[rng.integers(0, clusters, n)] + rng.standard_normal((n, dim)).astype(np.float32) / np.sqrt(dim)
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def _brute_force(ids: np.ndarray, vectors: np.ndarray, queries: np.ndarray, k: int):
    """Reference top-k: scores float32 [m, k], ids int64 [m, k], padded like the index."""
    scores = queries @ vectors.T  # [m, n]
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    top_scores = np.take_along_axis(scores, order, axis=1)
    top_ids = ids[order]
    pad = k - top_ids.shape[1]
    top_scores = np.pad(top_scores, ((0, 0), (0, pad)), constant_values=-np.inf)
    top_ids = np.pad(top_ids, ((0, 0), (0, pad)), constant_values=-1)
    return top_scores.astype(np.float32), top_ids.astype(np.int64)


def _recall(found: np.ndarray, truth: np.ndarray) -> float:
    hits = sum(len(set(f) & set(t)) for f, t in zip(found.tolist(), truth.tolist()))
    return hits / truth.size


def _as_reference(store: dict[int, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    ids = np.array(sorted(store), dtype=np.int64)
    return ids, np.stack([store[i] for i in ids.tolist()]) if len(ids) else np.empty((0, DIM), np.float32)


# ---- search against the reference ------------------------------------------------------


def test_flat_search_matches_brute_force_and_pads():
    rng = np.random.default_rng(0)
    vectors, ids = _sphere(rng, 300), rng.choice(10**9, 300, replace=False).astype(np.int64)
    index = VectorIndex.build(DIM, ids, vectors)
    queries = _sphere(rng, 7)
    scores, found = index.search(queries, k=10)
    ref_scores, ref_ids = _brute_force(ids, vectors, queries, 10)
    assert index.kind == "flat" and scores.dtype == np.float32 and found.dtype == np.int64
    np.testing.assert_array_equal(found, ref_ids)
    np.testing.assert_allclose(scores, ref_scores, atol=1e-5)
    # More hits asked than vectors held: padded with -1 / -inf.
    scores, found = index.search(queries, k=400)
    assert (found[:, 300:] == -1).all() and np.isneginf(scores[:, 300:]).all()
    np.testing.assert_array_equal(np.sort(found[:, :300], axis=1), np.tile(np.sort(ids), (7, 1)))


def test_empty_index_returns_only_padding():
    scores, found = VectorIndex(DIM).search(_sphere(np.random.default_rng(1), 2), k=3)
    assert found.shape == (2, 3) and (found == -1).all() and np.isneginf(scores).all()


@pytest.mark.parametrize("config", [VectorIndexConfig(), SMALL], ids=["flat", "ivf"])
def test_add_remove_round_trip_matches_reference(config):
    rng = np.random.default_rng(2)
    index, store = VectorIndex(DIM, config=config), {}
    for step in range(6):
        new_ids = rng.choice(5_000, 400, replace=False).astype(np.int64)
        vectors = _sphere(rng, 400)
        index.add(new_ids, vectors)  # ids seen before get the new vector
        store.update(zip(new_ids.tolist(), vectors))
        gone = rng.choice(5_000, 150, replace=False).astype(np.int64)
        assert index.remove(gone) == len(set(gone.tolist()) & store.keys())
        for i in gone.tolist():
            store.pop(i, None)
        ref_ids, ref_vectors = _as_reference(store)
        np.testing.assert_array_equal(index.ids(), ref_ids)
        assert len(index) == len(store)
    if config is SMALL:
        assert index.kind == "ivf"
        # Every list probed: IVF must then equal the exact reference.
        every_list = VectorIndexConfig(exact_max=1_000, nprobe=10**6)
        index = VectorIndex.build(DIM, ref_ids, ref_vectors, config=every_list)
    queries = _sphere(rng, 5)
    truth = _brute_force(ref_ids, ref_vectors, queries, 10)[1]
    np.testing.assert_array_equal(index.search(queries, 10)[1], truth)


@pytest.mark.parametrize("config", [VectorIndexConfig(), SMALL], ids=["flat", "ivf"])
def test_removed_ids_are_never_returned(config):
    rng = np.random.default_rng(3)
    vectors = _sphere(rng, 3_000)
    ids = np.arange(3_000, dtype=np.int64)
    index = VectorIndex.build(DIM, ids, vectors, config=config)
    removed = ids[::3]
    assert index.remove(removed) == len(removed)
    assert index.remove(removed) == 0  # already gone
    # Query with the removed vectors themselves: their own id would be the top hit.
    _, found = index.search(vectors[removed], k=50)
    assert not np.isin(found, removed).any()
    assert not np.isin(index.ids(), removed).any()


def test_add_existing_id_replaces_its_vector():
    rng = np.random.default_rng(4)
    old, new = _sphere(rng, 2)
    index = VectorIndex.build(DIM, np.array([5, 6]), np.stack([old, _sphere(rng, 1)[0]]))
    index.add(np.array([5]), new[None])
    assert len(index) == 2
    scores, found = index.search(new[None], k=1)
    assert found[0, 0] == 5 and scores[0, 0] == pytest.approx(1.0, abs=1e-5)


# ---- approximate recall ----------------------------------------------------------------


def test_ivf_recall_at_10_on_clustered_mixture():
    """20k x 64-d Gaussian mixture (200 clusters); IVF with nprobe=48 of 141 lists."""
    rng = np.random.default_rng(5)
    vectors = _mixture(rng, 20_000, 64, clusters=200)
    ids = np.arange(20_000, dtype=np.int64) + 100
    index = VectorIndex.build(64, ids, vectors, config=VectorIndexConfig(exact_max=5_000, nprobe=48, min_scanned=0))
    queries = _mixture(np.random.default_rng(55), 200, 64, clusters=200)
    assert index.kind == "ivf"
    truth = _brute_force(ids, vectors, queries, 10)[1]
    assert _recall(index.search(queries, 10)[1], truth) >= 0.95


def test_ivf_recall_at_10_on_uniform_sphere():
    """5k x 32-d uniform on the sphere: the worst case for IVF, so nprobe=48 of 71 lists."""
    rng = np.random.default_rng(6)
    vectors, ids = _sphere(rng, 5_000), np.arange(5_000, dtype=np.int64)
    index = VectorIndex.build(DIM, ids, vectors, config=VectorIndexConfig(exact_max=1_000, nprobe=48, min_scanned=0))
    queries = _sphere(rng, 200)
    assert index.kind == "ivf"
    truth = _brute_force(ids, vectors, queries, 10)[1]
    assert _recall(index.search(queries, 10)[1], truth) >= 0.95


def test_min_scanned_raises_nprobe_and_set_nprobe_changes_it():
    rng = np.random.default_rng(17)
    vectors, ids = _sphere(rng, 4_000), np.arange(4_000, dtype=np.int64)
    config = VectorIndexConfig(exact_max=1_000, nprobe=4, min_scanned=2_000)
    index = VectorIndex.build(DIM, ids, vectors, config=config)
    nlist = index._index.nlist  # 63 lists of ~63.5 vectors: 2 000 need 32 lists
    assert index.effective_nprobe == int(np.ceil(2_000 / (4_000 / nlist))) == 32
    index.set_nprobe(nlist)  # every list: IVF becomes exact
    queries = _sphere(rng, 5)
    np.testing.assert_array_equal(index.search(queries, 10)[1], _brute_force(ids, vectors, queries, 10)[1])
    assert VectorIndex(DIM).effective_nprobe is None


# ---- candidate filter ------------------------------------------------------------------


@pytest.mark.parametrize("config", [VectorIndexConfig(), SMALL], ids=["flat", "ivf"])
def test_candidate_filter_restricts_to_given_ids(config):
    rng = np.random.default_rng(7)
    vectors, ids = _sphere(rng, 4_000), np.arange(4_000, dtype=np.int64) * 10
    index = VectorIndex.build(DIM, ids, vectors, config=config)
    allowed = np.sort(rng.choice(len(ids), 40, replace=False))
    queries = _sphere(rng, 6)
    scores, found = index.search(queries, k=10, candidate_filter=ids[allowed])
    ref_scores, ref_ids = _brute_force(ids[allowed], vectors[allowed], queries, 10)
    # A filter of 1% makes IVF scan every list, so even IVF is exact here.
    np.testing.assert_array_equal(found, ref_ids)
    np.testing.assert_allclose(scores, ref_scores, atol=1e-5)


# ---- kind switching --------------------------------------------------------------------


def test_kind_switches_at_threshold_with_hysteresis():
    rng = np.random.default_rng(8)
    vectors, ids = _sphere(rng, 1_600), np.arange(1_600, dtype=np.int64)
    index = VectorIndex(DIM, config=SMALL)
    index.add(ids[:1_000], vectors[:1_000])
    assert index.kind == "flat"  # exactly at exact_max: still exact
    index.add(ids[1_000:1_001], vectors[1_000:1_001])
    assert index.kind == "ivf"
    index.remove(ids[:200])  # 801 left: below exact_max but above exact_max * 0.5
    assert index.kind == "ivf"
    index.remove(ids[200:400])  # 601 left
    assert index.kind == "ivf"
    index.remove(ids[400:502])  # 499 left: below 500
    assert index.kind == "flat"
    np.testing.assert_array_equal(index.ids(), ids[502:1_001])
    assert VectorIndex.build(DIM, ids, vectors, config=SMALL).kind == "ivf"
    assert VectorIndex.build(DIM, ids[:1_000], vectors[:1_000], config=SMALL).kind == "flat"


@pytest.mark.parametrize("threads", [1, 2])
def test_one_query_finds_what_it_finds_in_a_batch(threads):
    """A single query's lists are shared out across FAISS's threads, a batch's queries are:
    the same lists scanned, the same answers, with or without a filter."""
    import faiss

    rng = np.random.default_rng(5)
    vectors = _mixture(rng, 4_000, DIM, clusters=40)
    index = VectorIndex.build(DIM, np.arange(4_000, dtype=np.int64), vectors, config=SMALL)
    queries, allowed = _sphere(rng, 20), np.sort(rng.choice(4_000, 600, replace=False)).astype(np.int64)
    previous = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(threads)
    try:
        for candidate_filter in (None, allowed):
            batch_scores, batch_ids = index.search(queries, 10, candidate_filter=candidate_filter)
            for row, query in enumerate(queries):
                scores, found = index.search(query[None], 10, candidate_filter=candidate_filter)
                np.testing.assert_array_equal(found[0], batch_ids[row])
                np.testing.assert_array_equal(scores[0], batch_scores[row])
    finally:
        faiss.omp_set_num_threads(previous)
    assert index.kind == "ivf"


def test_ivf_is_retrained_when_it_has_grown():
    rng = np.random.default_rng(9)
    vectors, ids = _sphere(rng, 4_500), np.arange(4_500, dtype=np.int64)
    index = VectorIndex.build(DIM, ids[:1_100], vectors[:1_100], config=SMALL)
    first_lists = index._index.nlist
    index.add(ids[1_100:4_400], vectors[1_100:4_400])  # 4 400 = 4 x 1 100: not yet
    assert index._index.nlist == first_lists
    index.add(ids[4_400:], vectors[4_400:])
    assert index.kind == "ivf" and index._index.nlist == round(np.sqrt(4_500)) > first_lists
    np.testing.assert_array_equal(index.ids(), ids)


# ---- save / load -----------------------------------------------------------------------


@pytest.mark.parametrize("config", [VectorIndexConfig(), SMALL], ids=["flat", "ivf"])
def test_save_load_round_trip(tmp_path, config):
    rng = np.random.default_rng(10)
    vectors, ids = _sphere(rng, 2_000), rng.choice(10**12, 2_000, replace=False).astype(np.int64)
    held = HeldVectors(DIM)  # the full-precision vectors, which the file does not hold
    index = VectorIndex.build(DIM, ids, vectors, config=config, exact=held)
    path = tmp_path / "vectors.faiss"
    index.save(path, generation=42)
    loaded = VectorIndex.load(path, expected_generation=42, dim=DIM, config=config, exact=held)
    assert loaded is not None and loaded.kind == index.kind and len(loaded) == 2_000
    np.testing.assert_array_equal(loaded.ids(), np.sort(ids))
    queries = _sphere(rng, 5)
    np.testing.assert_array_equal(loaded.search(queries, 10)[1], index.search(queries, 10)[1])
    assert [p.name for p in tmp_path.iterdir()] == ["vectors.faiss"]  # no temp left


def _saved(tmp_path: Path, generation: int = 1, seed: int = 11) -> tuple[Path, VectorIndex]:
    rng = np.random.default_rng(seed)
    index = VectorIndex.build(DIM, np.arange(500, dtype=np.int64), _sphere(rng, 500))
    path = tmp_path / "vectors.faiss"
    index.save(path, generation=generation)
    return path, index


def test_load_refuses_other_generation_dim_or_missing_file(tmp_path):
    path, _ = _saved(tmp_path, generation=3)
    assert VectorIndex.load(path, expected_generation=4, dim=DIM) is None
    assert VectorIndex.load(path, expected_generation=3, dim=DIM + 1) is None
    assert VectorIndex.load(tmp_path / "absent.faiss", expected_generation=3, dim=DIM) is None
    assert VectorIndex.load(path, expected_generation=3, dim=DIM) is not None


@pytest.mark.parametrize("keep", [0, 5, 100, 0.5, -13, -1])
def test_truncated_file_loads_as_none(tmp_path, keep):
    path, _ = _saved(tmp_path)
    data = path.read_bytes()
    cut = int(len(data) * keep) if isinstance(keep, float) else keep
    path.write_bytes(data[:cut])
    assert VectorIndex.load(path, expected_generation=1, dim=DIM) is None


@pytest.mark.parametrize("offset", [0, 40, 5_000, -30])
def test_damaged_bytes_load_as_none(tmp_path, offset):
    path, _ = _saved(tmp_path)
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))
    assert VectorIndex.load(path, expected_generation=1, dim=DIM) is None


def test_edited_trailer_loads_as_none(tmp_path):
    path, _ = _saved(tmp_path, generation=1)
    data = path.read_bytes()
    assert data.count(b'"generation": 1,') == 1
    path.write_bytes(data.replace(b'"generation": 1,', b'"generation": 2,'))  # still valid JSON
    assert VectorIndex.load(path, expected_generation=2, dim=DIM) is None
    assert VectorIndex.load(path, expected_generation=1, dim=DIM) is None


def test_foreign_file_loads_as_none(tmp_path):
    path = tmp_path / "vectors.faiss"
    path.write_bytes(os.urandom(4_096))
    assert VectorIndex.load(path, expected_generation=1, dim=DIM) is None
    faiss.write_index(faiss.IndexFlatIP(DIM), str(path))  # a bare FAISS file, no trailer
    assert VectorIndex.load(path, expected_generation=1, dim=DIM) is None


def test_crash_before_replace_keeps_old_file(tmp_path, monkeypatch):
    path, old = _saved(tmp_path, generation=1)
    new = VectorIndex.build(DIM, np.arange(10, dtype=np.int64), _sphere(np.random.default_rng(12), 10))

    def crash(*args):
        raise OSError("simulated crash before rename")

    monkeypatch.setattr(vector_file.os, "replace", crash)
    with pytest.raises(OSError):
        new.save(path, generation=2)
    monkeypatch.undo()
    assert VectorIndex.load(path, expected_generation=2, dim=DIM) is None
    loaded = VectorIndex.load(path, expected_generation=1, dim=DIM)
    assert loaded is not None and len(loaded) == len(old) == 500


def test_crash_mid_write_keeps_old_file_and_stale_temp_is_harmless(tmp_path, monkeypatch):
    path, _ = _saved(tmp_path, generation=1)

    def write_half_then_die(index, write):
        write(b"\x00" * 1_000)  # part of the payload reaches the temp file
        raise RuntimeError("simulated kill during write")

    monkeypatch.setattr(faiss, "PyCallbackIOWriter", lambda callback: callback)
    monkeypatch.setattr(faiss, "write_index", write_half_then_die)
    new = VectorIndex.build(DIM, np.arange(10, dtype=np.int64), _sphere(np.random.default_rng(13), 10))
    with pytest.raises(RuntimeError):
        new.save(path, generation=2)
    monkeypatch.undo()
    # A hard kill would leave the temp file behind: fake one, garbage inside, last written
    # an hour ago; and one another process is writing right now, which must be left alone.
    dead = tmp_path / ".vectors.faiss.abc123.tmp"
    dead.write_bytes(b"garbage")
    os.utime(dead, (time.time() - 3600, time.time() - 3600))
    (tmp_path / ".vectors.faiss.live42.tmp").write_bytes(b"being written")
    assert len(VectorIndex.load(path, expected_generation=1, dim=DIM)) == 500
    new.save(path, generation=2)
    assert len(VectorIndex.load(path, expected_generation=2, dim=DIM)) == 10
    assert sorted(p.name for p in tmp_path.iterdir()) == [".vectors.faiss.live42.tmp", "vectors.faiss"]


# ---- bad input, GPU choice, threads ----------------------------------------------------


def test_bad_input_raises_input_error():
    rng = np.random.default_rng(14)
    index = VectorIndex(DIM)
    good = _sphere(rng, 2)
    bad_calls = [
        lambda: index.add(np.array([1, 2]), _sphere(rng, 2, DIM + 1)),  # wrong dim
        lambda: index.add(np.array([1, 2]), good * 2),  # not normalised
        lambda: index.add(np.array([1, 2]), np.full((2, DIM), np.nan, np.float32)),
        lambda: index.add(np.array([1, -2]), good),  # -1 is the padding id
        lambda: index.add(np.array([1, 1]), good),  # duplicate ids in a batch
        lambda: index.add(np.array([1, 2, 3]), good),  # length mismatch
        lambda: index.add(np.array([1.0, 2.0]), good),  # float ids
        lambda: index.add(np.array([[1, 2]]), good),
        lambda: index.search(good, k=0),
        lambda: index.search(good[0], k=1),  # 1-D query
        lambda: index.search(good, k=1, candidate_filter=np.array([-5])),
        lambda: index.remove(np.array([[1]])),
        lambda: index.save(Path("unused"), generation=-1),
        lambda: VectorIndex(0),
        lambda: VectorIndexConfig(exact_max=0),
        lambda: VectorIndexConfig(shrink_ratio=1.0),
        lambda: VectorIndexConfig(regrow_factor=1.0),
        lambda: VectorIndexConfig(use_gpu="yes"),
    ]
    for call in bad_calls:
        with pytest.raises(InputError):
            call()
    assert len(index) == 0


def test_gpu_detection_and_forced_gpu_without_one():
    assert gpu_available() is (hasattr(faiss, "StandardGpuResources") and faiss.get_num_gpus() > 0)
    if not gpu_available():
        with pytest.raises(InputError):
            VectorIndex(DIM, config=VectorIndexConfig(use_gpu="always"))


@pytest.mark.parametrize(
    "config",
    [VectorIndexConfig(use_gpu="always"),
     VectorIndexConfig(exact_max=1_000, nprobe=8, min_scanned=0, use_gpu="always")],
    ids=["flat", "ivf"],
)
def test_gpu_copy_is_refreshed_after_changes(monkeypatch, config):
    """Stands a CPU clone in for the GPU copy to test when the copy is made and remade."""
    import engine.index.vectors as vectors_module

    copies = []

    def fake_to_gpu(resources, device, index):
        copies.append(index.ntotal)
        return faiss.clone_index(index)

    monkeypatch.setattr(vectors_module, "gpu_available", lambda: True)
    monkeypatch.setattr(vectors_module, "_gpu_resources", lambda: object())
    monkeypatch.setattr(faiss, "index_cpu_to_gpu", fake_to_gpu, raising=False)
    monkeypatch.setattr(faiss, "GpuParameterSpace", faiss.ParameterSpace, raising=False)
    rng = np.random.default_rng(15)
    vectors, ids = _sphere(rng, 2_000), np.arange(2_000, dtype=np.int64)
    index = VectorIndex.build(DIM, ids, vectors, config=config)
    index.search(vectors[:2], 5)
    index.search(vectors[:2], 5)
    assert copies == [2_000]  # copied once, reused while unchanged
    index.remove(ids[:1])
    _, found = index.search(vectors[:1], 5)
    assert copies == [2_000, 1_999] and 0 not in found
    index.search(vectors[:1], 5, candidate_filter=ids[:10])  # filtered search stays on CPU
    assert copies == [2_000, 1_999]


def test_search_while_another_thread_adds_and_removes():
    rng = np.random.default_rng(16)
    vectors, ids = _sphere(rng, 3_000), np.arange(3_000, dtype=np.int64)
    index = VectorIndex(DIM, config=SMALL)
    errors, done = [], threading.Event()

    def search_loop():
        try:
            while not done.is_set():
                _, found = index.search(vectors[:4], 10)
                assert ((found >= -1) & (found < 3_000)).all()
        except Exception as e:  # reported to the main thread below
            errors.append(e)

    searcher = threading.Thread(target=search_loop)
    searcher.start()
    try:
        for start in range(0, 3_000, 250):  # crosses flat -> ivf and a retrain
            index.add(ids[start:start + 250], vectors[start:start + 250])
            index.remove(ids[start:start + 25])
    finally:
        done.set()
        searcher.join()
    assert not errors
    kept = np.setdiff1d(ids, np.concatenate([ids[s:s + 25] for s in range(0, 3_000, 250)]))
    np.testing.assert_array_equal(index.ids(), kept)
    assert index.kind == "ivf"


# ---- product-quantisation codes for the largest libraries --------------------------------


def test_largest_libraries_hold_pq_codes_and_re_scoring_keeps_search_exact(tmp_path):
    """Above pq_above the lists hold PQ codes (a few bytes a vector); with every list
    scanned and enough candidates re-scored, search equals the brute-force reference."""
    rng = np.random.default_rng(18)
    vectors, ids = _mixture(rng, 3_000, DIM, clusters=30), np.arange(3_000, dtype=np.int64)
    config = VectorIndexConfig(exact_max=500, pq_above=2_000, pq_bytes=8, nprobe=10**6,
                               min_scanned=0, pq_rescore_margin=200, use_gpu="never")
    held = HeldVectors(DIM)
    index = VectorIndex.build(DIM, ids, vectors, config=config, exact=held)
    assert index.kind == "ivf-pq" and not index.exact
    queries = _mixture(rng, 20, DIM, clusters=30)
    scores, found = index.search(queries, 10)
    ref_scores, ref_ids = _brute_force(ids, vectors, queries, 10)
    np.testing.assert_array_equal(found, ref_ids)
    np.testing.assert_allclose(scores, ref_scores, atol=1e-5)
    path = tmp_path / "pq.faiss"
    index.save(path, generation=1)
    # 8 code bytes and an 8-byte id a vector, plus the codebooks: less than 8-bit codes take
    assert 3_000 * (8 + 8) < path.stat().st_size < 3_000 * (DIM + 8)
    loaded = VectorIndex.load(path, expected_generation=1, dim=DIM, config=config, exact=held)
    assert loaded.kind == "ivf-pq"
    np.testing.assert_array_equal(loaded.search(queries, 10)[1], ref_ids)


def test_codes_change_kind_only_when_the_lists_are_retrained():
    rng = np.random.default_rng(19)
    vectors, ids = _sphere(rng, 2_600), np.arange(2_600, dtype=np.int64)
    config = VectorIndexConfig(exact_max=100, pq_above=1_000, pq_bytes=8, regrow_factor=2.0,
                               min_scanned=0, use_gpu="never")
    index = VectorIndex.build(DIM, ids[:600], vectors[:600], config=config)
    assert index.kind == "ivf"
    index.add(ids[600:1_100], vectors[600:1_100])  # past pq_above, not yet 2x the trained 600
    assert index.kind == "ivf"
    index.add(ids[1_100:1_300], vectors[1_100:1_300])  # 1 300 > 2 x 600: retrained as PQ
    assert index.kind == "ivf-pq"
    index.remove(ids[:900])  # 400 < 1 000 * 0.5: back to 8-bit codes
    assert index.kind == "ivf"
    np.testing.assert_array_equal(index.ids(), ids[900:1_300])
