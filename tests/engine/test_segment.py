"""Sentence splitting and passage grouping across scripts."""

from __future__ import annotations

import random
import re

import pytest

from engine import segment as seg
from engine.errors import InputError
from engine.segment import make_passages, segment, split_sentences
from engine.spans import Span


def sentences_of(text: str, language: str | None = None, **kwargs) -> list[str]:
    return [text[s.start : s.end] for s in split_sentences(text, language, **kwargs)]


# --- sentence boundaries ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Dr. Smith arrived. He sat down.", ["Dr. Smith arrived.", "He sat down."]),
        ("Mr. and Mrs. Brown left. Prof. Li stayed.", ["Mr. and Mrs. Brown left.", "Prof. Li stayed."]),
        ("Use tools, e.g. hammers. I.e. Things. Done.", ["Use tools, e.g. hammers.", "I.e. Things.", "Done."]),
        ("J. R. R. Tolkien wrote it. Then he slept.", ["J. R. R. Tolkien wrote it.", "Then he slept."]),
        ("Er kam z.B. Hunde mit. Dann ging er.", ["Er kam z.B. Hunde mit.", "Dann ging er."]),
        ("Es waren ca. 50 Leute da. Siehe S. 12 oben.", ["Es waren ca. 50 Leute da.", "Siehe S. 12 oben."]),
        ("Am 3. Oktober 1990 kam es. Dann nicht.", ["Am 3. Oktober 1990 kam es.", "Dann nicht."]),
        ("M. Dupont est venu. Il est parti.", ["M. Dupont est venu.", "Il est parti."]),
        ("La Sra. García llegó. Luego habló.", ["La Sra. García llegó.", "Luego habló."]),
        ("Это т.е. важно. Да.", ["Это т.е. важно.", "Да."]),
        ("See Fig. 3 for details. It is clear.", ["See Fig. 3 for details.", "It is clear."]),
        ("We bought apples, pears, etc. Then we went home.", ["We bought apples, pears, etc.", "Then we went home."]),
    ],
)
def test_abbreviations_and_initials_do_not_split(text, expected):
    assert sentences_of(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("It fell in 1600 B.C.E. The city burned.", ["It fell in 1600 B.C.E.", "The city burned."]),
        ("Fue en el siglo V a. C. Es probable.", ["Fue en el siglo V a. C.", "Es probable."]),
        ("Nel 753 a.C. Roma nacque.", ["Nel 753 a.C.", "Roma nacque."]),
        ("Это было в 49 году до н. э. Марк пришёл.", ["Это было в 49 году до н. э.", "Марк пришёл."]),
        ("We met at 5 p.m. The rest is history.", ["We met at 5 p.m.", "The rest is history."]),
        ("It honours Martin Luther King Jr. Since then it grew.", ["It honours Martin Luther King Jr.", "Since then it grew."]),
        ("डॉ. ली आगे कहते हैं। बी.सी. में पुलिस आई।", ["डॉ. ली आगे कहते हैं।", "बी.सी. में पुलिस आई।"]),
    ],
)
def test_sentence_final_abbreviations_split_before_a_capital(text, expected):
    assert sentences_of(text) == expected


def test_ordinal_periods_need_the_language_unless_the_next_word_says_so():
    assert sentences_of("Im 16. Jahrhundert kam er. Dann ging er.") == ["Im 16. Jahrhundert kam er.", "Dann ging er."]
    text = "Den 3. Duke traf er. III. Napolyon kam."
    assert sentences_of(text) == ["Den 3.", "Duke traf er.", "III. Napolyon kam."]
    assert sentences_of(text, "de") == ["Den 3. Duke traf er.", "III. Napolyon kam."]
    assert sentences_of("10. Luis ve 5. Felipe geldi. Sonra gittiler.", "tr") == [
        "10. Luis ve 5. Felipe geldi.", "Sonra gittiler.",
    ]
    assert sentences_of("He scored 20. Then he left.", "en") == ["He scored 20.", "Then he left."]


