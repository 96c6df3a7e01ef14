"""The search box syntax: what each part means, and a typed error for each malformed part."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from engine.errors import (
    BadDateError,
    QuerySyntaxError,
    UnbalancedQuoteError,
    UnknownFileTypeError,
    UnknownFilterError,
    UnknownLanguageError,
)
from engine.query import QUERY_HELP, parse_query, with_filters


def test_words_phrases_exclusions_and_filters():
    q = parse_query('invoice "FA-2024-5521 overdue" -draft -"old copy" lang:de,FR type:PDF after:2024-01-01 before:2024-06')
    assert q.words == ("invoice",)
    assert q.phrases == ("FA-2024-5521 overdue",)
    assert q.excluded == ("draft", "old copy")
    assert q.languages == {"de", "fr"} and q.file_types == {"pdf"}
    assert q.modified_after == datetime(2024, 1, 1).timestamp()
    assert q.modified_before == datetime(2024, 6, 1).timestamp()
    assert q.meaning_text == "invoice FA-2024-5521 overdue"


@pytest.mark.parametrize("text, words, excluded", [
    ("git config --global", ("git", "config", "--global"), ()),
    ("update-alternatives --config editor", ("update-alternatives", "--config", "editor"), ()),
    ("--help", ("--help",), ()),
    ("rm -rf", ("rm", "-rf"), ()),
    ("ls -la", ("ls", "-la"), ()),
    ("tar -xzf backup.tar.gz", ("tar", "-xzf", "backup.tar.gz"), ()),
    ("kill -9 daemon", ("kill", "-9", "daemon"), ()),
    ("honey -wasps", ("honey",), ("wasps",)),  # a word: left out
    ("jaguar -car", ("jaguar",), ("car",)),
    ('ls -"la"', ("ls",), ("la",)),  # quoted: left out all the same
    ("-rf cleanup", ("cleanup",), ("rf",)),  # first: no command before it, so an exclusion
])
def test_options_are_searched_for_and_words_left_out(text, words, excluded):
    q = parse_query(text)
    assert (q.words, q.excluded) == (words, excluded)
    assert "--global" in QUERY_HELP and "rm -rf" in QUERY_HELP


def test_a_dash_word_after_a_word_is_marked_as_a_possible_option():
    """Left out for now, with where it stood, so that the library can decide
    (engine.index.restrict.options_as_written); first, quoted or not ASCII, never."""
    q = parse_query('cannot find -lfoo when -"red wine" -été linking')
    assert q.excluded == ("lfoo", "red wine", "été")
    assert q.option_like == ((2, "lfoo"),)
    assert parse_query("-lfoo linking").option_like == ()
    # a cluster without a vowel reads as a flag until the library says otherwise ("-gpl")
    licence = parse_query("licence -gpl -rf")
    assert licence.words == ("licence", "-gpl", "-rf") and licence.option_like == ((1, "gpl"),)
    # two dashes are always an option, and a dash alone ("--" in a sentence) no word at all
    assert parse_query("lintian --show-overrides").option_like == ()
    assert parse_query("rose -- slipping to 6.1 percent").option_like == ()


def test_path_filter_expands_home_and_accepts_quotes():
    q = parse_query('notes path:"~/My Papers"')
    assert q.path_prefix == str(Path("~/My Papers").expanduser().absolute())
    assert q.words == ("notes",)


def test_identifiers_and_times_are_words_not_filters():
    q = parse_query("std::vector 10:30 e-mail FA-2023-1177")
    assert q.words == ("std::vector", "10:30", "e-mail", "FA-2023-1177")
    assert not q.has_filters


def test_filters_alone_are_an_empty_query():
    assert parse_query("lang:de").is_empty
    assert parse_query("   ").is_empty


@pytest.mark.parametrize("text, error", [
    ("colour:red", UnknownFilterError),
    ("after:2024-13-01", BadDateError),
    ("before:yesterday", BadDateError),
    ("lang:xx", UnknownLanguageError),
    ("lang:german", UnknownLanguageError),
    ("type:exe", UnknownFileTypeError),
    ('"never closed', UnbalancedQuoteError),
])
def test_malformed_parts_raise_typed_errors_naming_the_part(text, error):
    with pytest.raises(error) as info:
        parse_query(text)
    assert isinstance(info.value, QuerySyntaxError)
    assert info.value.fragment and info.value.fragment.lower() in text.lower()


def test_help_names_every_filter():
    for key in ("lang:", "type:", "path:", "after:", "before:", '"exact phrase"', "-word"):
        assert key in QUERY_HELP


def test_caller_filters_narrow_what_was_typed():
    typed = parse_query("bees lang:de type:pdf path:/a")
    both = with_filters(typed, {"de", "fr"}, "/a/b", {".PDF", "txt"})
    assert both.languages == {"de"} and both.file_types == {"pdf"} and both.path_prefix == "/a/b"
    assert with_filters(parse_query("bees"), {"fr"}, None, None).languages == {"fr"}
    disjoint = with_filters(typed, {"fr"}, None, {"docx"})
    assert "de" not in disjoint.languages and "fr" not in disjoint.languages
    assert "pdf" not in disjoint.file_types and "docx" not in disjoint.file_types
    assert with_filters(typed, None, None, None) is typed


def test_a_phrase_given_many_times_counts_once_and_long_queries_are_refused():
    from engine.errors import QueryTooLongError
    from engine.query import MAX_PHRASES, MAX_QUERY_CHARS

    parsed = parse_query(" ".join(['"walrus puffin"'] * 500) + " -seal -seal")
    assert parsed.phrases == ("walrus puffin",) and parsed.excluded == ("seal",)
    with pytest.raises(QueryTooLongError, match="characters long"):
        parse_query(" ".join(['"walrus puffin"'] * 5000))  # issue 24: 2.65 s to answer
    assert parse_query("w " * (MAX_QUERY_CHARS // 2)).words  # a long paste fits
    with pytest.raises(QueryTooLongError, match=f"at most {MAX_PHRASES}"):
        parse_query(" ".join(f'"walrus {i}"' for i in range(MAX_PHRASES + 1)))
