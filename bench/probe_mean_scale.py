"""How much of each language's mean to take out, and two other changes to the
language-neutral space: an offline probe (issue 28, docs/benchmarks.md "How much of the
language mean").

Search compares `normalise(v - m_L)`: a passage's vector less its language's passage mean,
a query's less its language's query mean (engine/index/language_means.py). This probe
scales both offsets, `normalise(v - g * m_L)`, g_p for passages and g_q for queries (the
hubness reference queries move with g_q), and ranks every dev set's documents exactly in
numpy as search's dense part does: `(1 - w) cos(q, p) + w cos(q, c_D)` less the hubness
offset of the query's language, a document ranked by its best passage. No keywords: the
sentence questions of these sets earn almost nothing from them (docs/search.md).

    BABELFIND_TEST_MODELS=<models> OMP_NUM_THREADS=2 python bench/probe_mean_scale.py \
        --devsets xling manual5 english-doc faq4 mixed stsb reference6 --scales 1:1 0.8:0.8 1.2:1.2 1.2:1 \
        --query-mix 0.75 0.5 --centring 20:1 100:0.5

Each scale is g_p:g_q; 1:1 is the product's space, always read first. `--query-mix a`: the
question as `a` times its query encoding plus `1 - a` times its passage encoding, each
less its own language mean. `--centring K:s`: each question's scores less `s` times how far
each passage language's mean score stands above the question's mean over the library,
shrunk toward it by K pseudo-passages. `--betas b`: the hubness correction at strength b
instead of the product's 0.5. It reports top-1 / MRR@10 per set and the
questions whose rank moved.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_search  # noqa: E402  (puts the checkout on sys.path)

from engine.index.document_context import DocumentContextConfig  # noqa: E402
from engine.index.hubness import HubnessConfig, HubnessPenalties, passage_penalties, reference_vectors  # noqa: E402
from engine.langid import detect_language  # noqa: E402
from engine.encoders.base import l2_normalise  # noqa: E402


class Home:
    """One dev-set home's vectors as encoded, with everything the scale changes."""

    def __init__(self, devset: str):
        library, _ = bench_search.open_home(devset, "filtered", bench_search.DEFAULT_MODEL)
        self.queries = bench_search.load_queries(devset)
        self.expected = [bench_search.acceptable(q) for q in self.queries]
        self.query_languages = [detect_language(q["query"]) for q in self.queries]
        generation = library.live.generation
        parts = list(library.store.iter_vectors(generation.id, generation.dim))
        ids = np.concatenate([p[0] for p in parts])
        rows = library.store.passages(ids.tolist())
        self.vectors = np.concatenate([p[1] for p in parts]).astype(np.float32)
        languages = [rows[int(i)].language for i in ids]
        self.paths = [bench_search._relative(rows[int(i)].path) for i in ids]
        _, self.language_of = np.unique(np.array([lang or "" for lang in languages]), return_inverse=True)
        encoder, live = library.encoder, library.live
        live.ensure_corrections(encoder, passage_languages=languages)
        self.reference, self.reference_languages = reference_vectors(encoder)
        means = live.means
        for language in set(self.query_languages) | set(self.reference_languages):
            means.ensure(encoder, [language], "query")
        self.passage_offsets = means.offsets(languages, "passage")
        self.query_offsets = means.offsets(self.query_languages, "query")
        self.reference_offsets = means.offsets(self.reference_languages, "query")
        self.raw_queries = bench_search.query_vectors(library, devset, self.queries).astype(np.float32)
        # the same questions encoded as passages (e5's `passage: ` prefix), for --query-mix
        self.queries_as_passages = np.vstack([encoder.encode([q["query"]], kind="passage") for q in self.queries])
        for language in set(self.query_languages):
            means.ensure(encoder, [language], "passage")
        self.query_passage_offsets = means.offsets(self.query_languages, "passage")
        _, self.document_of = np.unique(np.array(self.paths), return_inverse=True)
        library.close()

    def ranks(self, passage_scale: float, query_scale: float, query_mix: float = 1.0,
              centring: tuple[float, float] = (0.0, 0.0), beta: float | None = None) -> list[int | None]:
        passages = l2_normalise(self.vectors - passage_scale * self.passage_offsets)
        queries = l2_normalise(self.raw_queries - query_scale * self.query_offsets)
        if query_mix < 1.0:
            as_passages = l2_normalise(self.queries_as_passages - passage_scale * self.query_passage_offsets)
            queries = l2_normalise(query_mix * queries + (1 - query_mix) * as_passages)
        reference = l2_normalise(self.reference - query_scale * self.reference_offsets)
        cosines = queries @ passages.T
        sums = np.zeros((self.document_of.max() + 1, passages.shape[1]), np.float32)
        np.add.at(sums, self.document_of, passages)
        centroids = l2_normalise(sums)[self.document_of]
        weight = DocumentContextConfig().weight
        scores = (1 - weight) * cosines + weight * (queries @ centroids.T)
        config = HubnessConfig() if beta is None else HubnessConfig(beta=beta)
        hub = HubnessPenalties(reference, self.reference_languages, config)
        groups = [np.flatnonzero(np.asarray(self.reference_languages) == lang) for lang in hub.languages]
        penalties = passage_penalties(passages, reference, groups, config.k)  # [n, L]
        weights = np.stack([hub.column_weights(lang) for lang in self.query_languages])  # [q, L]
        scores -= config.beta * (weights @ penalties.T - (weights @ hub.baselines)[:, None])
        if centring[1]:
            scores = self.centred(scores, *centring)
        return bench_search.ranks(scores, self.paths, self.expected)


    def centred(self, scores: np.ndarray, shrink: float, strength: float) -> np.ndarray:
        """Each query's scores less `strength` times how far the mean score of each passage
        language stands above the query's mean over all passages, that language's mean
        shrunk toward the overall one by `shrink` pseudo-passages."""
        overall = scores.mean(axis=1, keepdims=True)  # [q, 1]
        counts = np.bincount(self.language_of).astype(np.float32)  # [G]
        sums = np.stack([np.bincount(self.language_of, weights=row) for row in scores])  # [q, G]
        shrunk = (sums + shrink * overall) / (counts + shrink)
        return scores - strength * (shrunk - overall)[:, self.language_of]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devsets", nargs="+", default=["xling", "manual5", "english-doc", "faq4", "mixed"])
    parser.add_argument("--scales", nargs="+", default=["1:1", "0.8:0.8", "1.2:1.2"],
                        help="g_p:g_q, the share of the passage and the query language mean taken out")
    parser.add_argument("--query-mix", type=float, nargs="*", default=[],
                        help="a: the query as a * (encoded as a query) + (1 - a) * (encoded as a passage), "
                             "each in its own language-neutral space, at the scale 1:1")
    parser.add_argument("--betas", type=float, nargs="*", default=[],
                        help="the hubness correction's strength instead of the product's, at the scale 1:1")
    parser.add_argument("--centring", nargs="*", default=[],
                        help="shrink:strength: each passage language's mean score for the query taken out")
    args = parser.parse_args(argv)
    scales = (["1:1"] + [s for s in args.scales if s != "1:1"] + [f"mix{a}" for a in args.query_mix]
              + [f"centre{c}" for c in args.centring] + [f"beta{b}" for b in args.betas])
    for devset in args.devsets:
        home = Home(devset)
        readings, default = [], None
        for value in scales:
            if value.startswith("beta"):
                found = home.ranks(1.0, 1.0, beta=float(value[4:]))
            elif value.startswith("centre"):
                shrink, strength = (float(x) for x in value[6:].split(":"))
                found = home.ranks(1.0, 1.0, centring=(shrink, strength))
            elif value.startswith("mix"):
                found = home.ranks(1.0, 1.0, float(value[3:]))
            else:
                passage_scale, query_scale = (float(x) for x in value.split(":"))
                found = home.ranks(passage_scale, query_scale)
            summary = bench_search.summarise(found)
            readings.append(f"{value}: {summary['top1']:.3f} / {summary['mrr10']:.3f}")
            default = default or found
            moved = [(q["query"][:50], was, now) for q, was, now in zip(home.queries, default, found) if was != now]
            if moved:
                print(f"  {devset} {value} moved (query, rank at 1:1, rank): {moved}", flush=True)
        print(f"{devset} | " + " | ".join(readings), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
