"""Document-level mining (reading, dedupe, progress, auto-align, bad input) and TSV/TMX output."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from engine.mining.bitext import (
    DEFAULT_THRESHOLDS,
    MiningFinished,
    MiningOptions,
    MiningProgress,
    iter_mine_documents,
    mine_documents,
    mine_sentences,
    read_sentences,
)
from engine.mining.bitext_io import read_tmx, read_tsv, tsv_text, write_pairs
from engine.errors import ExtractionError, InputError
from mining_fakes import ENGLISH, GERMAN, TranslationEncoder, document_texts

LANGS = dict(src_lang="de", tgt_lang="en")


def write_lines(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_translations_are_found_with_their_positions():
    order = [3, 0, 6, 1, 7, 2, 5, 4]
    result = mine_sentences(GERMAN, [ENGLISH[j] for j in order], TranslationEncoder(), MiningOptions(**LANGS))
    assert not result.aligned  # shuffled: no ordered alignment
    found = {(p.src_indices[0], p.tgt_indices[0]) for p in result.pairs}
    assert found == {(order[j], j) for j in range(8)}
    assert all(p.src_text == GERMAN[p.src_indices[0]] for p in result.pairs)
    assert (result.n_src, result.n_tgt, result.src_lang, result.tgt_lang) == (8, 8, "de", "en")


def test_candidates_below_the_threshold_come_back_only_when_asked():
    order = [3, 0, 6, 1, 7, 2, 5, 4]
    german = GERMAN + ["Die Steuererklärung ist fällig.", "Wir streichen die Küche blau."]
    english = [ENGLISH[j] for j in order] + ["Quantum computers need cold rooms.", "He sold his bicycle."]
    default = mine_sentences(german, english, TranslationEncoder(), MiningOptions(**LANGS))
    review = mine_sentences(german, english, TranslationEncoder(),
                            MiningOptions(**LANGS, keep_below_threshold=True))
    translations = {(order[j], j) for j in range(8)}
    assert {(p.src_indices[0], p.tgt_indices[0]) for p in default.pairs} == translations
    assert review.threshold == default.threshold == DEFAULT_THRESHOLDS["neutral"]["ratio"]
    above = [p for p in review.pairs if p.score > review.threshold]
    below = [p for p in review.pairs if p.score <= review.threshold]
    assert above == list(default.pairs) and below  # same pairs above, candidates below
    assert any(p.src_indices[0] >= 8 or p.tgt_indices[0] >= 8 for p in below)  # the unrelated ones
    assert not review.aligned and review.increasing == default.increasing


class LanguageOffsetEncoder(TranslationEncoder):
    """TranslationEncoder whose vectors also carry a strong offset per language, as a real
    multilingual encoder's do: every German text is close to every other German text."""

    def __init__(self):
        super().__init__()
        from engine.index.language_means import reference_sentences

        self.german = set(GERMAN) | set(reference_sentences()["de"])

    def encode(self, texts, kind="passage"):
        vectors = super().encode(texts, kind)
        rng = np.random.default_rng(7)
        offsets = {"de": rng.standard_normal(vectors.shape[1]), "en": rng.standard_normal(vectors.shape[1])}
        shifted = vectors + np.stack([offsets["de" if t in self.german else "en"] for t in texts])
        return shifted / np.linalg.norm(shifted, axis=1, keepdims=True)


def test_neutral_space_takes_each_sides_language_mean_out():
    order = [3, 0, 6, 1, 7, 2, 5, 4]
    english = [ENGLISH[j] for j in order]
    translations = {(order[j], j) for j in range(8)}
    neutral = mine_sentences(GERMAN, english, LanguageOffsetEncoder(), MiningOptions(**LANGS))
    plain = mine_sentences(GERMAN, english, LanguageOffsetEncoder(),
                           MiningOptions(**LANGS, space="plain", keep_below_threshold=True))
    assert neutral.space == "neutral" and plain.space == "plain"
    assert {(p.src_indices[0], p.tgt_indices[0]) for p in neutral.pairs} == translations
    assert neutral.threshold == DEFAULT_THRESHOLDS["neutral"]["ratio"]
    # As encoded, the offsets squeeze every cosine together: translations' margins shrink.
    assert min(p.score for p in neutral.pairs) > max(p.score for p in plain.pairs)


def test_plain_space_encodes_no_reference_sentences():
    encoder = TranslationEncoder()
    mine_sentences(GERMAN, ENGLISH, encoder, MiningOptions(**LANGS, space="plain", align="off"))
    assert sorted(encoder.encoded) == sorted(GERMAN + ENGLISH)


