"""Marking matched words: whole words, identifiers intact, phrases together; snippets that show them."""

from __future__ import annotations

from engine.highlight import first_match, match_spans
from engine.query import parse_query
from engine.search import SNIPPET_CHARS, make_snippet


def marked(text: str, query: str) -> list[str]:
    return [text[s:e] for s, e in match_spans(text, parse_query(query).highlight)]


def test_whole_words_only():
    assert marked("Red Hat may redistribute red paint", "red") == ["Red", "red"]


def test_identifiers_keep_their_underscores_and_parts_mark_alone():
    text = "ffi_prep_closure_loc returned 0x800f0922"
    assert marked(text, "ffi_prep_closure_loc 0x800f0922") == ["ffi_prep_closure_loc", "0x800f0922"]
    assert marked(text, "closure") == ["closure"]


def test_a_one_letter_word_marks_words_not_the_letters_of_identifiers():
    text = "Fix a leak in prepend_to_path (git.c) for x86_64. The C code and C++ code"
    assert marked(text, "C program") == ["C", "C"]
    assert marked(text, "x") == []
    assert marked("the x server", "x") == ["x"]
    assert marked(text, "git") == ["git"]  # longer parts still mark alone


def test_phrases_mark_only_together_and_exclusions_mark_nothing():
    text = "red wine here, wine red there"
    assert marked(text, '"red wine"') == ["red wine"]
    assert marked(text, "wine -red") == ["wine", "wine"]


def test_function_words_of_any_language_mark_nothing_beside_a_topic_word():
    """An English "I" is the Italian article "i": marking it in every Italian passage is noise."""
    text = "I pacchetti possono essere aggiornati al volo, anche i processi in esecuzione"
    assert marked(text, "can I update the packages while the processes run") == []
    assert marked(text, "I aggiornati") == ["aggiornati"]
    assert marked("the", "the") == ["the"]  # nothing else asked: the word itself is marked


def test_a_stem_does_not_reach_another_languages_function_word():
    terms = parse_query("Come si imposta la tastiera del sistema?").highlight.stemmed("it")
    text = "Tienen su propio demonio así como su motor de sistema. Come si imposta?"
    assert [text[a:b] for a, b in match_spans(text, terms)] == ["sistema", "Come", "imposta"]
    boxes, text = parse_query("boxes").highlight.stemmed("en"), "a box of boxes"
    assert [text[a:b] for a, b in match_spans(text, boxes)] == ["box", "boxes"]  # stems still mark


def test_cjk_and_accents():
    assert marked("我们去北京旅游", "北京") == ["北京"]
    assert marked("Die Größe zählt", "GROSSE") == ["Größe"]


def test_long_passage_snippet_starts_near_the_match():
    text = "filler " * 80 + "invoice FA-2024-5521 is overdue."
    snippet = make_snippet(text, terms=parse_query("FA-2024-5521").highlight)
    assert "FA-2024-5521" in snippet and snippet.startswith("…") and len(snippet) <= SNIPPET_CHARS + 1
    assert "FA-2024-5521" not in make_snippet(text)


def test_a_snippet_starts_at_the_passage_when_it_matches_early():
    text = "invoice FA-2024-5521 opened. " + "filler " * 80 + "invoice FA-2024-5521 is overdue."
    snippet = make_snippet(text, terms=parse_query("FA-2024-5521").highlight)
    assert snippet.startswith("invoice FA-2024-5521 opened.") and snippet.endswith("…")


def test_the_first_match_is_match_spans_first_read_no_further():
    texts = ["Red Hat may redistribute red paint", "ffi_prep_closure_loc returned 0x800f0922 (closures)",
             "Die Größe zählt, die Boxen auch", "nothing here", "我们去北京旅游 and then Red boxes",
             "x86_64 and git.c then the C code", "red wine here, wine red there"]
    queries = ["red", "closure", "GROSSE box", "ffi_prep_closure_loc", "北京", "C program", '"wine red"', "zebra"]
    for text in texts:
        for query in queries:
            terms = parse_query(query).highlight.stemmed("en")
            spans = match_spans(text, terms)
            assert first_match(text, terms) == (spans[0] if spans else None), (text, query)


def test_a_word_cut_where_the_start_ends_is_not_taken_for_a_match():
    limit = SNIPPET_CHARS
    for offset in range(limit - 30, limit - 12):  # "overduexyz" across the start's end
        text = "f" * (offset - 1) + " overduexyz " + "filler " * 30 + "the invoice is overdue now"
        snippet = make_snippet(text, terms=parse_query("overdue").highlight)
        assert snippet.startswith("…") and "is overdue now" in snippet, offset
