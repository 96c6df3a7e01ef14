"""Hubness correction of dense scores: no passage wins just by being close to everything.

    >>> penalties = HubnessPenalties(*reference_vectors(encoder), HubnessConfig(k=5, beta=0.5))
    >>> penalties.add(ids, vectors)                            # at index time, per passage
    >>> scores, ids = penalties.correct(scores, ids, "en")     # at search time, re-ranked

In a sentence-embedding space some vectors sit near the centre of the data and are among
the nearest neighbours of almost every query ("hubs"): a table-of-contents fragment, a
copyright block, a list of command-line options. Issue 11 measured such passages at
cosine 0.86 against every query while the right answer scored 0.81. Bitext mining
corrects this with margin scores (engine/mining/margin.py); here the same idea is
applied one-sidedly, as in CSLS (Lample et al., 2018):

    penalty r_p(L) = mean cosine of passage p to its k nearest reference queries in language L
    score(q, p)    = cos(q, p) - beta * (r_p(L) - r_0(L)),   L = the query's language

The reference queries are a fixed set of short query-like sentences, 40 in each of 16
languages (the query-like rows of the shipped reference sentences, engine/index/
language_means.py and docs/data.md), encoded once per index generation with the
generation's own model. The penalty is measured per language
because a passage's nearest references are mostly in its own language: one pooled
neighbourhood measured "how English is this passage" as much as "how close to every
query", and cost English queries their foreign-language answers (docs/benchmarks.md,
"Search quality"). A query whose language is unknown or not in the set (an invoice
number) uses the mean over all languages. r_0(L), the reference queries' own mean
k-NN cosine in L, only shifts scores back towards the usual cosine range.

Because r_p depends only on p's vector and that fixed set, it is computed once when the
passage is indexed, never changes while other documents come and go, and can be
recomputed from the stored vectors at any time. The penalties live in a side file beside
the FAISS file, `generation-<id>.hubness.npz`, stamped with the generation's database
version like the FAISS file: a missing, damaged or stale file is rebuilt from the stored
vectors, never trusted.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from engine.atomic import atomic_file
from engine.repairs import move_aside, repaired
from engine.errors import InputError
from engine.index.language_means import query_like_sentences
from engine.index.reference_encodings import encode_reference
from engine.index.sorted_changes import merge_changes, worth_merging

log = logging.getLogger(__name__)

FORMAT_VERSION = 2
# The languages the penalty is measured in (a query in another one averages them): many
# scripts and families, as many queries each, so no language dominates the neighbourhoods.
REFERENCE_LANGUAGES = ("ar", "de", "en", "es", "fr", "hi", "it", "ja", "ko", "nl", "pl", "pt", "ru", "sv",
                       "tr", "zh")
QUERIES_PER_LANGUAGE = 40
_CHUNK_ROWS = 4096  # passages scored against the reference per matrix product


@dataclass(frozen=True)
class HubnessConfig:
    """How strongly closeness to everything is held against a passage.

    Chosen on the cross-lingual STS-B dev set and confirmed on the mixed-folder and the
    invoice dev sets (bench/bench_search.py; docs/benchmarks.md "Search quality").
    """

    # Reference queries averaged per passage and language (of 40): small k measures the
    # nearest queries only; past ~20 the penalty flattens towards closeness to the centre.
    k: int = 5
    # Weight of the penalty; 0 turns the correction off (plain cosine). Above ~0.75 it
    # starts to cost cross-lingual answers their rank (the STS-B set drops below cosine).
    beta: float = 0.5

    def __post_init__(self) -> None:
        if not isinstance(self.k, int) or isinstance(self.k, bool) or self.k < 1:
            raise InputError(f"hubness k must be an int >= 1, got {self.k!r}")
        if not isinstance(self.beta, (int, float)) or not 0.0 <= self.beta <= 4.0:
            raise InputError(f"hubness beta must be a number in [0, 4], got {self.beta!r}")


class QueryEncoder(Protocol):
    def encode(self, texts: list[str], kind: str = ...) -> np.ndarray: ...


def reference_entries() -> list[tuple[str, str]]:
    """(ISO 639-1 language, sentence) per reference query, `QUERIES_PER_LANGUAGE` in each
    of `REFERENCE_LANGUAGES`."""
    return [(language, sentence) for language in REFERENCE_LANGUAGES
            for sentence in query_like_sentences(language)[:QUERIES_PER_LANGUAGE]]


def reference_texts() -> list[str]:
    """The reference sentences alone, in file order."""
    return [sentence for _, sentence in reference_entries()]


def reference_vectors(encoder: QueryEncoder) -> tuple[np.ndarray, list[str]]:
    """The reference sentences encoded as queries, float32 [R, dim], and their languages [R]."""
    vectors = encode_reference(encoder, reference_texts(), "query")
    return np.ascontiguousarray(vectors, np.float32), [language for language, _ in reference_entries()]


def reference_digest(reference: np.ndarray, languages: list[str]) -> str:
    """Identifies a reference set (the model and the sentences both change the vectors)."""
    digest = hashlib.sha256(np.ascontiguousarray(reference, np.float32).tobytes())
    digest.update("\n".join(languages).encode())
    return digest.hexdigest()[:16]


def texts_digest() -> str:
    """Identifies the reference sentences; a file measured on other sentences is re-encoded."""
    return hashlib.sha256(repr(reference_entries()).encode()).hexdigest()[:16]


def _knn_mean(sims: np.ndarray, k: int) -> np.ndarray:
    """Mean of the k largest values per row. sims: [n, m] -> [n]."""
    k = min(k, sims.shape[1])
    return np.partition(sims, sims.shape[1] - k, axis=1)[:, -k:].mean(axis=1)


def passage_penalties(vectors: np.ndarray, reference: np.ndarray, groups: list[np.ndarray],
                      k: int) -> np.ndarray:
    """r_p(L) for each vector and reference group (language): float32 [n, len(groups)].

    Example: passage_penalties(v, ref, [np.arange(40), np.arange(40, 80)], k=5)[:, 0]
    is each vector's mean cosine to its 5 nearest among the first 40 references.
    """
    vectors = np.asarray(vectors, np.float32)
    if vectors.ndim != 2 or vectors.shape[1] != reference.shape[1]:
        raise InputError(f"vectors must be [n, {reference.shape[1]}], got {vectors.shape}")
    out = np.empty((len(vectors), len(groups)), np.float32)
    for first in range(0, len(vectors), _CHUNK_ROWS):
        sims = vectors[first : first + _CHUNK_ROWS] @ reference.T  # [chunk, R]
        for column, rows in enumerate(groups):
            out[first : first + len(sims), column] = _knn_mean(sims[:, rows], k)
    return out


def reference_baselines(reference: np.ndarray, groups: list[np.ndarray], k: int) -> np.ndarray:
    """r_0(L): the mean k-NN cosine of L's reference queries to the others of L: [len(groups)]."""
    out = np.zeros(len(groups), np.float32)
    for column, rows in enumerate(groups):
        if len(rows) < 2:
            continue
        sims = reference[rows] @ reference[rows].T
        np.fill_diagonal(sims, -np.inf)
        out[column] = _knn_mean(sims, min(k, len(rows) - 1)).mean()
    return out


