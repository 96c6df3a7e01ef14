"""Mining a whole library: sentences grouped by language, each language against the pivot."""

from __future__ import annotations

import pytest
from helpers import WordEncoder
from mining_fakes import ENGLISH, GERMAN, TranslationEncoder

from engine.config import data_paths
from engine.errors import InputError
from engine.library import Library
from engine.mining.bitext import MiningProgress
from engine.mining.collection import CollectionMined, iter_mine_collection, sentences_by_language

FRENCH = ["Le chien dort dans le jardin.", "Demain il pleuvra à Berlin.",
          "J'aime boire du café noir.", "Le musée ouvre à neuf heures."]
ENGLISH_ONLY = [f"This English sentence number {i} talks about nothing in particular." for i in range(30)]


class FakeStore:
    """The one Store method the collection miner reads: (passage text, language) rows."""

    def __init__(self, rows):
        self.rows = rows

    def passage_texts(self, under=None):
        return self.rows


def rows(sentences, language, per_passage=2):
    return [(" ".join(sentences[i:i + per_passage]), language)
            for i in range(0, len(sentences), per_passage)]


def library_rows():
    filler_de = [f"Dieser deutsche Satz Nummer {i} handelt von gar nichts." for i in range(20)]
    filler_fr = [f"Cette phrase française numéro {i} ne parle de rien." for i in range(20)]
    return (rows(ENGLISH + ENGLISH_ONLY, "en") + rows(GERMAN + filler_de, "de")
            + rows(FRENCH + filler_fr, "fr") + rows(["Kurz.", "Ein Satz."], None))


def run(store, encoder, **kwargs):
    events = list(iter_mine_collection(store, encoder, **kwargs))
    *progress, last = events
    assert all(isinstance(e, MiningProgress) for e in progress)
    assert isinstance(last, CollectionMined)
    return progress, last


def test_every_language_is_mined_against_the_largest_one():
    encoder = TranslationEncoder()  # German and English sentence i share a meaning ...
    for french, english in zip(FRENCH, ENGLISH):  # ... and so does French sentence i
        encoder.meaning[french] = encoder.meaning[english]
    progress, mined = run(FakeStore(library_rows()), encoder)
    assert mined.pivot == "en"
    assert [(r.src_lang, r.tgt_lang) for r in mined.results] == [("de", "en"), ("fr", "en")]
    translations = set(zip(GERMAN, ENGLISH)) | set(zip(FRENCH, ENGLISH))
    ranked = [(src, tgt) for _, src, tgt in mined.rows()]
    assert set(ranked[:len(translations)]) == translations  # best first, above any filler
    assert {e.stage.split(":")[0] for e in progress} == {"de -> en", "fr -> en"}


def test_a_language_with_too_few_sentences_is_skipped_and_said_why():
    store = FakeStore(rows(ENGLISH + ENGLISH_ONLY, "en") + rows(GERMAN * 3, "de")
                      + rows(["Una frase en español que es larga."], "es"))
    _, mined = run(store, TranslationEncoder(), min_sentences=8)
    assert [r.src_lang for r in mined.results] == ["de"]
    assert mined.skipped == {"es": "1 sentences (needs 8)"}


def test_one_language_is_a_clear_error():
    with pytest.raises(InputError, match="at least two languages .* en 38"):
        list(iter_mine_collection(FakeStore(rows(ENGLISH + ENGLISH_ONLY, "en")), TranslationEncoder()))


def test_sentences_come_from_the_stored_passages_of_a_real_library(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "de.txt").write_text(" ".join(GERMAN), encoding="utf-8")
    (docs / "en.txt").write_text(" ".join(ENGLISH), encoding="utf-8")
    library = Library.open(data_paths(tmp_path / "home"), encoder=WordEncoder())
    try:
        list(library.index_paths([docs]))
        grouped = sentences_by_language(library.store, str(docs))
        assert sorted(grouped) == ["de", "en"]
        assert grouped["de"] == GERMAN and grouped["en"] == ENGLISH  # once each, in order
        assert sentences_by_language(library.store, str(tmp_path / "elsewhere")) == {}
    finally:
        library.close()
