"""Tokenisation for the keyword index: folding, bigrams for spaceless scripts, identifiers."""

from __future__ import annotations

import pytest

from engine.index.keyword_tokens import fold, index_terms, names_identifier, names_in, tokenize


def test_case_and_accent_folding():
    assert fold("Größe") == fold("GROSSE") == "grosse"
    assert fold("Café") == "cafe" and fold("Ёлка") == "елка"
    assert fold("हिन्दी") == "हिन्दी"  # marks of other scripts carry meaning and stay


def test_identifiers_are_whole_and_in_parts():
    assert index_terms("FA-2023-1177") == ["fa_2023_1177", "fa", "2023", "1177"]
    assert index_terms("ffi_prep_closure_loc")[:2] == ["ffi_prep_closure_loc", "ffi"]
    assert "closure" in index_terms("ffi_prep_closure_loc")
    assert index_terms("Z6III") == ["z6iii", "z", "6", "iii"]
    assert index_terms("0x800f0922")[0] == "0x800f0922"


def test_offsets_point_at_the_original_text():
    text = "Rechnung FA-2024-5521: ffi_prep_closure_loc"
    for token in tokenize(text):
        assert fold(text[token.start:token.end].replace("-", "_")) == token.term
        for part in token.parts:
            assert fold(text[part.start:part.end]) == part.term


def test_spaceless_scripts_become_bigrams():
    assert index_terms("我爱北京") == ["我爱", "爱北", "北京"]
    assert index_terms("東京") == ["東京"] and index_terms("京") == ["京"]
    assert "北京" in index_terms("iPhone在北京")
    assert index_terms("สวัสดี")[0] == "สว"


def test_devanagari_words_stay_whole():
    assert index_terms("हिन्दी भाषा") == ["हिन्दी", "भाषा"]


def test_fast_path_matches_tokenize():
    text = "Sehr geehrte Frau Müller, die Rechnung FA-2024-5521 über 1.234,56 EUR; iPhone 東京都 Z6III."
    slow = [t for token in tokenize(text) for t in [token.term, *(p.term for p in token.parts)]]
    assert index_terms(text) == slow


def test_common_words_leave_matching_only_in_large_collections():
    from engine.index.keyword_index import KeywordQuery, _without_common_words

    query = KeywordQuery.of(["the", "FA-2024-5521"])
    frequencies = {("terms", term): n for term, n in
                   {"the": 9000, "fa": 10000, "2024": 3000, "5521": 3, "fa_2024_5521": 1}.items()}
    pruned = _without_common_words(query, frequencies, 10_000)
    assert pruned.groups == ((("fa_2024_5521",), ("5521",)),)
    assert _without_common_words(query, frequencies, 1000) == query  # small: every word kept
    assert not _without_common_words(KeywordQuery.of(["the"]), frequencies, 10_000)


@pytest.mark.parametrize("word", ["FA-2024-5521", "x86", "0x800f0922", "Z6III", "ffi_prep_closure_loc",
                                  "std::vector", "foo.py", "ASN.1", "asn1Parser", "COVID-19", "user@host"])
def test_codes_are_identifiers(word):
    assert names_identifier(word)


@pytest.mark.parametrize("word", ["1996", "6.1", "$29.42", "3%", "85-mph", "30-day", "U.S.", "e.g.",
                                  "woman's", "key-board", "mid-Texas", "NoMa", "Größe"])
def test_words_and_numbers_of_prose_are_not(word):
    assert not names_identifier(word)


@pytest.mark.parametrize(("query", "language", "names"), [
    ("set up a Wi-Fi hotspot on my Android phone", "en", ["Wi-Fi", "Android"]),
    ("speed up a slow WordPress website", "en", ["WordPress"]),
    ("Kubernetes ingress. Where do I start?", "en", []),  # capitals that start a sentence
    ("How do I use git? I forgot", "en", []),  # "I" is not a name
    ("build an RPM package for \u201cFedora\u201d", "en", ["RPM", "Fedora"]),
    ("Wie exportiere ich eine Tabelle als CSV", "de", ["CSV"]),  # every German noun has a capital
    ("как восстановить фотографии с iPhone в Москве", "ru", ["iPhone"]),  # Russian declines names
    ("accélérer un site WordPress trop lent", "fr", ["WordPress"]),
    ("cheap flights to Lisbon", None, []),  # unknown language: only capitals inside a word
])
def test_names_in_a_query(query, language, names):
    assert names_in(query.split(), language) == names
