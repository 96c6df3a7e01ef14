"""`search_results(explain=True)`: the parts of each shown passage's score add up to it."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest
from helpers import LanguageBiasedEncoder

from app.cli import library_commands
from engine.config import data_paths
from engine.library import Library

DOCS = {
    "sauerteig.de.txt": "Den Sauerteig füttern: Einmal am Tag gibt man frisches Mehl und Wasser dazu.",
    "velo.fr.txt": "Après la pluie, il faut essuyer la chaîne du vélo puis mettre de l'huile.",
    "invoice.en.txt": "Invoice FA-2024-5521: the bank account for the transfer is given below.",
}


@pytest.fixture
def library(babelfind_home, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    library = Library.open(data_paths(babelfind_home), encoder=LanguageBiasedEncoder())
    *_, finished = library.index_paths([folder])
    assert not finished.summary.skipped
    yield library
    library.close()


def stored_vector(library: Library, passage_id: int) -> np.ndarray:
    ids, vectors = next(library.store.iter_vectors(library.live.generation.id, library.live.generation.dim))
    return vectors[list(ids).index(passage_id)]


@pytest.mark.parametrize("query", ["Comment nourrir un levain ?", "FA-2024-5521 bank"])
def test_the_parts_add_up_to_the_fused_score(library, query):
    results = library.search_results(query, k=3, explain=True)
    raw_query = library.encoder.encode([query], kind="query")[0]
    assert results.hits
    for hit in results.hits:
        for passage in hit.passages:
            parts = passage.explanation
            assert parts.score == pytest.approx(parts.meaning + parts.keywords, abs=1e-4)
            weight = library.live.context_config.weight
            mixed = (1 - weight) * parts.cosine + weight * parts.document
            assert mixed - parts.hubness == pytest.approx(passage.cosine, abs=1e-5)
            assert parts.plain_cosine == pytest.approx(float(stored_vector(library, passage.passage_id) @ raw_query),
                                                       abs=1e-5)
            assert parts.keyword_share == passage.keyword_score


def test_the_language_mean_is_what_moves_the_cosine(library):
    """Plain cosines favour the French text for a French question; the explanation shows it."""
    results = library.search_results("Comment nourrir un levain ?", k=3, mode="dense", explain=True)
    assert results.hits[0].path.endswith("sauerteig.de.txt")
    german = results.hits[0].best.explanation
    raw = library.encoder.encode(["Comment nourrir un levain ?"], kind="query")[0]
    velo = next(p for p in library.store.passages(list(range(1, 20))).values() if p.path.endswith("velo.fr.txt"))
    assert float(stored_vector(library, velo.passage_id) @ raw) > german.plain_cosine  # plain: French first


def test_without_explain_nothing_is_computed(library):
    assert all(p.explanation is None for h in library.search_results("levain", k=3).hits for p in h.passages)


def test_the_cli_prints_why_and_puts_it_in_the_json(library, capsys, monkeypatch, babelfind_home):
    monkeypatch.setattr(library_commands, "open_library",
                        lambda args: Library.open(data_paths(babelfind_home), encoder=LanguageBiasedEncoder()))
    monkeypatch.setattr(library_commands, "library_exists", lambda args: True)
    args = argparse.Namespace(query="Comment nourrir un levain ?", k=3, lang=None, path=None, file_types=None,
                              mode="fused", json=False, db=None, explain=True)
    assert library_commands.run_search(args) == 0
    lines = capsys.readouterr().out.splitlines()
    why = [line for line in lines if line.strip().startswith("why: cosine")]
    assert why and "(plain " in why[0] and "document " in why[0] and "keywords" in why[0] and "score" in why[0]
    args.json = True
    assert library_commands.run_search(args) == 0
    first = json.loads(capsys.readouterr().out)[0]["passages"][0]["explanation"]
    assert {"plain_cosine", "cosine", "document", "hubness", "z", "meaning", "keyword_share", "keywords", "score"} <= set(first)
