"""Test doubles shared by several test folders.

`WordEncoder` is a real, deterministic encoder (hashed bag of words) that needs no
model files: good for testing indexing logic, and it counts what it encodes.
`postgres_database()` gives a test a PostgreSQL database of its own.
"""

from __future__ import annotations

import os
import re
import textwrap
import uuid
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

_WORD = re.compile(r"\w+", re.UNICODE)


class WordEncoder:
    """Hashed bag-of-words vectors; `calls` and `texts_encoded` count the work done."""

    def __init__(self, name: str = "test-words", dim: int = 256):
        self.name = name
        self.dim = dim
        self.calls = 0
        self.texts_encoded = 0

    def encode(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        self.calls += 1
        self.texts_encoded += len(texts)
        out = np.zeros((len(texts), self.dim), np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                out[row, zlib.crc32(word.encode()) % self.dim] += 1.0
        out[:, 0] += 1e-3  # no zero vectors for empty or punctuation-only texts
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def assert_database_matches_vector_file(home: Path) -> int:
    """DB passages == ids of the saved FAISS file, and that file is current; returns the
    number of documents indexed."""
    from sqlalchemy import select

    from engine.config import data_paths
    from engine.index.live_index import LiveIndex, vector_space
    from engine.index.vectors import VectorIndex
    from engine.library import Library
    from engine.store.schema import Passage

    library = Library.open(data_paths(home), encoder=WordEncoder())
    try:
        generation = library.store.generation("active")
        with library.store.session() as s:
            db_ids = np.array(sorted(s.scalars(select(Passage.id))), dtype=np.int64)
        saved = VectorIndex.load(LiveIndex.file_for(data_paths(home).indexes, generation.id),
                                 expected_generation=generation.version, dim=generation.dim,
                                 space=vector_space(library.live.means))
        assert saved is not None, "the saved vector file is not the database's current version"
        assert np.array_equal(np.sort(saved.ids()), db_ids)
        report = library.check()
        assert report.ok, report.problems
        assert len(db_ids) >= library.status().documents > 0
        return library.status().documents
    finally:
        library.close()


@contextmanager
def database_at_revision(url: str, revision: str):
    """A connection to a new database migrated only up to an earlier schema `revision`, to
    fill with rows as that version wrote them; committed when the block ends."""
    import sqlalchemy as sa
    from alembic import command
    from alembic.config import Config

    from engine.store.store import MIGRATIONS

    engine = sa.create_engine(url)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    try:
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, revision)
            yield connection
    finally:
        engine.dispose()


PG_URL = os.environ.get("BABELFIND_TEST_PG_URL")


@contextmanager
def postgres_database() -> Iterator[str]:
    """The URL of a new, empty database on the server BABELFIND_TEST_PG_URL names, dropped after.

        with postgres_database() as url:
            store = Store.open(url)

    Skips the test when the variable is not set (.ci/run starts a server and sets it).
    """
    from sqlalchemy import create_engine, text

    if not PG_URL:
        pytest.skip("BABELFIND_TEST_PG_URL is not set (.ci/run starts a PostgreSQL server)")
    name = f"babelfind_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield PG_URL.rsplit("/", 1)[0] + "/" + name
    finally:
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
        admin.dispose()


def count_query_parses(monkeypatch) -> list[str]:
    """The texts `engine.query.parse_query` is called with from now on, whichever module
    calls it (every module that imported the function gets the counting one)."""
    import sys

    import engine.query

    original, calls = engine.query.parse_query, []

    def counting(text: str):
        calls.append(text)
        return original(text)

    for module in list(sys.modules.values()):
        if getattr(module, "parse_query", None) is original:
            monkeypatch.setattr(module, "parse_query", counting)
    return calls


LANGUAGE_BIASED_DIM = 64
# A word -> concept table: the encoder below knows what the words mean in every language.
CONCEPTS = {
    "sourdough": "sauerteig sauerteigs levain sourdough lievito",
    "feed": "füttern füttert nourrir nourrit feed nutrire",
    "flour": "mehl farine flour farina",
    "bicycle": "fahrrad vélo bicycle bicicletta",
    "chain": "kette chaîne chain catena",
    "oil": "öl huile oil olio",
    "bank": "bank banque banca bancă",
    "account": "konto compte account conto cont",
}
WORD_CONCEPT = {word: concept for concept, words in CONCEPTS.items() for word in words.split()}


def _direction(key: str) -> np.ndarray:
    rng = np.random.default_rng(zlib.crc32(key.encode()))
    vector = rng.normal(size=LANGUAGE_BIASED_DIM).astype(np.float32)
    return vector / np.linalg.norm(vector)


class LanguageBiasedEncoder:
    """Vectors = the concepts a text names + a strong offset for its language: the shape
    of a multilingual encoder's space, where a shared language pulls texts together."""

    name = "test-language-biased"
    dim = LANGUAGE_BIASED_DIM
    language_weight = 2.5

    def __init__(self):
        self.texts_encoded = 0

    def encode(self, texts, kind: str = "passage") -> np.ndarray:
        from engine.langid import detect_language

        self.texts_encoded += len(texts)
        out = np.zeros((len(texts), LANGUAGE_BIASED_DIM), np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().replace("?", " ").replace(".", " ").split():
                if word in WORD_CONCEPT:
                    out[row] += _direction(WORD_CONCEPT[word])
            language = detect_language(text)
            if language:
                out[row] += self.language_weight * _direction("language " + language)
            out[row] += 0.05 * _direction(text)  # no two texts alike
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `babelfind ARGV...` run in this process."""
    from app.cli import main

    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# A finder ahead of every other: torch and transformers (and their submodules) are not
# there, as in an install without the `train` extra.
NO_TORCH = textwrap.dedent("""
    import sys

    class NoTraining:
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in ("torch", "transformers"):
                raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)", name=name)
            return None

    sys.meta_path.insert(0, NoTraining())
""")
