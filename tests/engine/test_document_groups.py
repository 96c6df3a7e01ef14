"""Matching passages grouped by document in arrays agree with grouping them one by one."""

from __future__ import annotations

from collections import Counter

import numpy as np

from engine.document_groups import DocumentGroups
from engine.store.catalog import PassageCatalog


def random_catalog(rng: np.random.Generator, passages: int = 400, documents: int = 60) -> PassageCatalog:
    languages = ("en", None, "de", "ja")
    return PassageCatalog(
        stamp=((1, 1),),
        passage_ids=np.sort(rng.choice(10 * passages, passages, replace=False)).astype(np.int64),
        passage_document=rng.integers(0, documents, passages).astype(np.int64),
        passage_language=rng.integers(0, len(languages), passages).astype(np.int32),
        languages=languages,
        document_ids=np.arange(documents, dtype=np.int64) * 3,
        document_paths=tuple(f"/docs/{i}.txt" for i in range(documents)),
        document_languages=("en",) * documents,
        document_file_type=np.zeros(documents, np.int32),
        file_types=("txt",),
    )


def grouped_one_by_one(catalog: PassageCatalog, ids: np.ndarray) -> dict[str, list[int]]:
    """path -> positions, best document first: what search did with a dict of paths."""
    by_path: dict[str, list[int]] = {}
    for position, pid in enumerate(ids.tolist()):
        at = np.searchsorted(catalog.passage_ids, pid)
        if at < len(catalog.passage_ids) and catalog.passage_ids[at] == pid:
            by_path.setdefault(catalog.document_paths[catalog.passage_document[at]], []).append(position)
    return by_path


def language_of(catalog: PassageCatalog, pid: int) -> str:
    return catalog.languages[catalog.passage_language[np.searchsorted(catalog.passage_ids, pid)]] or ""


def test_groups_firsts_positions_and_language_counts_agree_with_a_dict_of_paths():
    rng = np.random.default_rng(5)
    for _ in range(20):
        catalog = random_catalog(rng)
        # matches in score order, some of them removed since the search began
        ids = rng.permutation(np.concatenate([rng.choice(catalog.passage_ids, 150, replace=False),
                                              np.array([1, 7, 10**6], np.int64)]))
        groups = DocumentGroups.of(catalog, ids)
        expected = grouped_one_by_one(catalog, ids)

        firsts = groups.firsts()
        assert [groups.path(f) for f in firsts] == list(expected)
        assert [groups.positions(f, 3).tolist() for f in firsts] == [p[:3] for p in expected.values()]

        counted = firsts[::2]
        expected_counts = Counter(lang for path in [groups.path(f) for f in counted]
                                  for lang in {language_of(catalog, ids[i]) for i in expected[path]})
        assert groups.language_counts(counted) == dict(expected_counts)

        among = groups.language == "de"
        in_german = {path: [i for i in positions if language_of(catalog, ids[i]) == "de"]
                     for path, positions in expected.items()}
        in_german = dict(sorted(((p, ps) for p, ps in in_german.items() if ps), key=lambda item: item[1][0]))
        german_firsts = groups.firsts(among)
        assert [groups.path(f) for f in german_firsts] == list(in_german)
        assert [groups.positions(f, 3, among).tolist() for f in german_firsts] == [p[:3] for p in in_german.values()]


def test_an_empty_catalog_groups_nothing():
    catalog = random_catalog(np.random.default_rng(1), passages=0, documents=0)
    groups = DocumentGroups.of(catalog, np.array([4, 9], np.int64))
    assert len(groups.firsts()) == 0 and groups.language.tolist() == ["", ""]
    assert groups.language_counts(groups.firsts()) == {}
