"""Document context: a passage's score mixes in its document's centroid, kept in a side file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import LanguageBiasedEncoder, WordEncoder

from engine.config import data_paths
from engine.errors import InputError
from engine.events import IndexFinished
from engine.index.document_context import DocumentContext, DocumentContextConfig
from engine.index import fusion
from engine.index.live_index import FixedScorer, LiveIndex, vector_space
from engine.library import Library

DIM = 16


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    vectors = rng.normal(size=(n, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


# ---- the arithmetic ------------------------------------------------------------------------


def test_similarity_is_the_cosine_to_the_documents_normalised_sum():
    rng = np.random.default_rng(1)
    vectors, query = unit(rng, 5), unit(rng, 1)[0]
    context = DocumentContext(DIM)
    context.add(np.array([10, 11, 12, 20, 21]), np.array([1, 1, 1, 2, 2]), vectors)
    centroid = vectors[:3].sum(0) / np.linalg.norm(vectors[:3].sum(0))
    cosines = vectors @ query
    similarity = context.similarity(np.array([11, 20, 99]), query, np.array([cosines[1], cosines[3], 0.25]))
    assert similarity[0] == pytest.approx(float(centroid @ query), abs=1e-6)
    other = vectors[3:].sum(0) / np.linalg.norm(vectors[3:].sum(0))
    assert similarity[1] == pytest.approx(float(other @ query), abs=1e-6)
    assert similarity[2] == pytest.approx(0.25)  # not held (a search racing an add): its own cosine
    scores = context.scores(np.array([11]), query, cosines[1:2])
    assert scores[0] == pytest.approx(0.8 * cosines[1] + 0.2 * float(centroid @ query), abs=1e-6)


def test_a_one_passage_document_scores_its_cosine():
    rng = np.random.default_rng(2)
    vector, query = unit(rng, 1), unit(rng, 1)[0]
    context = DocumentContext(DIM)
    context.add(np.array([7]), np.array([3]), vector)
    cosine = vector @ query
    assert context.scores(np.array([7]), query, cosine)[0] == pytest.approx(float(cosine[0]), abs=1e-6)


def test_incremental_changes_equal_a_fresh_computation():
    rng = np.random.default_rng(3)
    vectors, query = unit(rng, 6000), unit(rng, 1)[0]  # more than one fold of recent changes
    ids, documents = np.arange(6000), np.arange(6000) // 7
    live = DocumentContext(DIM)
    live.add(ids[:4000], documents[:4000], vectors[:4000])
    live.remove(ids[documents < 100])  # whole documents leave, as the store deletes them
    live.add(ids[4000:], documents[4000:], vectors[4000:])
    live.add(ids[4000:4010], documents[4000:4010], vectors[4000:4010])  # a replayed batch counts once
    kept = documents >= 100
    fresh = DocumentContext(DIM)
    fresh.add(ids[kept], documents[kept], vectors[kept])
    assert len(live) == len(fresh) == int(kept.sum())
    cosines = vectors @ query
    np.testing.assert_allclose(live.similarity(ids, query, cosines), fresh.similarity(ids, query, cosines),
                               atol=1e-5)
    assert (live.documents_of(ids[~kept]) == -1).all()


def test_side_file_round_trip_and_its_checks(tmp_path, caplog):
    rng = np.random.default_rng(4)
    vectors, query = unit(rng, 30), unit(rng, 1)[0]
    context = DocumentContext(DIM)
    context.add(np.arange(30), np.arange(30) // 4, vectors)
    path = tmp_path / "generation-1.documents.npz"
    context.save(path, generation=5, space="plain")
    loaded = DocumentContext.load(path, expected_generation=5, dim=DIM, space="plain")
    cosines = vectors @ query
    np.testing.assert_allclose(loaded.similarity(np.arange(30), query, cosines),
                               context.similarity(np.arange(30), query, cosines), atol=1e-6)
    assert DocumentContext.load(path, expected_generation=6, dim=DIM, space="plain") is None  # stale
    assert DocumentContext.load(path, expected_generation=5, dim=DIM, space="neutral") is None  # other space
    assert DocumentContext.load(tmp_path / "missing.npz", expected_generation=5, dim=DIM, space="plain") is None
    path.write_bytes(path.read_bytes()[:100])  # damaged: measured again, said in the log
    assert DocumentContext.load(path, expected_generation=5, dim=DIM, space="plain") is None
    assert "damaged" in caplog.text


def test_bad_configs_and_inputs_raise_input_error():
    for weight in (-0.1, 1.0, "0.2", True):
        with pytest.raises(InputError):
            DocumentContextConfig(weight=weight)
    context = DocumentContext(DIM)
    with pytest.raises(InputError):
        context.add(np.arange(3), np.arange(2), np.zeros((3, DIM), np.float32))
    with pytest.raises(InputError):
        context.add(np.arange(3), np.arange(3), np.zeros((3, DIM + 1), np.float32))


# ---- kept in step by the live index -----------------------------------------------------


def index_folder(library: Library, folder: Path, docs: dict[str, str]) -> None:
    for name, text in docs.items():
        (folder / name).write_text(text, encoding="utf-8")
    *_, finished = library.index_paths([folder])
    assert isinstance(finished, IndexFinished)


def assert_context_matches_store(library: Library) -> None:
    """The live context equals one summed afresh from the stored vectors and their documents."""
    live, generation = library.live, library.live.generation
    parts = list(library.store.iter_vectors(generation.id, generation.dim))
    ids = np.concatenate([p[0] for p in parts])
    vectors = live.searchable(ids, np.concatenate([p[1] for p in parts]))
    documents = [library.store.passages([int(i)])[int(i)].path for i in ids]
    numbered = np.unique(documents, return_inverse=True)[1]
    fresh = DocumentContext(generation.dim)
    fresh.add(ids, numbered, vectors)
    query = vectors[0]
    assert len(live.context) == len(ids)
    np.testing.assert_allclose(live.context.similarity(ids, query, vectors @ query),
                               fresh.similarity(ids, query, vectors @ query), atol=1e-5)


TWO_PASSAGES = "Bees make honey from nectar. " * 30 + "\n\n" + "The hive keeps the honey for winter. " * 30


def test_live_index_keeps_the_context_in_step_and_rebuilds_a_stale_file(babelfind_home, tmp_path, db_url):
    folder = tmp_path / "docs"
    folder.mkdir()
    paths, encoder = data_paths(babelfind_home), WordEncoder()
    library = Library.open(paths, encoder=encoder, db_url=db_url)
    index_folder(library, folder, {"bees.txt": TWO_PASSAGES, "b.txt": "Trains cross the steppe."})
    assert len(library.live.context) > 2  # the bees document has several passages
    assert_context_matches_store(library)
    side_file = LiveIndex.context_file_for(paths.indexes, library.live.generation.id)
    old_file = side_file.read_bytes()
    (folder / "bees.txt").unlink()  # removed and added passages both reach the context
    index_folder(library, folder, {"c.txt": "Glaciers in the Alps are shrinking fast. " * 40})
    assert_context_matches_store(library)
    library.close()
    side_file.write_bytes(old_file)  # a file from before the last change (a kill before the save): stale
    reopened = Library.open(paths, encoder=encoder, db_url=db_url)
    assert reopened.live.context is None  # not trusted, and not rebuilt at open
    assert Path(reopened.search("glaciers Alps")[0].path).name == "c.txt"
    assert_context_matches_store(reopened)  # rebuilt from the stored vectors by the first search
    saved = DocumentContext.load(side_file, expected_generation=reopened.live.version,
                                 dim=reopened.live.generation.dim, space=vector_space(reopened.live.means))
    assert saved is not None and len(saved) == len(reopened.live.context)
    reopened.close()


def test_the_z_baselines_sample_is_scored_as_dense_scores_scores_it_and_follows_changes(
        babelfind_home, tmp_path, db_url):
    folder = tmp_path / "docs"
    folder.mkdir()
    paths, encoder = data_paths(babelfind_home), WordEncoder()
    library = Library.open(paths, encoder=encoder, db_url=db_url)
    index_folder(library, folder, {"bees.txt": TWO_PASSAGES, "b.txt": "Trains cross the steppe. " * 40})
    library.search("honey for winter")  # measures the corrections: context and hubness penalties
    live = library.live
    assert live.context is not None and live.hubness is not None

    def assert_scored_as_dense_scores() -> FixedScorer:
        ids, vectors = fusion._sample(live)
        scorer = fusion._sample_scorer(live)
        query = live.query_vector(encoder.encode(["the hive keeps honey"], kind="query")[0], "en")
        for language in ("en", "de", None):
            np.testing.assert_allclose(scorer.scores(query, language),
                                       live.dense_scores(ids, vectors @ query, query, language), atol=1e-6)
        return scorer

    first = assert_scored_as_dense_scores()
    assert fusion._sample_scorer(live) is first  # kept while nothing changed
    index_folder(library, folder, {"c.txt": "Glaciers in the Alps are shrinking fast. " * 40})
    assert assert_scored_as_dense_scores() is not first  # made again at the new version
    live.context = None  # a correction turned off: the scorer follows
    assert_scored_as_dense_scores()
    library.close()


# ---- what it changes in a ranking ---------------------------------------------------------

# Filler without concept words, so that each paragraph is a passage of its own.
DE_FILL = ("und dann ist es am besten wenn man dabei ruhig bleibt und alles in der richtigen "
           "Reihenfolge macht wie es seit vielen Jahren in der Küche von Großmutter üblich war")
EN_FILL = ("and then it is best to stay calm and do everything in the right order as the workshop "
           "manual has said for many years to everyone who rides every day")


def paragraphs(*openings: str, fill: str) -> str:
    return "\n\n".join(f"{opening} {fill} {fill}." for opening in openings)


# A German document about feeding sourdough (each paragraph names two of the question's
# three concepts), and an English one about bicycles with one stray paragraph naming all
# three beside a bicycle: alone, that paragraph is the nearest to the question.
DOCS = {
    "sauerteig.de.txt": paragraphs("Den Sauerteig füttern", "Den Sauerteig mit Mehl", "Füttern mit Mehl",
                                   fill=DE_FILL),
    "bicycle.en.txt": paragraphs("The bicycle chain", "The chain oil", "The bicycle oil",
                                 "Feed the sourdough flour on the bicycle", fill=EN_FILL),
}
QUESTION = "How do I feed sourdough with flour?"


def names(results) -> list[str]:
    return [Path(hit.path).name for hit in results.hits]


def test_a_stray_paragraph_of_an_off_topic_document_loses_to_the_document_about_the_question(
        babelfind_home, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    library = Library.open(data_paths(babelfind_home), encoder=LanguageBiasedEncoder())
    index_folder(library, folder, DOCS)
    # dense: the stray paragraph holds the question's English words, which fused search
    # rightly rewards as keywords; this is about the meaning part alone
    results = library.search_results(QUESTION, k=5, mode="dense", explain=True)
    assert names(results)[0] == "sauerteig.de.txt" and not results.hits[0].weak
    parts = results.hits[0].best.explanation
    assert parts.document > parts.cosine  # the whole document is nearer the question than its best paragraph
    library.live.context_config, library.live.context = None, None  # off: passages alone
    assert names(library.search_results(QUESTION, k=5, mode="dense"))[0] == "bicycle.en.txt"
    library.close()
