"""The small text helpers behind the progress row and the result cards."""

from __future__ import annotations

from app.gui.search.qt_indexing import duration_text, progress_text, summary_text
from app.gui.search.qt_results_view import focus_snippet, snippet_html
from engine.events import IndexProgress, IndexSummary, SkippedFile
from engine.highlight import match_spans
from engine.query import parse_query


def test_progress_text_shows_counts_rate_and_eta():
    assert progress_text(IndexProgress(3, 10, 42, 21.5, 4.7)) == (
        "3 / 10 files  ·  42 passages  ·  22 passages/s  ·  about 5 s left"
    )
    # passages encoded count before they are stored: a large file's count moves
    assert progress_text(IndexProgress(3, 10, 42, 1.5, 90, encoded=300)) == (
        "3 / 10 files  ·  300 passages  ·  1.5 passages/s  ·  about 1 min 30 s left"
    )
    # no rate or ETA yet: only what is known
    assert progress_text(IndexProgress(0, 1200, 0, 0.0, None)) == (
        "0 / 1,200 files  ·  0 passages  ·  estimating the time left"
    )
    # the last event claims no time left: there is none
    assert progress_text(IndexProgress(80, 80, 900, 4.0, 0.0)) == "80 / 80 files  ·  900 passages  ·  4.0 passages/s"


def test_model_switch_progress_counts_passages_not_files():
    event = IndexProgress(512, 1525, 512, 40.0, 25.3, "re-encoding with other", unit="passages")
    assert progress_text(event) == "512 / 1,525 passages  ·  40 passages/s  ·  about 25 s left"


def test_duration_text_picks_readable_units():
    assert [duration_text(s) for s in (0, 4.2, 75, 3 * 3600 + 120)] == ["0 s", "4 s", "1 min 15 s", "3 h 2 min"]


def test_summary_text_names_only_what_happened():
    summary = IndexSummary(indexed=12, unchanged=3, skipped=(SkippedFile("/a.pdf", "damaged"),), passages=340)
    assert summary_text(summary) == "Indexed 12 files (340 passages), 3 unchanged, 1 skipped"
    assert summary_text(IndexSummary(indexed=1, passages=2, cancelled=True)).endswith("cancelled, what was done is kept")
    assert summary_text(IndexSummary(removed=1)) == "Removed 1 document"
    assert summary_text(IndexSummary(removed=3)) == "Removed 3 documents"
    assert summary_text(IndexSummary(indexed=2, passages=4, removed=1)) == "Indexed 2 files (4 passages), 1 removed"


def query_spans(snippet: str, query: str) -> list[tuple[int, int]]:
    """What the results list marks in a snippet for the search box text `query`."""
    return match_spans(snippet, parse_query(query).highlight)


def test_query_spans_mark_whole_words_only():
    snippet = "Honey bees collect nectar; a beekeeper sells honey."
    spans = query_spans(snippet, "bees NECTAR a")
    assert [snippet[s:e] for s, e in spans] == ["bees", "nectar"]
    assert query_spans("Der Zug fährt", "train") == []  # another language: nothing to mark
    assert query_spans("the bees and the hive", "why are the bees") == [(4, 8)]  # no function words
    red = "Red Hat may redistribute the red paint."
    assert [red[s:e] for s, e in query_spans(red, "red")] == ["Red", "red"]


def test_query_spans_keep_identifiers_intact_and_match_phrases_and_accents():
    text = "Call ffi_prep_closure_loc() for FA-2024-5521; the Größe of a red wine, wine red."
    assert [text[s:e] for s, e in query_spans(text, "ffi_prep_closure_loc")] == ["ffi_prep_closure_loc"]
    assert [text[s:e] for s, e in query_spans(text, "closure")] == ["closure"]
    assert [text[s:e] for s, e in query_spans(text, "fa-2024-5521 grosse")] == ["FA-2024-5521", "Größe"]
    assert [text[s:e] for s, e in query_spans(text, '"red wine" -paint lang:en')] == ["red wine"]


def test_snippet_html_escapes_and_marks():
    html = snippet_html("a <b> c", [(2, 5)], "#ff0")
    assert html == 'a <span style="background-color:#ff0; font-weight:600">&lt;b&gt;</span> c'
    # spans outside the text or overlapping are left unmarked rather than garbled
    assert snippet_html("abc", [(1, 9), (0, 2), (1, 3)], "#ff0").count("<span") == 1


def test_focus_snippet_moves_the_first_mark_into_view_and_keeps_spans_aligned():
    snippet = "word " * 40 + "honey bees here"
    spans = query_spans(snippet, "honey")
    focused, moved = focus_snippet(snippet, spans)
    assert focused.startswith("…") and len(focused) < len(snippet)
    assert [focused[s:e] for s, e in moved] == ["honey"]
    assert moved[0][0] <= 41
    short = "honey at the start"
    assert focus_snippet(short, query_spans(short, "honey")) == (short, [(0, 5)])
