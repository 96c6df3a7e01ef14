"""The keyword part of fused scores: full for identifiers and names, discounted for a
sentence's partial matches (engine.index.fusion.keyword_bonus)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.index.fusion import ScoreBaseline, fuse, keyword_bonus
from engine.search import SearchConfig

SHARES = np.array([0.0, 0.1, 0.2, 0.45, 0.8], np.float32)


def test_identifiers_keep_their_share_and_sentences_lose_partial_matches():
    config = SearchConfig()
    np.testing.assert_allclose(keyword_bonus(SHARES, config, sentence=False), SHARES)
    sentence = keyword_bonus(SHARES, config, sentence=True)
    assert sentence[3] == pytest.approx(0.45) and sentence[4] == pytest.approx(0.8)  # full matches stay
    assert sentence[1] == pytest.approx(0.1 * (0.1 / 0.45) ** 4) and sentence[2] < 0.2 * 0.05
    assert np.all(np.diff(sentence) >= 0)  # still monotonic: more words, more points


def test_a_sentence_query_ranks_a_cross_lingual_paraphrase_above_a_partial_word_match():
    """Two passages equally close in meaning (the paraphrase a little closer): one shares
    some of the query's words (share 0.2), the other, in another language, none."""
    cosine = np.array([0.80, 0.79], np.float32)  # paraphrase, same-language distractor
    keyword = np.array([0.0, 0.2], np.float32)
    baseline = ScoreBaseline(0.5, 0.1)
    config = SearchConfig()
    as_sentence, _ = fuse(cosine, keyword, baseline, "fused", config, sentence=True)
    as_identifier, _ = fuse(cosine, keyword, baseline, "fused", config, sentence=False)
    assert as_sentence[0] > as_sentence[1]
    assert as_identifier[1] > as_identifier[0]  # an identifier-like query trusts the words
