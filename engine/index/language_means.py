"""Language-neutral dense scores: each language's mean vector taken out of passages and queries.

    >>> means = LanguageMeans(dim=384)
    >>> means.ensure(encoder, ["de", "fr", None], "passage")    # encodes what is missing, once
    >>> neutral = means.neutral(vectors, ["de", "fr", None], "passage")   # what FAISS holds
    >>> query = means.neutral(vector[None], ["en"], "query")[0]

A multilingual encoder puts a language's texts near each other whatever they say: every
vector carries an offset shared by its language (the "language neutrality" results of
Libovický et al., 2020). A French question then scores closer to any French passage than
to the German one that answers it. Subtracting the language's mean vector and
re-normalising (centering per language) removes most of that offset and leaves meaning;
docs/search.md and docs/benchmarks.md ("Language-neutral scores") measure it on every dev
set against plain cosine and the hubness correction.

The means are the mean vectors of a shipped set of ordinary sentences per language
(`reference_sentences.tsv`, 100+ languages, docs/data.md; never benchmark data), encoded
with the generation's own model: as passages for the passage side and as queries for the
query side (e5's "query: " prefix moves vectors too). They depend only on the model and
those sentences, so they are measured lazily, per language, the first time a passage or a
query of that language needs them, and kept in a side file beside the FAISS file. Text of
no detected language, or of a language the set lacks, uses a fixed global mean: the mean of
`GLOBAL_LANGUAGES`' means. Means of the library's own passages were measured too and lost
(a language's few documents are about a few topics, and their mean takes the topics out
with the language).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import zipfile
from collections.abc import Iterable, Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal, Protocol

import numpy as np

from engine.atomic import atomic_file
from engine.encoders.base import l2_normalise
from engine.errors import InputError
from engine.index.reference_encodings import encode_reference

log = logging.getLogger(__name__)

Kind = Literal["passage", "query"]
KINDS: tuple[Kind, ...] = ("passage", "query")
FORMAT_VERSION = 1
REFERENCE_FILE = "reference_sentences.tsv"
# Sentences averaged per language and side: 100 gave the same dev-set ranks as 300 (the
# mean of a language's vectors settles fast) at a third of the encoding, about a second
# per language on two CPU cores.
SENTENCES_PER_LANGUAGE = 100
# The global mean, for text of no known language (numbers, code, an invoice number as a
# query): the most used languages of many families and scripts, so that no one of them
# is the "default"; fixed, so the mean never moves.
GLOBAL_LANGUAGES = ("en", "es", "fr", "de", "pt", "ru", "ar", "hi", "zh", "ja", "tr", "vi")
GLOBAL_SENTENCES = 20  # per global language
GLOBAL = ""  # the key of the global mean


class TextEncoder(Protocol):
    name: str

    def encode(self, texts: list[str], kind: str = ...) -> np.ndarray: ...


@lru_cache(maxsize=1)
def _reference_rows() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(query-like sentences, other sentences) per language code, in file order. Rows are
    "code TAB q|s TAB source number TAB sentence" (bench/reference_sentences.py)."""
    text = resources.files("engine.index").joinpath(REFERENCE_FILE).read_text("utf-8")
    queries: dict[str, list[str]] = {}
    others: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.startswith("#") or line.count("\t") < 3:
            continue
        language, kind, _source, sentence = line.split("\t", 3)
        (queries if kind == "q" else others).setdefault(language, []).append(sentence)
    return queries, others


@lru_cache(maxsize=1)
def reference_sentences() -> dict[str, tuple[str, ...]]:
    """Language code -> its reference sentences, query-like ones first."""
    queries, others = _reference_rows()
    return {lang: tuple(queries.get(lang, []) + others.get(lang, []))
            for lang in dict.fromkeys([*queries, *others])}


def query_like_sentences(language: str) -> tuple[str, ...]:
    """The reference sentences of `language` that read like what people type into a
    search box (questions and requests), for the hubness reference queries."""
    return tuple(_reference_rows()[0].get(language, ()))


def reference_languages() -> frozenset[str]:
    return frozenset(reference_sentences())


@lru_cache(maxsize=1)
def reference_digest() -> str:
    """Identifies the reference sentences and how many are averaged: means measured on
    others are measured again."""
    digest = hashlib.sha256(repr(sorted(reference_sentences().items())).encode())
    digest.update(f"{SENTENCES_PER_LANGUAGE} {GLOBAL_LANGUAGES} {GLOBAL_SENTENCES}".encode())
    return digest.hexdigest()[:16]


def mean_key(language: str | None) -> str:
    """The mean a text of `language` is corrected by: its own, or the global one."""
    return language if language in reference_sentences() else GLOBAL


