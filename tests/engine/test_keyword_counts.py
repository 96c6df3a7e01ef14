"""The keyword index's cached passage counts (its own and per term) follow every write.

BM25 shares and the common-word cut depend on how many passages hold each term; these
counts are cached between writes. A write through the same index clears them; a write
by another connection to the same file (another process's library) is seen through
SQLite's data_version. The reference is a fresh connection, which caches nothing yet.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.index import keyword_index
from engine.index.keyword_index import KeywordIndex, KeywordQuery
from engine.store import Store


@pytest.fixture
def opened(tmp_path):
    store = Store.open(f"sqlite:///{tmp_path / 'store.db'}")
    generation = store.create_generation("model", 4, "active")
    indexes: list[KeywordIndex] = []

    def open_() -> KeywordIndex:
        index = KeywordIndex.open(store, generation, tmp_path / "indexes")
        indexes.append(index)
        return index

    yield open_
    for index in indexes:
        index.close()


def rows(start: int, texts: list[str], language: str | None = None) -> list[tuple[int, int, str, str | None]]:
    return [(start + i, 1, text, language) for i, text in enumerate(texts)]


def fresh(index: KeywordIndex) -> KeywordIndex:
    return KeywordIndex(index.store, index.path, keyword_index._connect(index.path), index._generation)


def counts(index: KeywordIndex, words: list[str]) -> tuple[int, dict[str, int]]:
    """(passages held, passages per term as written) as a search sees them."""
    with index._lock:
        total, frequencies = index._frequencies(KeywordQuery.of(words))
    return total, {term: n for (column, term), n in frequencies.items() if column == "terms"}


def same_search(a: KeywordIndex, b: KeywordIndex, words: list[str]) -> bool:
    query = KeywordQuery.of(words)
    (ids_a, scores_a), (ids_b, scores_b) = a.search(query, 100), b.search(query, 100)
    return (counts(a, words) == counts(b, words) and ids_a.tolist() == ids_b.tolist()
            and np.allclose(scores_a, scores_b))


def test_own_writes_update_the_counts(opened):
    index = opened()
    index.add(rows(1, ["zebra stripes", "zebra herd", "lion pride"] + [f"filler {i}" for i in range(60)]))
    assert counts(index, ["zebra", "lion"]) == (63, {"zebra": 2, "lion": 1})
    index.add(rows(100, [f"zebra {i}" for i in range(10)]))  # more zebras: a lower idf
    reference = fresh(index)
    assert counts(index, ["zebra", "lion"]) == (73, {"zebra": 12, "lion": 1})
    assert same_search(index, reference, ["zebra", "lion"])
    index.apply([1, 2], [])  # removals alone also clear them
    assert counts(index, ["zebra", "lion"]) == (71, {"zebra": 10, "lion": 1})
    assert same_search(index, fresh(index), ["zebra", "lion"])
    reference.close()


def test_another_connections_writes_are_seen(opened):
    reader = opened()
    writer = opened()  # the same file through its own connection, as another process has
    writer.add(rows(1, ["kestrel nest", "falcon nest", "owl"]))
    assert counts(reader, ["kestrel", "nest"]) == (3, {"kestrel": 1, "nest": 2})
    writer.add(rows(10, [f"nest {i}" for i in range(30)]))
    assert len(reader) == 33 and counts(reader, ["kestrel", "nest"]) == (33, {"kestrel": 1, "nest": 32})
    assert same_search(reader, fresh(reader), ["kestrel", "nest"])
    writer.apply([1], [])
    assert reader.search(KeywordQuery.of(["kestrel"]), 10)[0].tolist() == []
    assert same_search(reader, fresh(reader), ["falcon", "nest"])


def test_a_long_session_of_distinct_words_stays_bounded(opened, monkeypatch):
    monkeypatch.setattr(keyword_index, "FREQUENCIES_CACHED", 5)
    index = opened()
    index.add(rows(1, [f"word{i} common" for i in range(20)]))
    for i in range(20):
        assert index.search(KeywordQuery.of([f"word{i}"]), 10)[0].tolist() == [i + 1]
    assert len(index._frequencies_cache) <= 6


def test_holds_any_follows_writes_by_another_connection(opened):
    index = opened()
    index.add(rows(1, ["zebra stripes", "lion pride"]))
    assert index.holds_any(KeywordQuery.of(["qwzx", "zebra"]))
    assert not index.holds_any(KeywordQuery.of(["qwzx", "vlorp"]))
    assert not index.holds_any(KeywordQuery.of([]))
    other = fresh(index)
    other.add(rows(10, ["qwzx is a word now"]))
    assert index.holds_any(KeywordQuery.of(["qwzx", "vlorp"]))
    other.close()


def test_a_word_is_held_whole_or_by_every_one_of_its_parts(opened):
    index = opened()
    index.add(rows(1, ["the torch of the py module", "set up the Wi-Fi"]))
    assert index.holds_word("PyTorch")  # "py" and "torch", in some passages
    assert index.holds_word("wi-fi") and index.holds_word("WIFI") is False
    assert not index.holds_word("WordPress")  # "word" alone is not enough
    assert not index.holds_word("Kubernetes")
