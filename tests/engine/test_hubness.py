"""Hubness penalties: the fast paths against a plain reference, incremental changes against
a fresh computation, the side file's checks, and the live index keeping it consistent."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import WordEncoder

from engine.config import data_paths
from engine.errors import InputError
from engine.events import IndexFinished
from engine.index.hubness import (
    HubnessConfig,
    HubnessPenalties,
    passage_penalties,
    reference_entries,
    reference_texts,
)
from engine.index.live_index import LiveIndex
from engine.langid import detect_language
from engine.indexer import IndexerConfig
from engine.library import Library

DIM = 16
LANGUAGES = ["en"] * 6 + ["de"] * 6 + ["zh"] * 6


def unit(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def slow_penalties(vectors, reference, languages, k):
    """One passage, one language at a time: mean of the k largest cosines."""
    out = []
    for v in vectors:
        row = []
        for language in dict.fromkeys(languages):
            sims = sorted((float(v @ r) for r, lang in zip(reference, languages) if lang == language), reverse=True)
            row.append(np.mean(sims[:k]))
        out.append(row)
    return np.array(out, np.float32)


@pytest.fixture
def reference():
    return unit(np.random.default_rng(0), len(LANGUAGES))


@pytest.mark.parametrize("k", [1, 3, 6, 50])
def test_penalties_match_the_slow_reference(reference, k):
    vectors = unit(np.random.default_rng(k), 40)
    groups = [np.flatnonzero(np.asarray(LANGUAGES) == lang) for lang in ("en", "de", "zh")]
    fast = passage_penalties(vectors, reference, groups, k)
    assert fast.shape == (40, 3)
    np.testing.assert_allclose(fast, slow_penalties(vectors, reference, LANGUAGES, k), atol=1e-5)


def test_a_hub_loses_to_a_less_central_passage_of_nearly_equal_cosine(reference):
    penalties = HubnessPenalties(reference, LANGUAGES, HubnessConfig(k=3, beta=1.0))
    hub = reference.mean(axis=0)
    hub /= np.linalg.norm(hub)  # close to every reference query
    loner = unit(np.random.default_rng(5), 1)[0]
    penalties.add(np.array([10, 11]), np.stack([hub, loner]))
    gap = float(np.diff(penalties.lookup(np.array([11, 10])) @ penalties.column_weights("en"))[0])
    assert gap > 0.05  # the hub is measurably closer to the reference queries
    scores = np.array([[0.80, 0.80 - gap / 2, -np.inf]], np.float32)
    ids = np.array([[10, 11, -1]], np.int64)
    corrected, order = penalties.correct(scores, ids, "en")
    assert order[0].tolist() == [11, 10, -1]  # padding stays last
    assert np.isneginf(corrected[0, 2]) and corrected[0, 0] >= corrected[0, 1]
    same_scores, same_ids = HubnessPenalties(reference, LANGUAGES, HubnessConfig(beta=0.0)).correct(scores, ids)
    assert same_ids is ids and same_scores is scores  # beta 0 is plain cosine


def test_query_language_picks_its_column_and_unknown_averages(reference):
    penalties = HubnessPenalties(reference, LANGUAGES)
    assert penalties.languages == ["en", "de", "zh"]
    assert penalties.column_weights("de").tolist() == [0.0, 1.0, 0.0]
    np.testing.assert_allclose(penalties.column_weights(None), [1 / 3] * 3)
    np.testing.assert_allclose(penalties.column_weights("xx"), [1 / 3] * 3)


def test_incremental_changes_equal_a_fresh_computation(reference):
    rng = np.random.default_rng(7)
    config = HubnessConfig(k=4, beta=0.5)
    penalties = HubnessPenalties(reference, LANGUAGES, config)
    alive: dict[int, np.ndarray] = {}
    next_id = 0
    for step in range(30):  # batches big enough to fold several times (past 4096 entries)
        ids = np.arange(next_id, next_id + 400)
        vectors = unit(rng, len(ids))
        penalties.add(ids, vectors)
        alive.update(zip(ids.tolist(), vectors))
        next_id += len(ids)
        gone = rng.choice(sorted(alive), size=150, replace=False)
        penalties.remove(gone)
        for i in gone.tolist():
            del alive[i]
        if step % 7 == 0:  # a re-encoded passage keeps its id and gets its new penalty
            changed = rng.choice(sorted(alive), size=20, replace=False)
            new = unit(rng, 20)
            penalties.add(changed, new)
            alive.update(zip(changed.tolist(), new))
    ids = np.array(sorted(alive), np.int64)
    assert penalties.ids().tolist() == ids.tolist() and len(penalties) == len(ids)
    fresh = HubnessPenalties(reference, LANGUAGES, config)
    fresh.add(ids, np.stack([alive[i] for i in ids.tolist()]))
    np.testing.assert_allclose(penalties.lookup(ids), fresh.lookup(ids), atol=1e-6)
    assert np.isnan(penalties.lookup(np.array([gone[0]]))).all()


def test_side_file_round_trip_and_its_checks(reference, tmp_path):
    config = HubnessConfig(k=3)
    penalties = HubnessPenalties(reference, LANGUAGES, config)
    penalties.add(np.array([3, 1, 2]), unit(np.random.default_rng(1), 3))
    path = tmp_path / "generation-1.hubness.npz"
    penalties.save(path, generation=5, space="plain")
    loaded, kept = HubnessPenalties.load(path, expected_generation=5, dim=DIM, space="plain", config=config)
    np.testing.assert_array_equal(loaded.lookup(np.array([1, 2, 3])), penalties.lookup(np.array([1, 2, 3])))
    np.testing.assert_array_equal(kept[0], reference)
    # stale (the database moved on) or measured with another k: rebuild, but keep the reference
    for generation, other in ((6, config), (5, HubnessConfig(k=4))):
        stale, kept = HubnessPenalties.load(path, expected_generation=generation, dim=DIM, space="plain",
                                            config=other)
        assert stale is None and kept is not None and kept[1] == LANGUAGES
    # another dim, vectors of another space, a damaged or a missing file: nothing is trusted
    assert HubnessPenalties.load(path, expected_generation=5, dim=DIM + 1, space="plain",
                                 config=config) == (None, None)
    assert HubnessPenalties.load(path, expected_generation=5, dim=DIM, space="language-neutral-x",
                                 config=config) == (None, None)
    path.write_bytes(path.read_bytes()[:100])
    assert HubnessPenalties.load(path, expected_generation=5, dim=DIM, space="plain", config=config) == (None, None)
    assert HubnessPenalties.load(tmp_path / "absent.npz", expected_generation=5, dim=DIM,
                                 space="plain") == (None, None)


def test_bad_configs_and_inputs_raise_input_error(reference):
    with pytest.raises(InputError):
        HubnessConfig(k=0)
    with pytest.raises(InputError):
        HubnessConfig(beta=-0.1)
    with pytest.raises(InputError):
        HubnessPenalties(reference, LANGUAGES[:-1])
    penalties = HubnessPenalties(reference, LANGUAGES)
    with pytest.raises(InputError):
        penalties.add(np.array([1, 2]), unit(np.random.default_rng(0), 3))
    with pytest.raises(InputError):
        penalties.add(np.array([1]), unit(np.random.default_rng(0), 1, DIM + 1))


def test_reference_file_is_balanced_across_languages():
    entries = reference_entries()
    counts = {lang: sum(1 for language, _ in entries if language == lang) for lang, _ in entries}
    assert len(counts) >= 12 and set(counts.values()) == {40}
    assert len(reference_texts()) == len(entries) and all(t.strip() for t in reference_texts())


# ---- kept in step by the live index -----------------------------------------------------

# The penalties on the encoder's own vectors, so the arithmetic below is plain cosines;
# tests/engine/test_language_means.py checks them in the language-neutral space.
PLAIN = IndexerConfig(language_neutral=False)


def index_folder(library: Library, folder: Path, docs: dict[str, str]) -> None:
    for name, text in docs.items():
        (folder / name).write_text(text, encoding="utf-8")
    *_, finished = library.index_paths([folder])
    assert isinstance(finished, IndexFinished)


@pytest.fixture
def home(babelfind_home, tmp_path):
    """(paths, hashed-words encoder, an empty documents folder) of a fresh library home."""
    folder = tmp_path / "docs"
    folder.mkdir()
    return data_paths(babelfind_home), WordEncoder(), folder


def assert_penalties_match_store(library: Library) -> None:
    live, generation = library.live, library.live.generation
    parts = list(library.store.iter_vectors(generation.id, generation.dim))
    ids = np.concatenate([p[0] for p in parts])
    vectors = live.searchable(ids, np.concatenate([p[1] for p in parts]))  # as search compares them
    assert live.hubness.ids().tolist() == sorted(ids.tolist())
    fresh = HubnessPenalties(live.hubness.reference, live.hubness.reference_languages, live.hubness.config)
    fresh.add(ids, vectors)
    np.testing.assert_allclose(live.hubness.lookup(ids), fresh.lookup(ids), atol=1e-6)


def test_live_index_keeps_penalties_in_step_and_rebuilds_a_stale_file(home):
    paths, encoder, folder = home
    library = Library.open(paths, encoder=encoder, config=PLAIN)
    index_folder(library, folder, {"a.txt": "Bees make honey from nectar.", "b.txt": "Trains cross the steppe."})
    assert_penalties_match_store(library)
    hub_file = LiveIndex.hubness_file_for(paths.indexes, library.live.generation.id)
    old_file = hub_file.read_bytes()
    (folder / "a.txt").unlink()  # removed and added passages both reach the penalties
    index_folder(library, folder, {"c.txt": "Glaciers in the Alps are shrinking fast."})
    assert_penalties_match_store(library)
    library.close()
    hub_file.write_bytes(old_file)  # a file from before the last change: stale
    encoder.texts_encoded = 0
    reopened = Library.open(paths, encoder=encoder, config=PLAIN)
    assert reopened.live.hubness is None  # stale: not trusted, and not measured at open
    assert Path(reopened.search("glaciers Alps")[0].path).name == "c.txt"
    assert encoder.texts_encoded == 1  # the query: rebuilt from stored vectors and the kept reference
    assert_penalties_match_store(reopened)
    reopened.close()


def test_a_missing_side_file_is_measured_again(home):
    paths, encoder, folder = home
    library = Library.open(paths, encoder=encoder, config=PLAIN)
    index_folder(library, folder, {"a.txt": "Bees make honey from nectar."})
    generation = library.live.generation.id
    library.close()
    LiveIndex.hubness_file_for(paths.indexes, generation).unlink()
    encoder.texts_encoded = 0
    reopened = Library.open(paths, encoder=encoder, config=PLAIN)
    assert encoder.texts_encoded == 0  # nothing at open: the first search measures them
    reopened.search("honey bees")
    assert encoder.texts_encoded == 1 + len(reference_texts())  # the query, then the reference again
    assert_penalties_match_store(reopened)
    reopened.close()


def test_dense_scores_are_cosines_minus_the_offsets_of_the_query_language(home):
    paths, encoder, folder = home
    library = Library.open(paths, encoder=encoder, config=PLAIN)
    index_folder(library, folder, {"a.txt": "Bees make honey from nectar.", "b.txt": "Bees sting when they are afraid."})
    query = encoder.encode(["bees honey"], kind="query")[0]
    language = detect_language("bees honey")  # what Library.search takes as the query's language
    for hit in library.search("bees honey", k=2, mode="dense"):
        passage = hit.best
        cosine = float(encoder.encode([passage.text])[0] @ query)
        offset = float(library.live.hubness.offsets(np.array([passage.passage_id]), language)[0])
        assert offset != 0.0
        assert hit.score == pytest.approx(cosine - offset, abs=1e-5)
    library.live.hubness_config, library.live.hubness = None, None  # off: the same search scores cosines
    plain = library.search("bees honey", k=2, mode="dense")
    assert plain[0].score == pytest.approx(float(encoder.encode([plain[0].best.text])[0] @ query), abs=1e-5)
    library.close()