class LanguageMeans:
    """One generation's mean vectors per language and side, measured with its model."""

    def __init__(self, dim: int, means: dict[Kind, dict[str, np.ndarray]] | None = None):
        self.dim = int(dim)
        self._means: dict[Kind, dict[str, np.ndarray]] = {kind: dict((means or {}).get(kind, {}))
                                                          for kind in KINDS}
        self._lock = threading.Lock()  # an indexing thread ensures while a search thread reads

    def has(self, languages: Iterable[str | None], kind: Kind) -> bool:
        """Whether every one of `languages` has its mean (or the global one) measured."""
        held = self._means[kind]
        return all(mean_key(lang) in held for lang in set(languages))

    def ensure(self, encoder: TextEncoder, languages: Iterable[str | None], kind: Kind) -> bool:
        """Measures the means `languages` need on this side; True when one was added.

        `encoder` must be the generation's model (a mean of another model's vectors would
        move every vector somewhere meaningless).
        """
        with self._lock:
            missing = sorted({mean_key(lang) for lang in languages} - set(self._means[kind]))
            for key in missing:
                self._means[kind][key] = self._measure(encoder, key, kind)
            return bool(missing)

    def _measure(self, encoder: TextEncoder, key: str, kind: Kind) -> np.ndarray:
        if key != GLOBAL:
            log.info("measuring the %s mean of language %s with %s", kind, key, encoder.name)
            return self._mean_of(encoder, reference_sentences()[key][:SENTENCES_PER_LANGUAGE], kind)
        languages = [lang for lang in GLOBAL_LANGUAGES if lang in reference_sentences()]
        log.info("measuring the global %s mean with %s", kind, encoder.name)
        return np.mean([self._mean_of(encoder, reference_sentences()[lang][:GLOBAL_SENTENCES], kind)
                        for lang in languages], axis=0).astype(np.float32)

    def _mean_of(self, encoder: TextEncoder, sentences: Sequence[str], kind: Kind) -> np.ndarray:
        vectors = encode_reference(encoder, sentences, kind)
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise InputError(f"the encoder gave {vectors.shape} vectors for a {self.dim}-d generation")
        return vectors.mean(axis=0)

    def offsets(self, languages: Sequence[str | None], kind: Kind) -> np.ndarray:
        """The mean each text is corrected by, float32 [n, dim]; the means must be ensured."""
        held = self._means[kind]
        # a few languages among hundreds of passages: one row each, then gathered
        distinct = {language: i for i, language in enumerate(dict.fromkeys(languages))}
        keys = [mean_key(language) for language in distinct]
        absent = sorted(set(keys) - set(held))
        if absent:
            raise InputError(f"no {kind} mean measured for {', '.join(k or 'global' for k in absent)}")
        if not keys:
            return np.empty((0, self.dim), np.float32)
        return np.stack([held[key] for key in keys])[[distinct[language] for language in languages]]

    def neutral(self, vectors: np.ndarray, languages: Sequence[str | None], kind: Kind) -> np.ndarray:
        """`vectors` [n, dim] minus their language's mean, re-normalised (float32 [n, dim])."""
        vectors = np.asarray(vectors, np.float32)
        if len(vectors) != len(languages):
            raise InputError(f"{len(vectors)} vectors for {len(languages)} languages")
        if len(vectors) == 0:
            return vectors.reshape(0, self.dim)
        return l2_normalise(vectors - self.offsets(languages, kind))

    # -- the side file -------------------------------------------------------------------

    def save(self, path: Path, model: str) -> None:
        """Writes the means measured so far, stamped with the model and the reference.

        Means another process saved meanwhile (the window measuring a query language while
        the command line indexes) are kept and taken in: they are the same function of the
        model and the reference sentences, so neither process needs to measure them again.
        """
        saved = LanguageMeans.load(path, model=model, dim=self.dim)
        with self._lock:
            for kind in KINDS:
                for key, vector in saved._means[kind].items():
                    self._means[kind].setdefault(key, vector)
            arrays = {f"{kind}:{key}": vector for kind in KINDS for key, vector in self._means[kind].items()}
        meta = {"format": FORMAT_VERSION, "model": model, "dim": self.dim, "reference": reference_digest()}
        with atomic_file(Path(path)) as f:
            np.savez(f, meta=np.frombuffer(json.dumps(meta).encode(), np.uint8), **arrays)

    @classmethod
    def load(cls, path: Path, *, model: str, dim: int) -> LanguageMeans:
        """The means saved for this model and reference, or none (a fresh start) when the
        file is missing, damaged, or measured with another model or reference."""
        try:
            with np.load(Path(path), allow_pickle=False) as data:
                meta = json.loads(data["meta"].tobytes().decode())
                arrays = {name: data[name] for name in data.files if name != "meta"}
        except FileNotFoundError:
            return cls(dim)
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, UnicodeDecodeError) as e:
            log.warning("ignoring damaged language means file %s: %s", path, e)
            return cls(dim)
        if (meta.get("format") != FORMAT_VERSION or meta.get("model") != model or meta.get("dim") != dim
                or meta.get("reference") != reference_digest()):
            return cls(dim)
        means: dict[Kind, dict[str, np.ndarray]] = {kind: {} for kind in KINDS}
        for name, vector in arrays.items():
            kind, _, key = name.partition(":")
            if kind in KINDS and vector.shape == (dim,) and np.all(np.isfinite(vector)):
                means[kind][key] = vector.astype(np.float32)
        return cls(dim, means)
