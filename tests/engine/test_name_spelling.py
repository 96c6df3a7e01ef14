"""engine.index.name_spelling: whether a passage writes a name, as typed or respelt."""

from __future__ import annotations

import pytest

from engine.index.name_spelling import (allowed_edits, is_latin_script, passages_that_may_name,
                                        within_edits, writes_names_in_latin)


@pytest.mark.parametrize(("name", "word"), [("brazil", "brasil"), ("brazil", "bresil"), ("canada", "kanada"),
                                            ("mexican", "mexicana"), ("mexican", "mexicaine"), ("berlin", "berlino"),
                                            ("rpm", "rpm")])
def test_a_respelling_is_within_the_allowed_edits(name, word):
    assert within_edits(name, word, allowed_edits(name))


@pytest.mark.parametrize(("name", "word"), [("rpm", "ram"), ("celtic", "keltische"), ("fedora", "federation"),
                                            ("wireguard", "wire"), ("jenkins", "jenkinsfiles")])
def test_another_word_is_not_a_respelling(name, word):
    assert not within_edits(name, word, allowed_edits(name))


def test_edit_distance_counts_insertions_deletions_and_substitutions():
    assert within_edits("kitten", "sitting", 3) and not within_edits("kitten", "sitting", 2)
    assert within_edits("", "ab", 2) and not within_edits("ab", "", 1)
    assert within_edits("same", "same", 0)


def test_latin_script_is_read_from_the_letters():
    assert is_latin_script("Die Honigbienen sammeln den Nektar, ça va, Tiếng Việt")
    assert not is_latin_script("Пчёлы собирают нектар с цветов и делают мёд в улье, DESTDIR")
    assert not is_latin_script("蜜蜂从花中采集花蜜")
    assert not is_latin_script("1234 -- 5678")  # no letters


def test_a_passage_in_another_script_writes_names_in_latin_when_it_holds_latin_words():
    assert writes_names_in_latin("make install DESTDIR=/путь/к/пакету: укажите путь к пакету quilt")
    assert not writes_names_in_latin("Компания Самсунг выпустила новый телефон")
    assert not writes_names_in_latin("Компания Самсунг (BBC) выпустила новый телефон")  # one Latin word


def test_passages_that_may_name_the_query_s_names():
    texts = {1: "O Brasil e a Índia reduzem as emissões.",  # respelt
             2: "Die Paketverwaltung baut Pakete aus den Quellen.",  # writes nothing like it
             3: "Компания Самсунг выпустила новый телефон",  # another script: may transliterate
             4: "Пакет собирается командой make install DESTDIR=/tmp, затем quilt и dpkg",  # writes Latin names
             5: "Le Brésil et le Mexique signent un accord."}  # respelt, with an accent
    assert passages_that_may_name(texts, ["Brazil"]) == {1, 3, 5}
    assert passages_that_may_name(texts, ["Fedora", "Brazil"]) == {1, 3, 5}
    assert passages_that_may_name(texts, ["dpkg"]) == {3, 4}
    assert passages_that_may_name({}, ["Brazil"]) == set()