def test_language_adds_abbreviations_that_are_words_elsewhere():
    text = "Było ok. Stu ludzi."  # Polish "ok." = "about"; in English "ok." ends a sentence
    assert sentences_of(text) == ["Było ok.", "Stu ludzi."]
    assert sentences_of(text, "pl") == [text]
    assert sentences_of(text, "pl-PL") == [text]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Pi is 3.14 or so. Next one.", ["Pi is 3.14 or so.", "Next one."]),
        ("It costs 1.000.000 euros. Cheap.", ["It costs 1.000.000 euros.", "Cheap."]),
        ("Version 2.0.1 is out. See example.com now.", ["Version 2.0.1 is out.", "See example.com now."]),
        ("円周率は３．１４です。次。", ["円周率は３．１４です。", "次。"]),
    ],
)
def test_numbers_and_domains_do_not_split(text, expected):
    assert sentences_of(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
        ('"Really?" he asked. Yes.', ['"Really?" he asked.', "Yes."]),
        ("(See above.) Next part.", ["(See above.)", "Next part."]),
        ("Il a dit « Non. » Puis rien.", ["Il a dit « Non. »", "Puis rien."]),
        ("Wait… what? No! Fine...  Really.", ["Wait… what?", "No!", "Fine...", "Really."]),
        ("Er sagte: „Komm!“ Dann ging er.", ["Er sagte: „Komm!“", "Dann ging er."]),
    ],
)
def test_quotes_brackets_and_ellipsis(text, expected):
    assert sentences_of(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我们试试看！我该去睡觉了。你在干什么？", ["我们试试看！", "我该去睡觉了。", "你在干什么？"]),
        ("彼は手紙を書く。明日は雨です！本当？", ["彼は手紙を書く。", "明日は雨です！", "本当？"]),
        ("「行く。」と言った。そうか。", ["「行く。」と言った。", "そうか。"]),
        ("他说：“我来了。”然后走了。", ["他说：“我来了。”", "然后走了。"]),
        ("你好!我是小明.再见", ["你好!", "我是小明.", "再见"]),
        ("Ｔｏｋｙｏ｡ Next.", ["Ｔｏｋｙｏ｡", "Next."]),
    ],
)
def test_chinese_and_japanese_split_without_spaces(text, expected):
    assert sentences_of(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("मैं घर जा रहा हूँ। वह स्कूल गया।", ["मैं घर जा रहा हूँ।", "वह स्कूल गया।"]),
        ("मैं घर जा रहा हूँ।वह स्कूल गया॥", ["मैं घर जा रहा हूँ।", "वह स्कूल गया॥"]),
        ("هل أنت بخير؟ نعم أنا بخير. شكرا!", ["هل أنت بخير؟", "نعم أنا بخير.", "شكرا!"]),
        ("آپ کیسے ہیں؟ میں ٹھیک ہوں۔ شکریہ", ["آپ کیسے ہیں؟", "میں ٹھیک ہوں۔", "شکریہ"]),
        ("Τι κάνεις; Καλά. Εσύ;", ["Τι κάνεις;", "Καλά.", "Εσύ;"]),
        ("Он пришёл. Она ушла! Почему?", ["Он пришёл.", "Она ушла!", "Почему?"]),
        ("one; two; three.", ["one; two; three."]),  # a Latin semicolon is no question mark
    ],
)
def test_danda_arabic_greek_cyrillic(text, expected):
    assert sentences_of(text) == expected


def test_opening_quote_after_a_cjk_stop_starts_the_next_sentence():
    assert sentences_of("我走了。“你好，”他说")[:2] == ["我走了。", "“你好，”他说"]


def test_paragraph_breaks_always_end_a_sentence():
    text = "Introduction\n\nThe method works\r\n \r\nand nothing else\n\n\n\nEnd"
    assert sentences_of(text) == ["Introduction", "The method works", "and nothing else", "End"]


def test_single_newlines_join_but_list_items_split():
    text = "A line wrapped\nin the middle. Items:\n- first item\n• second item\n2) third\n3. fourth"
    assert sentences_of(text) == [
        "A line wrapped\nin the middle.", "Items:", "- first item", "• second item", "2) third", "3. fourth",
    ]


def test_list_marker_at_sentence_start_is_not_a_sentence():
    assert sentences_of("1. Introduction and scope. IV. Results follow.") == [
        "1. Introduction and scope.", "IV. Results follow.",
    ]


def test_lowercase_after_period_continues_the_sentence():
    assert sentences_of("Costs rose approx. by half. Then fell.") == ["Costs rose approx. by half.", "Then fell."]


def test_missing_space_after_period_still_splits():
    assert sentences_of("It ended.Then it began. Was it?Yes.") == ["It ended.", "Then it began.", "Was it?", "Yes."]


# --- overlong sentences -----------------------------------------------------------


def test_overlong_sentence_is_cut_at_whitespace():
    rng = random.Random(1)
    text = " ".join(rng.choice(["alpha", "beta", "gamma,", "1;2;3", "delta"]) for _ in range(600))
    pieces = split_sentences(text, max_chars=100)
    assert len(pieces) > 1
    for span in pieces:
        assert span.end - span.start <= 100
        assert span.end == len(text) or text[span.end].isspace()  # cut at a word boundary
    assert "".join(text[s.start : s.end] for s in pieces).replace(" ", "") == text.replace(" ", "")