def test_language_means_are_measured_once_per_encoder():
    encoder = TranslationEncoder()
    options = MiningOptions(**LANGS, align="off")
    first = mine_sentences(GERMAN, ENGLISH, encoder, options)
    references = len(encoder.encoded) - len(GERMAN + ENGLISH)
    assert references > 0
    encoder.encoded.clear()
    second = mine_sentences(GERMAN, ENGLISH, encoder, options)
    assert sorted(encoder.encoded) == sorted(GERMAN + ENGLISH)  # the means were kept
    assert [p.score for p in second.pairs] == [p.score for p in first.pairs]
    other = TranslationEncoder()  # another encoder (same name) measures its own
    mine_sentences(GERMAN, ENGLISH, other, options)
    assert len(other.encoded) - len(GERMAN + ENGLISH) == references


def test_duplicate_sentences_are_encoded_and_mined_once():
    encoder = TranslationEncoder()
    src = GERMAN[:4] + [GERMAN[1], GERMAN[1]] + GERMAN[4:]
    tgt = ENGLISH + [ENGLISH[2]]
    result = mine_sentences(src, tgt, encoder, MiningOptions(align="off", **LANGS))
    assert sorted(document_texts(encoder)) == sorted(GERMAN + ENGLISH)
    assert encoder.kinds == {"query"}
    texts = [p.src_text for p in result.pairs]
    assert len(texts) == len(set(texts)) == 8
    by_text = {p.src_text: p for p in result.pairs}
    assert by_text[GERMAN[1]].src_indices == (1,)  # first occurrence
    assert by_text[GERMAN[2]].tgt_indices == (2,)


def test_documents_in_order_are_aligned_automatically_with_a_merge():
    src = GERMAN
    # The English side joins sentences 2 and 3 into one sentence.
    merged = ENGLISH[2][:-1] + ", and " + ENGLISH[3][0].lower() + ENGLISH[3][1:]
    tgt = ENGLISH[:2] + [merged] + ENGLISH[4:]
    encoder = TranslationEncoder()
    # The fake encoder gives the merged sentence the vector of GERMAN[2] + GERMAN[3] joined.
    encoder.meaning[merged] = "merged"
    encoder.meaning[f"{GERMAN[2]} {GERMAN[3]}"] = "merged"
    result = mine_sentences(src, tgt, encoder, MiningOptions(**LANGS))
    assert result.aligned and result.increasing == 1.0
    beads = [(p.src_indices, p.tgt_indices) for p in result.pairs]
    assert ((2, 3), (2,)) in beads
    assert ((0,), (0,)) in beads and ((7,), (6,)) in beads
    merged_pair = result.pairs[beads.index(((2, 3), (2,)))]
    assert merged_pair.src_text == f"{GERMAN[2]} {GERMAN[3]}"


def test_align_off_and_on_are_obeyed():
    off = mine_sentences(GERMAN, ENGLISH, TranslationEncoder(), MiningOptions(align="off", **LANGS))
    assert not off.aligned and off.increasing == 1.0
    order = [3, 0, 6, 1, 7, 2, 5, 4]
    on = mine_sentences(GERMAN, [ENGLISH[j] for j in order], TranslationEncoder(), MiningOptions(align="on", **LANGS))
    assert on.aligned
    # In-order alignment of a shuffled document keeps only an increasing subset.
    pairs = [(p.src_indices[0], p.tgt_indices[0]) for p in on.pairs]
    assert pairs == sorted(pairs) and len(pairs) < 8


def test_progress_events_then_result_and_cancel_by_closing(tmp_path):
    src = write_lines(tmp_path / "de.txt", GERMAN)
    tgt = write_lines(tmp_path / "en.txt", ENGLISH)
    events = list(iter_mine_documents(src, tgt, TranslationEncoder(), MiningOptions(**LANGS)))
    assert all(isinstance(e, MiningProgress) for e in events[:-1])
    assert isinstance(events[-1], MiningFinished) and len(events[-1].result.pairs) == 8
    stages = [e.stage for e in events[:-1]]
    assert (stages.index("language means") < stages.index("encode source") < stages.index("search source")
            < stages.index("search target"))

    encoder = TranslationEncoder()
    run = iter_mine_documents(src, tgt, encoder, MiningOptions(**LANGS))
    for event in run:
        if event.stage == "encode source":
            break
    run.close()  # the caller cancels: nothing more is encoded
    assert document_texts(encoder) == GERMAN


