"""Vectors read back by id (VectorIndex.vectors from its exact source, LiveIndex.vectors
from the store) equal what was added, on the flat and the IVF index, after removals, a
rebuild and a save/load; the store gives them back as float16. Seeded random unit vectors."""

from __future__ import annotations

import numpy as np
import pytest

from engine.index.exact_vectors import HeldVectors
from engine.index.live_index import LiveIndex
from engine.index.vector_config import VectorIndexConfig
from engine.index.vectors import VectorIndex
from engine.store import DocumentWrite, NewPassage, Store

DIM = 16
SMALL = VectorIndexConfig(exact_max=200, nprobe=4, min_scanned=0, use_gpu="never")


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    x = rng.standard_normal((n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.parametrize("n", [50, 1000], ids=["flat", "ivf"])
def test_vectors_by_id_equal_the_added_ones(n, tmp_path):
    rng = np.random.default_rng(n)
    ids = rng.choice(10 * n, n, replace=False).astype(np.int64)
    vectors = unit(rng, n)
    held = HeldVectors(DIM)
    index = VectorIndex.build(DIM, ids, vectors, config=SMALL, exact=held)
    assert index.kind == ("flat" if n < SMALL.exact_max else "ivf")
    wanted = rng.choice(ids, 20, replace=False)
    found, got = index.vectors(wanted)
    assert found.tolist() == wanted.tolist()
    np.testing.assert_array_equal(got, vectors[[ids.tolist().index(i) for i in wanted.tolist()]])

    index.remove(wanted[:5])
    found, got = index.vectors(np.concatenate([wanted, [10 * n + 7]]))  # removed and never added: left out
    assert found.tolist() == wanted[5:].tolist()
    np.testing.assert_array_equal(got, vectors[[ids.tolist().index(i) for i in wanted[5:].tolist()]])

    replacement = unit(rng, 1)
    index.add(wanted[5:6], replacement)  # an upsert gives the new vector
    np.testing.assert_array_equal(index.vectors(wanted[5:6])[1], replacement)

    index.save(tmp_path / "v.faiss", generation=3)
    loaded = VectorIndex.load(tmp_path / "v.faiss", expected_generation=3, dim=DIM, config=SMALL,
                              exact=held)
    assert loaded is not None
    found, got = loaded.vectors(wanted[5:])
    np.testing.assert_array_equal(got, index.vectors(wanted[5:])[1])
    assert loaded.vectors(np.empty(0, np.int64))[1].shape == (0, DIM)


def test_vectors_survive_a_switch_from_flat_to_ivf():
    rng = np.random.default_rng(5)
    index = VectorIndex(DIM, config=SMALL)
    vectors = unit(rng, 400)
    index.add(np.arange(100, dtype=np.int64), vectors[:100])
    index.add(np.arange(100, 400, dtype=np.int64), vectors[100:])  # past exact_max: rebuilt as IVF
    assert index.kind == "ivf"
    found, got = index.vectors(np.array([3, 150, 399]))
    np.testing.assert_array_equal(got, vectors[[3, 150, 399]])


def test_live_index_reads_vectors_from_the_database_also_those_it_has_not_caught_up_with(tmp_path):
    store = Store.open(f"sqlite:///{tmp_path / 'store.db'}")
    generation = store.create_generation("model", DIM, "active")
    root = store.ensure_root("/")
    rng = np.random.default_rng(2)
    vectors = unit(rng, 6)

    def document(path: str, rows: np.ndarray) -> DocumentWrite:
        passages = tuple(NewPassage(f"p{i}", 0, 2, None, "en") for i in range(len(rows)))
        return DocumentWrite(path, 1, 1.0, path, "txt", "text", "en", passages, rows)

    _, (first,) = store.write_documents(root, generation.id, [document("/a.txt", vectors[:3])])
    live = LiveIndex.open(store, store.generation_by_id(generation.id), tmp_path / "indexes", SMALL,
                          language_neutral=False)  # the vectors as stored (test_language_means: neutral)
    # Another process adds a document; this live index has not caught up with it yet.
    _, (second,) = store.write_documents(root, generation.id, [document("/b.txt", vectors[3:])])
    found, got = live.vectors(np.array(second + first[:1] + [999]))
    assert found.tolist() == sorted(first[:1] + second)
    np.testing.assert_allclose(got, vectors[[0, 3, 4, 5]], atol=1e-3)  # float16: ~3 digits
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)


@pytest.mark.parametrize("spacing", [3, 10**7], ids=["dense-ids-bitmap", "sparse-ids-hash-set"])
@pytest.mark.parametrize("n", [150, 1000], ids=["flat", "ivf"])
def test_filtered_search_is_exact_for_either_selector(spacing, n):
    """Flat is exact; IVF scans every list under a 2% filter, so it is exact too."""
    rng = np.random.default_rng(spacing + n)
    ids = np.arange(1, n + 1, dtype=np.int64) * spacing
    vectors = unit(rng, n)
    index = VectorIndex.build(DIM, ids, vectors, config=SMALL)
    allowed = np.sort(rng.choice(n, max(3, n // 50), replace=False))
    queries = unit(rng, 4)
    scores, found = index.search(queries, 3, candidate_filter=ids[allowed])
    exact = queries @ vectors[allowed].T
    order = np.argsort(-exact, axis=1, kind="stable")[:, :3]
    np.testing.assert_array_equal(found, ids[allowed][order])
    np.testing.assert_allclose(scores, np.take_along_axis(exact, order, axis=1), atol=1e-5)