def test_overlong_cjk_is_cut_hard_or_at_a_comma():
    text = "我" * 250 + "，" + "你" * 300
    pieces = sentences_of(text, max_chars=400)
    assert pieces[0] == "我" * 250 + "，"  # the comma falls in the window's second half
    assert all(len(p) <= 400 for p in pieces)
    assert "".join(pieces) == text
    assert sentences_of("字" * 1000, max_chars=400) == ["字" * 400, "字" * 400, "字" * 200]


def test_hard_cut_keeps_combining_marks_with_their_base():
    text = "कि" * 300  # "क" + vowel sign "ि" (a combining mark), no spaces at all
    for piece in sentences_of(text, max_chars=101):
        assert len(piece) <= 101
        assert piece[0] == "क" and piece[-1] == "ि"


def test_default_cut_is_400_chars():
    assert max(s.end - s.start for s in split_sentences("word " * 1000)) <= seg.MAX_SENTENCE_CHARS


# --- offsets and random text --------------------------------------------------------

_VOCAB = [
    "word", "Word", "Dr.", "e.g.", "3.14", "z.B.", "etc.", "end.", "Why?", "No!", "wait…",
    '"Quote."', "(aside.)", "我来了。", "你呢？", "「行く。」と", "है।", "بخير؟", "Καλά;", "а.",
    "J.", "1.", "—", ",", "ok.", "１２．５", "a" * 30, "ि", "\u200d",
]
_GAPS = [" ", " ", " ", "  ", "\n", "\n\n", "\n \n\n", "\t", "", "\r\n", "\n- ", "\f"]


def random_text(rng: random.Random, words: int) -> str:
    return "".join(rng.choice(_VOCAB) + rng.choice(_GAPS) for _ in range(words))


@pytest.mark.parametrize("seed", range(40))
def test_random_text_spans_are_ordered_stripped_and_cover_every_character(seed):
    rng = random.Random(seed)
    text = rng.choice(["", "  ", "\n\n"]) + random_text(rng, rng.randint(0, 400))
    max_chars = rng.choice([20, 80, 400])
    spans = split_sentences(text, rng.choice([None, "en", "de", "pl", "xx"]), max_chars=max_chars)
    previous_end = 0
    for span in spans:
        assert previous_end <= span.start < span.end <= len(text)
        assert span.end - span.start <= max_chars
        sentence = text[span.start : span.end]
        assert sentence == sentence.strip()
        previous_end = span.end
    # every non-space character is in exactly one sentence, in order
    covered = "".join(re.sub(r"\s", "", text[s.start : s.end]) for s in spans)
    assert covered == re.sub(r"\s", "", text)


@pytest.mark.parametrize("seed", range(10))
def test_boundary_prefilter_finds_what_the_plain_pattern_finds(seed):
    rng = random.Random(100 + seed)
    text = random_text(rng, 500)
    reference = re.compile(seg._BOUNDARY_ALTERNATIVES)
    fast = [(m.span(), m.lastgroup) for m in seg._BOUNDARY.finditer(text)]
    assert fast == [(m.span(), m.lastgroup) for m in reference.finditer(text)]
    assert fast  # the random text does contain boundaries


# --- passages ---------------------------------------------------------------------


def numbered_text(counts: list[int], sentence: str = "Sentence {} is here.") -> str:
    """Paragraphs with counts[i] sentences each, separated by blank lines."""
    number = iter(range(10_000))
    return "\n\n".join(" ".join(sentence.format(next(number)) for _ in range(c)) for c in counts)


def test_passages_overlap_by_one_sentence():
    text = numbered_text([7])
    sentences = split_sentences(text)
    passages = make_passages(text, sentences, max_sentences=3, overlap=1)
    assert [len(p.sentences) for p in passages] == [3, 3, 3]
    assert passages[0].sentences[-1] == passages[1].sentences[0]
    assert passages[1].sentences[-1] == passages[2].sentences[0]
    for passage in passages:
        assert (passage.start, passage.end) == (passage.sentences[0].start, passage.sentences[-1].end)


def test_oversized_sentence_is_its_own_passage_and_one_sentence_carries_nothing():
    text = "Short one. " + "Long " * 150 + "sentence. Next one. Last one."
    s = split_sentences(text, max_chars=1000)
    assert len(s) == 4
    passages = make_passages(text, s, max_chars=600, max_sentences=5, overlap=1)
    assert [p.sentences for p in passages] == [(s[0],), (s[1],), (s[2], s[3])]


def test_overlap_is_dropped_when_it_would_leave_no_room_for_a_new_sentence():
    text = "A" * 299 + ". " + "B" * 249 + ". " + "C" * 399 + "."
    s = split_sentences(text, max_chars=1000)
    passages = make_passages(text, s, max_chars=600, max_sentences=5, overlap=1)
    assert [p.sentences for p in passages] == [(s[0], s[1]), (s[2],)]
    shorter = make_passages(text, s, max_chars=700, max_sentences=5, overlap=1)
    assert [p.sentences for p in shorter] == [(s[0], s[1]), (s[1], s[2])]