class HubnessPenalties:
    """r_p(L) for every passage of one generation, with the reference it was measured on.

    Ids are kept in a sorted base array plus a small dictionary of recent changes that
    is folded in when it grows, so adding a batch costs O(batch) and a lookup O(log n).
    Values are float32 [n, languages] (64 bytes a passage for 16 languages): float16
    would halve that, but near-identical documents (invoices that differ in one number)
    differ by less than its 5e-4 resolution near 0.8 and were re-ordered by the rounding.
    """

    def __init__(self, reference: np.ndarray, languages: list[str],
                 config: HubnessConfig = HubnessConfig(),
                 ids: np.ndarray | None = None, values: np.ndarray | None = None):
        reference = np.ascontiguousarray(reference, np.float32)
        if reference.ndim != 2 or len(reference) == 0 or len(languages) != len(reference):
            raise InputError(f"reference must be a non-empty [R, dim] array with R languages, "
                             f"got {reference.shape} and {len(languages)} languages")
        self.reference, self.reference_languages, self.config = reference, list(languages), config
        self.languages = list(dict.fromkeys(languages))  # one penalty column each, file order
        self._groups = [np.flatnonzero(np.asarray(languages) == lang) for lang in self.languages]
        self.baselines = reference_baselines(reference, self._groups, config.k)
        width = len(self.languages)
        order = np.argsort(ids) if ids is not None else slice(None)
        self._ids = np.asarray(ids if ids is not None else [], np.int64)[order]
        self._values = np.asarray(values if values is not None else np.empty((0, width)), np.float32)[order]
        self._recent: dict[int, np.ndarray | None] = {}  # id -> penalties (None: removed)
        # The indexing thread adds and removes while a search thread looks penalties up.
        self._lock = threading.RLock()

    @property
    def dim(self) -> int:
        return int(self.reference.shape[1])

    def __len__(self) -> int:
        with self._lock:
            self._fold()
            return len(self._ids)

    # ---- incremental changes ----------------------------------------------------------

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Measures and stores the penalties of new (or re-encoded) passages."""
        ids = np.asarray(ids, np.int64)
        if len(ids) == 0:
            return
        if len(ids) != len(vectors):
            raise InputError(f"{len(ids)} ids for {len(vectors)} vectors")
        values = passage_penalties(vectors, self.reference, self._groups, self.config.k).astype(np.float32)
        with self._lock:
            self._recent.update(zip(ids.tolist(), values))
            self._fold_if_large()

    def remove(self, ids: np.ndarray) -> None:
        """Forgets removed passages; unknown ids are ignored."""
        with self._lock:
            self._recent.update((int(i), None) for i in np.asarray(ids, np.int64).tolist())
            self._fold_if_large()

    def lookup(self, ids: np.ndarray) -> np.ndarray:
        """Penalties for `ids` [m]: float32 [m, languages]; NaN rows for unknown ids."""
        flat = np.asarray(ids, np.int64).ravel()
        out = np.full((len(flat), len(self.languages)), np.nan, np.float32)
        with self._lock:
            if len(self._ids):
                at = np.clip(np.searchsorted(self._ids, flat), 0, len(self._ids) - 1)
                found = self._ids[at] == flat
                out[found] = self._values[at[found]]
            for position, pid in enumerate(flat.tolist() if self._recent else ()):
                if pid in self._recent:
                    recent = self._recent[pid]
                    out[position] = np.nan if recent is None else recent
        return out

    def ids(self) -> np.ndarray:
        """Every passage id with a penalty, sorted ascending."""
        with self._lock:
            self._fold()
            return self._ids.copy()

    def _fold_if_large(self) -> None:
        if worth_merging(self._recent, len(self._ids)):
            self._fold()

    def _fold(self) -> None:
        """Merges recent changes into the sorted base arrays; the caller holds the lock."""
        if not self._recent:
            return
        self._ids, self._values = merge_changes(self._ids, self._values, self._recent)
        self._recent = {}

    # ---- search ---------------------------------------------------------------------

    def column_weights(self, language: str | None) -> np.ndarray:
        """Which penalty columns a query in `language` uses: one-hot, or uniform when unknown."""
        weights = np.zeros(len(self.languages), np.float32)
        if language in self.languages:
            weights[self.languages.index(language)] = 1.0
        else:
            weights[:] = 1.0 / len(self.languages)
        return weights

    def offsets(self, ids: np.ndarray, language: str | None = None) -> np.ndarray:
        """beta * (r_p(L) - r_0(L)) per id, float32 [n]: what to subtract from its cosine.

        An id without a penalty (a search racing an add, a padding -1) gets 0: no
        correction at all rather than a reward.
        """
        flat = np.asarray(ids, np.int64).ravel()
        if self.config.beta == 0.0 or len(flat) == 0:
            return np.zeros(len(flat), np.float32)
        weights = self.column_weights(language)
        penalty = self.lookup(flat) @ weights  # NaN for an id with no penalty
        offsets = self.config.beta * (penalty - float(self.baselines @ weights))
        return np.nan_to_num(offsets, nan=0.0).astype(np.float32)

    def correct(self, scores: np.ndarray, ids: np.ndarray,
                language: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Scores minus beta * (r_p(L) - r_0(L)) for the query language L, re-sorted best first.

        Args:
            scores: float32 [m, k] cosines from the vector index; -inf where ids is -1.
            ids: int64 [m, k] passage ids.
            language: the query's ISO 639-1 code; None (or one without references)
                averages the penalty over all reference languages.
        Returns:
            (scores, ids), both [m, k]: corrected and re-ordered; padding stays last.
        """
        if self.config.beta == 0.0 or scores.size == 0:
            return scores, ids
        corrected = scores - self.offsets(ids, language).reshape(ids.shape)
        corrected = np.where(ids < 0, -np.inf, corrected).astype(np.float32)
        order = np.argsort(-corrected, axis=1, kind="stable")
        return np.take_along_axis(corrected, order, axis=1), np.take_along_axis(ids, order, axis=1)

    # ---- the side file ----------------------------------------------------------------

    def save(self, path: Path, generation: int, space: str) -> None:
        """Writes the penalties atomically, stamped with the generation's database version
        and the `space` of the vectors they were measured on (engine.index.live_index)."""
        with self._lock:
            self._fold()
            ids, values = self._ids, self._values
        meta = {"format": FORMAT_VERSION, "generation": int(generation), "k": self.config.k,
                "dim": self.dim, "count": len(ids), "languages": self.reference_languages,
                "reference": reference_digest(self.reference, self.reference_languages),
                "texts": texts_digest(), "space": space}
        move_aside(Path(path))  # a folder there would fail the rename at the end
        with atomic_file(Path(path)) as f:  # the window and the CLI may save it at once
            np.savez(f, ids=ids, values=values, reference=self.reference,
                     meta=np.frombuffer(json.dumps(meta).encode(), np.uint8))

    @classmethod
    def load(cls, path: Path, *, expected_generation: int, dim: int, space: str,
             config: HubnessConfig = HubnessConfig()
             ) -> tuple[HubnessPenalties | None, tuple[np.ndarray, list[str]] | None]:
        """(penalties, (reference, languages)) from a saved file.

        Penalties are None when the file is missing, damaged, of another generation
        version, dim or k; the reference survives a stale version or another k (it
        depends on the model only), so a rebuild needs no encoder. Both are None for a
        missing or bad file, or one measured on other reference sentences or in another
        vector `space` (the reference queries are in that space too).
        """
        try:
            with np.load(Path(path), allow_pickle=False) as data:
                meta = json.loads(data["meta"].tobytes().decode())
                ids, values, reference = data["ids"], data["values"], data["reference"]
        except FileNotFoundError:
            return None, None
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, UnicodeDecodeError) as e:
            repaired("the hubness file %s is damaged (%s); the penalties are measured again", path, e)
            return None, None
        languages = meta.get("languages")
        if (meta.get("format") != FORMAT_VERSION or reference.ndim != 2 or reference.shape[1] != dim
                or not isinstance(languages, list) or len(languages) != len(reference)
                or meta.get("reference") != reference_digest(reference, languages)
                or len(ids) != len(values) or len(ids) != meta.get("count")):
            repaired("the hubness file %s is inconsistent; the penalties are measured again", path)
            return None, None
        if meta.get("texts") != texts_digest() or meta.get("space") != space:
            return None, None  # other reference sentences (a newer app), or vectors of another form
        if meta.get("generation") != expected_generation or meta.get("k") != config.k:
            return None, (reference, languages)
        penalties = cls(reference, languages, config, ids, values)
        if penalties._values.shape != (len(ids), len(penalties.languages)):
            repaired("the hubness file %s is inconsistent; the penalties are measured again", path)
            return None, (reference, languages)
        return penalties, (reference, languages)
