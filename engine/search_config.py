"""Where the relevance floor lies and how keyword and dense evidence combine: one config.

    >>> library.search_results("walrus", config=SearchConfig(weak_below=0.5))

Read by the search (engine.search) and by the fusion of scores (engine.index.fusion);
docs/search.md and docs/benchmarks.md ("Search quality") measure each value.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SearchConfig:
    """Where the relevance floor lies and how keyword and dense evidence combine."""

    # A passage matches by meaning when its z reaches min_meaning_z, and the smaller of
    # (best z - meaning_gap) and (best z * meaning_ratio): "far below the best" is cut.
    # Measured on the sample corpus (docs/search.md): in a small collection the topic's
    # passage stands 2.4-3.3 deviations out, a nonsense query's best 2.0-2.7, so the
    # floor keeps what is close to the best rather than trusting an absolute z.
    min_meaning_z: float = 1.5
    meaning_gap: float = 1.0
    meaning_ratio: float = 0.6
    # A passage matches by keywords when its BM25 share reaches this. One occurrence of
    # a word earns about 0.45 of that word's share of the bound, so 0.1 is one of four
    # equally rare query words; common words (idf near 0) add nearly nothing.
    min_keyword_share: float = 0.1
    # Weight of the BM25 share against z / z_best (1 for the best dense passage): an
    # identifier found whole (share ~0.4) outweighs the dense spread of near-identical
    # documents; docs/search.md gives the measurements.
    keyword_weight: float = 3.0
    # For a query in a recognised language that names no identifier (is_sentence),
    # partial keyword matches count for almost nothing (engine.index.fusion.keyword_bonus):
    # the share is multiplied by (share / keyword_full_share) ** sentence_keyword_power
    # below a full match, and weighs sentence_keyword_weight. Measured on all three dev
    # sets (docs/benchmarks.md, "Search quality"): cross-lingual STS-B fused goes from
    # 0.447 (3 x share) to 0.597, equal to dense, and the invoices (1.000) and the mixed
    # folder (0.886) stay.
    keyword_power: float = 0.0  # the same for other queries: identifiers keep full weight
    sentence_keyword_power: float = 8.0
    sentence_keyword_weight: float = 1.0
    keyword_full_share: float = 0.45  # share of a passage holding every query word once
    # Dense candidates fetched at first; doubled while the last is still above the floor.
    dense_fetch: int = 256
    # Matches counted at most per retrieval: past this a query of common words ("the
    # report") has matched a large part of the collection, and counting all of them
    # would cost more than the search; the count then reads "at least".
    max_counted: int = 4000
    # Keyword candidates that also get their exact cosine (the best by BM25 share).
    cosine_rescored: int = 256
    # A matching document is a weaker match, shown apart and left out of `total`, when its
    # best passage scores below this share of the best passage's score (z / z_best in
    # dense mode, whose scores are cosines). bench/bench_search.py measures it.
    weak_below: float = 0.6
    # Every match is weaker when nothing answers the query (unanswered_query): not one
    # of its words occurs anywhere in the collection and its language is unknown.
    # (The best z does not tell: with e5-small a nonsense query's best passage stands
    # 3.5 deviations out, a real question's as little as 2.4; docs/benchmarks.md.)
    weak_when_unanswered: bool = True
    # Every match is weaker, too, when no passage comes near the query: its best dense
    # score (language-neutral cosine less the hubness penalty) is under `answer_floor` and
    # no passage holds the query's words with a share of `keyword_answer_share` or more.
    # The z and the relative split cannot tell a question with no answer from one with:
    # the best of unrelated passages always stands out of its own crowd. A cosine level
    # is the encoder's own, so it is measured per model (ANSWER_FLOORS); None: no floor.
    answer_floor: float | None = None
    keyword_answer_share: float = 0.3
    # ... or when the best does not stand `answer_margin` above what ordinary sentences of
    # the query's language reach in this library (engine.search.reference_level: the 90th
    # percentile of the best each hubness reference query finds). A fixed floor cannot
    # know the library: in a folder of network manuals, "set a static IP address on my
    # network card" comes as near as a real question does elsewhere. None: no margin.
    answer_margin: float | None = None
    # Passages in the query's language are weaker matches when the query names something
    # no passage holds ("speed up a slow WordPress website" in a folder of Debian manuals):
    # an answer in its language would name it too (engine.search.unknown_names).
    weak_when_name_unknown: bool = True
    # ... and so is a passage in another language that writes names in Latin letters (Latin
    # script, or Latin words among another script) but none of those, not even respelt,
    # when its corrected cosine is under this floor (engine.index.name_spelling): such
    # languages keep a name or change a letter or two ("Brasil", "Kanada", "mexicana"), so
    # it speaks of something else ("build an RPM package for Fedora" against a German chapter
    # on Debian packages), unless it comes as near as a translation that names the thing
    # otherwise ("Keltische See" for "Celtic Sea"). A cosine level, measured per model
    # (NAME_ABSENT_FLOORS); None: passages in other languages keep their strength.
    name_absent_floor: float | None = None


# The answer floor and margin of each model measured (bench/bench_answer_floor.py --dump,
# bench/bench_search.py --configs; docs/benchmarks.md "No strong match"): the floor (0.43)
# keeps every answerable question's matches, wherever its answer ranks: a Spanish question
# whose best passage scores 0.430 has its answer fifth. The margin is 0.04 since passages
# carry their section's context (engine/passage_context.py), which brings ordinary
# sentences nearer too: with 0.02, 76 of 87 questions without an answer got no strong
# match, with 0.04, 81 (docs/benchmarks.md, "Section context in the index"). Measured in
# the default space (language-neutral, hubness k=5, beta=0.5), CPU int8 variant.
ANSWER_FLOORS = {"multilingual-e5-small": 0.43}
ANSWER_MARGINS = {"multilingual-e5-small": 0.04}
# The name floor of each model measured (bench/bench_search.py --configs, docs/benchmarks.md
# "Names nothing in the library mentions"): the highest that keeps every right first result
# of seven dev sets strong.
NAME_ABSENT_FLOORS = {"multilingual-e5-small": 0.59}


def meaning_floor(best_z: float, config: SearchConfig) -> float:
    """The z a passage needs to match by meaning, given the best passage's z.

    The best passage itself always passes: in a tiny collection, or behind a narrow
    filter, no z can be large (n passages allow at most sqrt(n - 1)), and the best of
    what the user narrowed down to is what they expect; a nonsense query returns that one.
    """
    floor = max(config.min_meaning_z, min(best_z - config.meaning_gap, config.meaning_ratio * best_z))
    return min(best_z, floor)
