"""engine.languages: the codes Babelfind detects, and suggestions for what people type."""

from __future__ import annotations

import pytest

from engine.errors import InputError
from engine.languages import LANGUAGE_CODES, check_language, language_name


def test_the_table_holds_exactly_the_codes_langid_can_give():
    from engine.langid import _get_identifier, iso_639_1

    labels = _get_identifier().labels
    detectable = {iso_639_1(label) for label in labels} - {None} | {"zh", "ja", "ko"}
    assert LANGUAGE_CODES == detectable


@pytest.mark.parametrize("text, code", [("de", "de"), (" FR ", "fr"), ("Zh", "zh")])
def test_known_codes_are_accepted_in_any_case(text, code):
    assert check_language(text) == code


@pytest.mark.parametrize("text, suggestion", [
    ("german", "de"), ("Deutsch", "de"), ("ger", "de"), ("deu", "de"), ("français", "fr"),
    ("FRANCAIS", "fr"), ("pt-BR", "pt"), ("en_US", "en"), ("zho", "zh"), ("日本語", "ja"),
    ("bokmål", "no"), ("nb", "no"), ("germna", "de"), ("portugese", "pt"),
])
def test_names_and_other_codes_get_the_code_suggested(text, suggestion):
    with pytest.raises(InputError, match=rf"did you mean '{suggestion}' \({language_name(suggestion)}\)\?"):
        check_language(text)


@pytest.mark.parametrize("text", ["xx", "q", "klingon", "abc"])
def test_unknown_text_gets_no_guess(text):
    with pytest.raises(InputError, match="unknown language") as error:
        check_language(text)
    assert "did you mean" not in str(error.value)


def test_tatoeba_codes_for_codes_and_names():
    from engine.languages import tatoeba_code_for

    available = {"deu", "cmn", "fra"}
    assert tatoeba_code_for("de", available) == "deu"
    assert tatoeba_code_for("Chinese", available) == "cmn"
    assert tatoeba_code_for("es", available) is None and tatoeba_code_for("xyz", available) is None


def test_an_empty_code_is_refused():
    with pytest.raises(InputError, match="empty"):
        check_language("  ")
