"""Language-neutral dense scores: each language's mean taken out of passages and queries, so
a question finds the answer in another language before an off-topic text in its own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import (
    LANGUAGE_BIASED_DIM as DIM,
    LanguageBiasedEncoder,
    WordEncoder,
    assert_database_matches_vector_file,
)

from engine.config import data_paths, save_settings
from engine.errors import InputError
from engine.index.language_means import (
    GLOBAL,
    GLOBAL_LANGUAGES,
    SENTENCES_PER_LANGUAGE,
    LanguageMeans,
    mean_key,
    reference_languages,
    reference_sentences,
)
from engine.index.live_index import LiveIndex, vector_space
from engine.indexer import IndexerConfig
from engine.index.vector_file import read_trailer
from engine.langid import detect_language
from engine.library import Library
from engine.query import DETECTABLE_LANGUAGES

PLAIN = IndexerConfig(language_neutral=False)
DOCS = {
    "sauerteig.de.txt": "Den Sauerteig füttern: Einmal am Tag nimmt man einen Teil ab und gibt frisches Mehl "
                        "und Wasser dazu. So bleibt der Sauerteig aktiv und gesund.",
    "velo.fr.txt": "Après la pluie, il faut essuyer la chaîne du vélo puis déposer une goutte d'huile "
                   "sur chaque maillon. Une chaîne propre dure plus longtemps.",
    "banque.fr.txt": "Pour ouvrir un compte à la banque, il faut une pièce d'identité et un justificatif "
                     "de domicile récent.",
    "konto.de.txt": "Ein Konto bei der Bank eröffnet man mit dem Ausweis und einer Meldebescheinigung.",
}
FRENCH_QUESTION = "Comment nourrir un levain ?"


def write_docs(folder: Path, docs: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in docs.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def indexed(home: Path, folder: Path, encoder, config: IndexerConfig = IndexerConfig(),
            db_url: str | None = None) -> Library:
    library = Library.open(data_paths(home), encoder=encoder, config=config, db_url=db_url)
    *_, finished = library.index_paths([folder])
    assert not finished.summary.skipped
    return library


def names(results) -> list[str]:
    return [Path(h.path).name for h in results.hits]


# ---- the means --------------------------------------------------------------------------


def test_neutral_takes_each_languages_mean_out_and_renormalises():
    rng = np.random.default_rng(0)
    german, overall = rng.normal(size=4).astype(np.float32), rng.normal(size=4).astype(np.float32)
    means = LanguageMeans(4, {"passage": {"de": german, GLOBAL: overall}})
    vectors = rng.normal(size=(3, 4)).astype(np.float32)
    got = means.neutral(vectors, ["de", None, "xx-unknown"], "passage")
    expected = np.stack([vectors[0] - german, vectors[1] - overall, vectors[2] - overall])
    np.testing.assert_allclose(got, expected / np.linalg.norm(expected, axis=1, keepdims=True), atol=1e-6)
    with pytest.raises(InputError, match="no query mean"):
        means.neutral(vectors[:1], ["de"], "query")  # the query side is measured apart
    with pytest.raises(InputError):
        means.neutral(vectors, ["de"], "passage")


def test_each_mean_is_measured_once_from_the_shipped_sentences():
    encoder = WordEncoder(dim=DIM)
    means = LanguageMeans(DIM)
    assert means.ensure(encoder, ["de", "de", None, "zz"], "passage")  # zz: no sentences, the global mean
    global_sentences = sum(min(20, len(reference_sentences()[lang])) for lang in GLOBAL_LANGUAGES)
    assert encoder.texts_encoded == SENTENCES_PER_LANGUAGE + global_sentences
    assert not means.ensure(encoder, ["de", "zz"], "passage")
    assert encoder.texts_encoded == SENTENCES_PER_LANGUAGE + global_sentences
    expected = encoder.encode(list(reference_sentences()["de"][:SENTENCES_PER_LANGUAGE])).mean(axis=0)
    np.testing.assert_allclose(means.offsets(["de"], "passage")[0], expected, atol=1e-6)


def test_every_language_the_detector_assigns_has_a_mean_to_use():
    assert len(reference_languages()) >= 100
    assert set(GLOBAL_LANGUAGES) <= reference_languages()
    covered = [lang for lang in DETECTABLE_LANGUAGES if mean_key(lang) == lang]
    assert len(covered) >= 90  # the others (and text of no language) use the global mean
    assert mean_key("grc") == GLOBAL and mean_key(None) == GLOBAL


def test_side_file_keeps_what_either_process_measured_and_refuses_other_models(tmp_path):
    encoder = WordEncoder(dim=DIM)
    path = tmp_path / "generation-1.means.npz"
    first, second = LanguageMeans(DIM), LanguageMeans(DIM)
    first.ensure(encoder, ["de"], "passage")
    first.save(path, "model-a")
    second.ensure(encoder, ["fr"], "query")  # another process, which never saw German
    second.save(path, "model-a")
    loaded = LanguageMeans.load(path, model="model-a", dim=DIM)
    assert loaded.has(["de"], "passage") and loaded.has(["fr"], "query")
    np.testing.assert_array_equal(loaded.offsets(["de"], "passage"), first.offsets(["de"], "passage"))
    assert not LanguageMeans.load(path, model="model-b", dim=DIM).has(["de"], "passage")
    assert not LanguageMeans.load(path, model="model-a", dim=DIM + 1).has(["de"], "passage")
    path.write_bytes(path.read_bytes()[:50])  # damaged: measured again, never trusted
    assert not LanguageMeans.load(path, model="model-a", dim=DIM).has(["de"], "passage")


# ---- search -----------------------------------------------------------------------------


def test_a_french_question_finds_the_german_answer_first_not_a_french_text(babelfind_home, tmp_path, db_url):
    folder = write_docs(tmp_path / "docs", DOCS)
    library = indexed(babelfind_home, folder, LanguageBiasedEncoder(), db_url=db_url)
    results = library.search_results(FRENCH_QUESTION, k=5)
    assert names(results)[0] == "sauerteig.de.txt"
    assert not results.hits[0].weak  # listed as a real match: the floor works on the corrected scores
    assert "velo.fr.txt" not in [name for name, hit in zip(names(results), results.hits) if not hit.weak]
    library.close()


def test_without_the_correction_the_question_stays_in_its_own_language(babelfind_home, tmp_path):
    """The test above can fail: plain cosines rank the off-topic French text first."""
    folder = write_docs(tmp_path / "docs", DOCS)
    library = indexed(babelfind_home, folder, LanguageBiasedEncoder(), PLAIN)
    assert names(library.search_results(FRENCH_QUESTION, k=5))[0].endswith(".fr.txt")
    library.close()


def test_a_query_language_with_no_passages_is_measured_when_it_is_asked(babelfind_home, tmp_path):
    folder = write_docs(tmp_path / "docs", DOCS)
    encoder = LanguageBiasedEncoder()
    library = indexed(babelfind_home, folder, encoder)
    assert detect_language("Cum pot deschide un cont la bancă?") == "ro"
    assert not library.live.means.has(["ro"], "query") and not library.live.means.has(["ro"], "passage")
    results = library.search_results("Cum pot deschide un cont la bancă?", k=5)  # no Romanian in the library
    assert names(results)[0] in {"banque.fr.txt", "konto.de.txt"}
    assert library.live.means.has(["ro"], "query")
    reopened = LanguageMeans.load(LiveIndex.means_file_for(data_paths(babelfind_home).indexes,
                                                           library.live.generation.id),
                                  model=encoder.name, dim=DIM)
    assert reopened.has(["ro"], "query")  # kept for the next start
    library.close()


def test_a_passage_of_no_language_uses_the_global_mean(babelfind_home, tmp_path):
    folder = write_docs(tmp_path / "docs", {**DOCS, "numbers.txt": "FA-2024-5521 4711 0815 9000"})
    library = indexed(babelfind_home, folder, LanguageBiasedEncoder())
    hit = library.search_results("FA-2024-5521", k=3).hits[0]
    assert Path(hit.path).name == "numbers.txt" and hit.best.language is None
    stored_ids, stored = next(library.store.iter_vectors(library.live.generation.id, DIM))
    at = list(stored_ids).index(hit.best.passage_id)
    _, held = library.live.vectors([hit.best.passage_id])
    np.testing.assert_allclose(held[0], library.live.means.neutral(stored[at : at + 1], [None], "passage")[0],
                               atol=1e-6)
    library.close()


# ---- kept whole across restarts, kills and model switches ---------------------------------


def test_an_index_of_an_earlier_version_is_rebuilt_language_neutral(babelfind_home, tmp_path):
    folder = write_docs(tmp_path / "docs", DOCS)
    indexed(babelfind_home, folder, LanguageBiasedEncoder(), PLAIN).close()  # as earlier versions did
    faiss_file = LiveIndex.file_for(data_paths(babelfind_home).indexes, 1)
    assert read_trailer(faiss_file)["space"] == "plain"
    library = Library.open(data_paths(babelfind_home), encoder=LanguageBiasedEncoder())
    assert not library.live.complete  # no means yet: the rebuild waits for the model
    assert names(library.search_results(FRENCH_QUESTION, k=5))[0] == "sauerteig.de.txt"
    assert library.live.complete and read_trailer(faiss_file)["space"] == vector_space(library.live.means)
    library.close()
    assert assert_database_matches_vector_file(babelfind_home) == len(DOCS)


def test_lost_means_are_measured_again_and_a_stale_index_waits_for_them(babelfind_home, tmp_path):
    folder = write_docs(tmp_path / "docs", DOCS)
    indexed(babelfind_home, folder, LanguageBiasedEncoder()).close()
    indexes = data_paths(babelfind_home).indexes
    LiveIndex.means_file_for(indexes, 1).unlink()  # killed before the side file was written
    LiveIndex.file_for(indexes, 1).unlink()  # and the FAISS file lost too
    encoder = LanguageBiasedEncoder()
    library = Library.open(data_paths(babelfind_home), encoder=encoder)
    assert encoder.texts_encoded == 0 and not library.live.complete  # nothing measured at open
    assert names(library.search_results(FRENCH_QUESTION, k=5))[0] == "sauerteig.de.txt"
    assert encoder.texts_encoded > 0 and library.live.complete
    library.close()


def test_a_model_switch_measures_the_new_models_means(babelfind_home, tmp_path, monkeypatch):
    import engine.library as library_module

    monkeypatch.setattr(library_module, "_set_registry_active", lambda name, paths: None)  # no registry here
    folder = write_docs(tmp_path / "docs", DOCS)
    library = indexed(babelfind_home, folder, LanguageBiasedEncoder())
    other = WordEncoder(name="other-model", dim=32)
    *_, finished = library.switch_model("other-model", encoder=other)
    generation = library.live.generation
    assert generation.model_name == "other-model" and library.live.complete
    means = LanguageMeans.load(LiveIndex.means_file_for(data_paths(babelfind_home).indexes, generation.id),
                               model="other-model", dim=32)
    assert means.has(["de", "fr"], "passage")
    assert names(library.search_results("Sauerteig füttern Mehl", k=2, encoder=other))[0] == "sauerteig.de.txt"
    library.close()


# ---- the real default model ----------------------------------------------------------------


REAL_DOCS = {
    "sauerteig_de.txt": "Einen Sauerteig gesund erhalten. Ein Sauerteig ist eine Kultur aus wilden Hefen und "
                        "Milchsäurebakterien in einer Mischung aus Mehl und Wasser. Damit er aktiv bleibt, muss "
                        "man ihn regelmäßig füttern: einen Teil des alten Teigs wegnehmen und frisches Mehl und "
                        "lauwarmes Wasser dazugeben. Bei Raumtemperatur braucht er jeden Tag neues Futter, im "
                        "Kühlschrank reicht einmal pro Woche.",
    "dog_diet_en.txt": "Feeding an older dog. As dogs grow older they need fewer calories but more protein of "
                       "good quality. Most senior dogs do well on two smaller meals a day instead of one large "
                       "one. Fresh water should always be available, and treats should make up no more than a "
                       "tenth of the daily food.",
    "chaine_velo_fr.txt": "Entretenir la chaîne de son vélo. Une chaîne propre et bien graissée rend le pédalage "
                          "plus doux. Après une sortie sous la pluie, il faut l'essuyer avec un chiffon, puis "
                          "déposer une goutte d'huile sur chaque maillon.",
    "cake_en.txt": "A simple sponge cake. Beat four eggs with sugar until pale, fold in flour and a pinch of "
                   "salt, and bake for twenty-five minutes in a moderate oven. Let the cake cool before you "
                   "cut it.",
}


@pytest.mark.slow
def test_the_default_model_answers_an_english_question_with_the_german_article(
        tmp_path, babelfind_home, installed_models):
    from trainer.serving.default_models import DEFAULT_MODEL

    (babelfind_home / "models").symlink_to(installed_models, target_is_directory=True)
    save_settings(data_paths(babelfind_home), active_model=DEFAULT_MODEL, device="cpu")
    folder = write_docs(tmp_path / "docs", REAL_DOCS)
    question = "how often should I feed a sourdough starter"
    for config, first in ((IndexerConfig(), "sauerteig_de.txt"), (PLAIN, "dog_diet_en.txt")):
        library = Library.open(data_paths(babelfind_home), config=config)
        *_, finished = library.index_paths([folder])
        results = library.search_results(question, k=4)
        assert names(results)[0] == first, config  # plain: the English text about feeding a dog
        library.close()
