"""Keyword candidates with the floor applied inside SQLite equal the former fetch-more loop.

The reference fetched the best 1000 by BM25, four times more while the last one still
cleared the floor (up to max_counted), and cut at the floor in numpy. Seeded Zipf text
over a collection large enough for the common-word cut, with and without a filter.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.index.keyword_index import KeywordIndex, KeywordQuery
from engine.query import parse_query
from engine.search import _keyword_candidates
from engine.search_config import SearchConfig
from engine.store import Store


def reference(keywords: KeywordIndex, words, allowed, config: SearchConfig, first: int):
    query, limit = KeywordQuery.of(words), first
    while True:
        ids, scores = keywords.search(query, limit)
        exhausted = len(ids) < limit
        if allowed is not None:
            keep = np.isin(ids, allowed, assume_unique=True)
            ids, scores = ids[keep], scores[keep]
        if exhausted or (len(scores) and scores[-1] < config.min_keyword_share) or limit >= config.max_counted:
            break
        limit *= 4
    keep = scores >= config.min_keyword_share
    order = np.argsort(ids[keep])
    return ids[keep][order], scores[keep][order]


@pytest.fixture(scope="module")
def keywords(tmp_path_factory):
    folder = tmp_path_factory.mktemp("keywords")
    store = Store.open(f"sqlite:///{folder / 'store.db'}")
    index = KeywordIndex.open(store, store.create_generation("model", 4, "active"), folder / "indexes")
    rng = np.random.default_rng(4)
    vocabulary = [f"w{i}" for i in range(800)]
    weights = 1.0 / np.arange(1, len(vocabulary) + 1)
    weights /= weights.sum()
    index.add((pid, 1, " ".join(rng.choice(vocabulary, rng.integers(5, 40), p=weights)), None)
              for pid in range(1, 3001))
    yield index
    index.close()


# (config, the reference's first fetch): the loop's cap is the first fetch times a power of
# 4 reaching max_counted, so these make it max_counted, as the single query's cap is.
CASES = [(SearchConfig(), 1000), (SearchConfig(min_keyword_share=0.02, max_counted=1600), 100),
         (SearchConfig(max_counted=200), 50)]


@pytest.mark.parametrize("config, first", CASES, ids=["default", "low-floor", "small-cap"])
def test_candidates_equal_the_fetch_more_loop(keywords, config, first):
    rng = np.random.default_rng(9)
    allowed = np.sort(rng.choice(np.arange(1, 3001), 800, replace=False))
    found, capped = 0, 0
    for _ in range(25):
        words = [f"w{i}" for i in rng.integers(0, 800, rng.integers(1, 4))]
        for restrict in (None, allowed):
            got = _keyword_candidates(keywords, KeywordQuery.of(parse_query(" ".join(words)).keyword_words),
                                      restrict, config)
            want = reference(keywords, words, restrict, config, first)
            assert got[0].tolist() == want[0].tolist(), words
            np.testing.assert_array_equal(got[1], want[1])
            found += len(want[0])
            capped += restrict is None and len(want[0]) == config.max_counted
    assert found > 500  # not only empty results
    assert capped or config.max_counted > 1000  # the small cap was reached