def test_passages_stop_at_paragraph_breaks_without_overlap():
    text = numbered_text([2, 2], "This sentence number {} is long enough to count as real text here.")
    passages = segment(text, max_sentences=5, overlap=1)
    assert [len(p.sentences) for p in passages] == [2, 2]
    assert "\n\n" not in text[passages[0].start : passages[0].end]


def test_tiny_paragraph_joins_the_next_one():
    text = "Introduction\n\nThis first paragraph is long enough to be a passage of its own, certainly. It goes on."
    passages = segment(text)
    assert len(passages) == 1
    assert text[passages[0].start : passages[0].end] == text
    assert len(segment(text, drop_junk=False, tiny_chars=0)) == 2


@pytest.mark.parametrize("seed", range(30))
def test_random_passages_cover_all_sentences_within_limits(seed):
    rng = random.Random(seed)
    text = random_text(rng, rng.randint(1, 300))
    sentences = split_sentences(text)
    max_sentences = rng.randint(1, 6)
    overlap = rng.randint(0, max_sentences - 1)
    max_chars = rng.choice([30, 200, 600])
    passages = make_passages(text, sentences, max_chars=max_chars, max_sentences=max_sentences, overlap=overlap)
    seen = [s for p in passages for s in p.sentences]
    assert sorted(set(seen), key=lambda s: s.start) == sentences
    index = {s: i for i, s in enumerate(sentences)}
    breaks = seg._paragraph_breaks(text, sentences)
    previous = [-1]
    for passage in passages:
        ids = [index[s] for s in passage.sentences]
        assert ids == list(range(ids[0], ids[-1] + 1))  # consecutive
        assert len(ids) <= max_sentences
        assert len(ids) == 1 or passage.end - passage.start <= max_chars
        assert ids[-1] > previous[-1]  # always something new
        carried = previous[-1] - ids[0] + 1
        assert 0 <= carried <= min(overlap, len(previous) - 1)  # one sentence carries nothing
        if carried:
            assert not breaks[previous[-1] + 1]  # no overlap across a paragraph break
        for i in ids[1:]:
            if breaks[i]:  # crossed a break: only while the passage was still tiny
                assert sentences[i - 1].end - sentences[ids[0]].start < 100
        previous = ids


# --- bad input --------------------------------------------------------------------


def test_bad_input_raises_input_error():
    with pytest.raises(InputError):
        split_sentences(b"bytes are not text")
    with pytest.raises(InputError):
        split_sentences("text", max_chars=1)
    with pytest.raises(InputError):
        split_sentences("text", language=5)
    with pytest.raises(InputError, match="overlap"):
        make_passages("a. b.", [Span(0, 2)], max_sentences=2, overlap=2)
    with pytest.raises(InputError, match="ordered"):
        make_passages("a. b.", [Span(3, 5), Span(0, 2)])
    with pytest.raises(InputError, match="inside"):
        make_passages("a.", [Span(0, 9)])


def test_empty_and_blank_text():
    assert split_sentences("") == []
    assert split_sentences(" \n\n\t ") == []
    assert segment("") == []


# --- real sentences: Universal Dependencies PUD (news and Wikipedia) ---------------

PUD_LANGUAGES = ["ar", "de", "en", "es", "fr", "hi", "it", "pt", "ru", "tr", "zh"]


def pud_boundary_f1(path, language: str) -> float:
    """Glue PUD's one-sentence lines into paragraphs of five and score the boundaries found."""
    sentences = [line.split("\t", 1)[1].strip() for line in path.read_text(encoding="utf-8").splitlines()]
    glue = "" if language == "zh" else " "  # Chinese puts no space between sentences
    found = expected = correct = 0
    for i in range(0, len(sentences), 5):
        group = sentences[i : i + 5]
        gold, offset = set(), 0
        for sentence in group[:-1]:
            offset += len(sentence)
            gold.add(offset)
            offset += len(glue)
        predicted = {s.end for s in split_sentences(glue.join(group))[:-1]}
        found, expected, correct = found + len(predicted), expected + len(gold), correct + len(gold & predicted)
    precision, recall = correct / found, correct / expected
    return 2 * precision * recall / (precision + recall)


@pytest.mark.data
@pytest.mark.parametrize("language", PUD_LANGUAGES)
def test_pud_sentence_boundaries(shared_data, language):
    # measured without a language hint: F1 0.993-0.999 across these 11 languages
    f1 = pud_boundary_f1(shared_data / "corpus" / "pud-parallel" / f"pud.{language}.tsv", language)
    assert f1 >= 0.98, f"{language}: boundary F1 {f1:.3f}"