def test_read_sentences_lines_tsv_and_prose(tmp_path):
    tsv = tmp_path / "pud.tsv"
    tsv.write_text("n1\tErster Satz.\nn2\tZweiter Satz mit\tTab.\n\n", encoding="utf-8")
    assert read_sentences(tsv) == ["Erster Satz.", "Tab."]
    listing = write_lines(tmp_path / "list.txt", GERMAN[:3])
    assert read_sentences(listing) == GERMAN[:3]
    prose = tmp_path / "prose.txt"
    prose.write_text("Erster Satz. Zweiter Satz.\nDritter Satz. Vierter.\n\nNeuer Absatz hier.", encoding="utf-8")
    assert read_sentences(prose) == [
        "Erster Satz.", "Zweiter Satz.", "Dritter Satz.", "Vierter.", "Neuer Absatz hier."
    ]
    assert read_sentences(prose, lines=True) == ["Erster Satz. Zweiter Satz.", "Dritter Satz. Vierter.", "Neuer Absatz hier."]
    with pytest.raises(InputError, match="--lines"):
        read_sentences(tmp_path / "x.pdf", lines=True)


def test_empty_side_is_a_clear_error(tmp_path):
    src = write_lines(tmp_path / "de.txt", GERMAN)
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises((InputError, ExtractionError), match="empty"):
        mine_documents(src, empty, TranslationEncoder(), MiningOptions(**LANGS))
    with pytest.raises(InputError, match="no sentences"):
        mine_sentences(GERMAN, [], TranslationEncoder(), MiningOptions(**LANGS))


def test_one_language_on_both_sides_is_refused_unless_allowed():
    # Detected languages: both German.
    with pytest.raises(InputError, match="same language .de."):
        mine_sentences(GERMAN[:4], GERMAN[4:], TranslationEncoder())
    result = mine_sentences(GERMAN, ENGLISH, TranslationEncoder(), MiningOptions(allow_same_language=True, src_lang="en", tgt_lang="en"))
    assert len(result.pairs) == 8


def test_binary_file_is_a_clear_error(tmp_path):
    binary = tmp_path / "data.txt"
    binary.write_bytes(bytes(range(256)) * 40)
    src = write_lines(tmp_path / "de.txt", GERMAN)
    with pytest.raises(ExtractionError, match="binary"):
        mine_documents(src, binary, TranslationEncoder(), MiningOptions(**LANGS))
    with pytest.raises(ExtractionError, match="binary"):
        mine_documents(src, binary, TranslationEncoder(), MiningOptions(lines=True, **LANGS))


def test_bad_options_are_input_errors():
    for bad in (dict(margin="cos"), dict(mode="all"), dict(align="yes"), dict(k=0), dict(space="centred")):
        with pytest.raises(InputError):
            MiningOptions(**bad)


# ---- output files -------------------------------------------------------------------

ROWS = [
    (1.2345, "Größe <b> & \"Zitat\" 'x'", "Size <b> & \"quote\" 'x'"),
    (1.1, "Tab\there, line\nbreak, back\\slash", "Zeile\r\nzwei\x07"),
    (1.05, "日本語の文。", "عربى"),
]


def test_tsv_round_trip_keeps_tabs_newlines_and_backslashes(tmp_path):
    path = write_pairs(tmp_path / "pairs.tsv", ROWS)
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) == 3 and all(line.count("\t") == 2 for line in text.splitlines())
    assert read_tsv(path) == [(pytest.approx(s, abs=1e-4), a, b) for s, a, b in ROWS]
    assert tsv_text([(1.0, "a", "b")]) == "1.0000\ta\tb\n"


def test_tmx_is_valid_tmx_1_4_and_parses_back(tmp_path):
    path = write_pairs(tmp_path / "pairs.tmx", ROWS, src_lang="de", tgt_lang="en")
    root = ET.parse(path).getroot()
    assert root.tag == "tmx" and root.get("version") == "1.4"
    header = root.find("header")
    for attr, value in {
        "creationtool": "Babelfind", "srclang": "de", "adminlang": "en",
        "segtype": "sentence", "o-tmf": "Babelfind", "datatype": "plaintext",
    }.items():
        assert header.get(attr) == value
    assert header.get("creationtoolversion") and header.get("creationdate")
    tus = root.findall("body/tu")
    assert len(tus) == 3
    xml_lang = "{http://www.w3.org/XML/1998/namespace}lang"
    for tu in tus:
        tuvs = tu.findall("tuv")
        assert [t.get(xml_lang) for t in tuvs] == ["de", "en"]
        assert all(t.find("seg") is not None for t in tuvs)
    rows, src_lang, tgt_lang = read_tmx(path)
    assert (src_lang, tgt_lang) == ("de", "en")
    assert rows[0] == (pytest.approx(1.2345), ROWS[0][1], ROWS[0][2])
    assert rows[1][2] == "Zeile\nzwei"  # XML normalises CR LF; the bell character is dropped
    assert rows[2][1:] == ROWS[2][1:]
    assert b"xml:lang" in path.read_bytes()


def test_unknown_output_format_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match=r"\.tsv or \.tmx"):
        write_pairs(tmp_path / "pairs.csv", ROWS)
