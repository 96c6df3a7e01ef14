"""The keyword part of fused scores: full for identifiers and names, discounted for a
sentence's partial matches (engine.index.fusion.keyword_bonus)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.index.fusion import ScoreBaseline, fuse, keyword_bonus
from engine.index.keyword_index import KeywordQuery
from engine.query import parse_query
from engine.search import is_sentence
from engine.search_config import SearchConfig

SHARES = np.array([0.0, 0.1, 0.2, 0.45, 0.8], np.float32)


def test_identifiers_keep_their_share_and_sentences_lose_partial_matches():
    config = SearchConfig()
    np.testing.assert_allclose(keyword_bonus(SHARES, config, sentence=False), SHARES)
    sentence = keyword_bonus(SHARES, config, sentence=True)
    assert sentence[3] == pytest.approx(0.45) and sentence[4] == pytest.approx(0.8)  # full matches stay
    power = config.sentence_keyword_power
    assert sentence[1] == pytest.approx(0.1 * (0.1 / 0.45) ** power) and sentence[2] < 0.2 * 0.05
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


def test_a_sentence_that_names_an_identifier_is_a_lookup():
    assert is_sentence(parse_query("The man is eating."), "en")
    assert is_sentence(parse_query("Claudette hit the mid-Texas coast July 15 with 85-mph wind"), "en")
    assert not is_sentence(parse_query("why does ffi_prep_closure_loc fail"), "en")
    assert not is_sentence(parse_query("Rechnung FA-2024-5521 bezahlt"), "de")
    assert not is_sentence(parse_query("Oliver Whitfield"), None)  # no language: a name


def test_auxiliaries_and_question_words_are_not_keywords():
    """"Can you do this?" names no topic; "can" alone once made a passage about sour fruit
    a full keyword match."""
    assert KeywordQuery.of(["How", "can", "I", "export", "pairs?"]).terms == ["export", "pairs"]
    assert KeywordQuery.of(["Wie", "kann", "ich", "Paare", "exportieren"]).terms == ["paare", "exportieren"]
    assert KeywordQuery.of(["Can", "you", "do", "this"]).terms  # nothing else: the words are all there is


def test_meaning_below_the_querys_average_does_not_take_away_an_identifiers_match():
    """A bare code's vector means little: the one passage holding it may score below the
    query's mean cosine (z < 0), while passages without it stand out a little by shape."""
    cosine = np.array([0.45, 0.70, 0.70], np.float32)  # the holder, two look-alikes
    keyword = np.array([0.35, 0.0, 0.0], np.float32)
    scores, matched = fuse(cosine, keyword, ScoreBaseline(0.5, 0.1), "fused", SearchConfig(), sentence=False)
    assert scores[0] > scores[1] and matched[0] == "keywords"
    assert scores[0] == pytest.approx(SearchConfig().keyword_weight * 0.35)  # nothing taken for meaning
