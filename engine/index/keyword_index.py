"""The keyword index: BM25 over passage text in a local SQLite FTS5 file, beside the FAISS file.

    >>> keywords = KeywordIndex.open(store, generation, paths.indexes)   # repairs itself if stale
    >>> keywords.apply(removed_ids, added_ids)                           # after each commit
    >>> ids, scores = keywords.search(KeywordQuery.of(["rechnung", "FA-2024-5521"]), limit=100)

Like the FAISS file it is a disposable cache of the database: the file records the
generation and version it reflects; when these disagree on open (the app was killed, the
store is another machine's PostgreSQL, the model changed) the passage ids of both are
compared and the difference is applied from the stored passage text. Passages are never
edited in place (a changed document gets new passage ids), so equal id sets mean equal
content. A file that fails at any point (damaged pages found by a search, a folder in its
place, an I/O error during an update) is dropped and rebuilt from the database, with one
line saying so (engine.repairs); only a busy or full disk is reported as an error.

Terms come from engine.index.keyword_tokens (folding, bigrams, identifiers); FTS5's
`ascii` tokeniser only splits them at the spaces put between them. Each passage is held
twice, position for position: its terms as written (`terms`: phrases, required words,
names) and the same with each word stemmed in the passage's language (`stems`,
engine.index.stemming). A query in a language with a stemmer is matched in both and
ranked on their sum, so "boxes and arrows" finds a passage on "box-and-arrow diagrams",
below one that writes "boxes and arrows"; any other query on the terms, as written.
"""

from __future__ import annotations

import logging
import math
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.errors import StoreError
from engine.index.keyword_tokens import STOPWORDS, Token, index_terms, tokenize
from engine.index.stemming import stem, stems
from engine.private import private_file, private_folder
from engine.repairs import move_aside, repaired, updated
from engine.store import GenerationInfo, Store
from engine.store.search_queries import passage_ids, passages_to_index

log = logging.getLogger(__name__)

FILE_NAME = "keywords.sqlite"
SCHEMA_VERSION = 2  # 2: the stems column
REPAIR_BATCH = 2000  # passages read from the store per step when repairing
BM25_K1 = 1.2  # FTS5's bm25() constant; the upper bound of one term's weight is idf * (k1 + 1)
COMMON_SHARE = 0.05  # a word in more of the passages than this is left out of matching (idf < 2.9)
PRUNE_MIN_PASSAGES = 2000  # ...in collections at least this large
FREQUENCIES_CACHED = 50_000  # terms whose passage counts are kept between writes (~5 MB)


Group = tuple[tuple[str, ...], ...]  # alternatives of AND-ed terms


@dataclass(frozen=True)
class KeywordQuery:
    """FTS5 groups to OR together: each group is a word, as alternatives of AND-ed terms.

    An identifier `FA-2024-5521` is the group (("fa_2024_5521",), ("fa", "2024", "5521")):
    the whole term, or all its parts (written apart: "FA 2024 5521"). `groups` are matched
    as written (the `terms` column); in a language with a stemmer `stem_groups` holds the
    same words stemmed, matched in the `stems` column and scored besides: a word found as
    written scores in both columns, another form of it ("boxes" for "box") only in the
    stems, with their lower idf, so under half as much.
    """

    groups: tuple[Group, ...]
    stem_groups: tuple[Group, ...] = ()

    @classmethod
    def of(cls, words: Iterable[str], language: str | None = None) -> KeywordQuery:
        """The words as groups (a search has them already tokenised: `of_tokens`)."""
        return cls.of_tokens([token for word in words for token in tokenize(word)], language)

    @classmethod
    def of_tokens(cls, tokens: Sequence[Token], language: str | None = None) -> KeywordQuery:
        """A query's tokens (engine.query.ParsedQuery.keyword_tokens) as groups, function
        words ("in", "der", "les") left out unless nothing else is left: in a small
        multilingual library they are rare enough for a high idf, so they would lift any
        passage in the query's language. In a `language` with a stemmer (ISO 639-1, None:
        unknown) the stems are matched too."""
        content = [token for token in tokens if token.term not in STOPWORDS] or tokens
        groups = _groups(content, lambda term: term)
        if not stems(language):
            return cls(groups)
        return cls(groups, _groups(content, lambda term: stem(term, language)))

    @property
    def terms(self) -> list[str]:
        """Every distinct term named as written."""
        return _distinct_terms(self.groups)

    @property
    def column_terms(self) -> list[tuple[str, str]]:
        """Every distinct (column, term) matched, for document frequencies."""
        return [(column, t) for column, groups in self._columns() for t in _distinct_terms(groups)]

    def _columns(self) -> list[tuple[str, tuple[Group, ...]]]:
        return [(column, groups) for column, groups in (("terms", self.groups), ("stems", self.stem_groups)) if groups]

    def match_expression(self) -> str:
        def quoted(term: str) -> str:
            return '"' + term.replace('"', '""') + '"'

        def group(alternatives: Group) -> str:
            return " OR ".join("(" + " AND ".join(quoted(t) for t in alt) + ")" for alt in alternatives)

        return " OR ".join("{" + column + "} : (" + " OR ".join("(" + group(g) + ")" for g in groups) + ")"
                           for column, groups in self._columns())

    def __bool__(self) -> bool:
        return bool(self.groups or self.stem_groups)


def _groups(tokens: Sequence[Token], term: Callable[[str], str]) -> tuple[Group, ...]:
    """Each token as its whole term or all its parts, through `term` (as written, or a stem)."""
    groups = []
    for token in tokens:
        alternatives = [(term(token.term),)]
        if token.parts:
            alternatives.append(tuple(term(p.term) for p in token.parts))
        groups.append(tuple(alternatives))
    return tuple(dict.fromkeys(groups))


def _distinct_terms(groups: tuple[Group, ...]) -> list[str]:
    return list(dict.fromkeys(t for g in groups for alt in g for t in alt))


class KeywordIndex:
    """Passage terms in FTS5, keyed by passage id; thread safe (one connection, one lock)."""

    def __init__(self, store: Store, path: Path, connection: sqlite3.Connection | None,
                 generation: GenerationInfo):
        self.store = store
        self.path = path
        self._db = connection
        self._generation = generation  # which generation a rebuild reads from the store
        self._lock = threading.RLock()
        # Passages held, and passages holding each term asked for, cached between writes:
        # fts5vocab counts a term by reading its whole posting list (~2 ms for a word in
        # 5% of 100k passages, more for an identifier part such as "fa" in all of them).
        # Cleared by this connection's writes and, through `PRAGMA data_version`, by
        # another process's writes to the same file.
        self._count: int | None = None
        self._frequencies_cache: dict[tuple[str, str], int] = {}  # (column, term) -> passages
        self._data_version: int | None = None
        self.seconds = 0.0  # time spent tokenising and writing, for the indexing benchmark

    @classmethod
    def open(cls, store: Store, generation: GenerationInfo, folder: Path) -> KeywordIndex:
        """Opens (creating, repairing or rebuilding) the keyword file in `folder` for `generation`."""
        private_folder(folder)
        path = folder / FILE_NAME
        try:
            move_aside(path)
            index = cls(store, path, _connect(path), generation)
        except (sqlite3.DatabaseError, OSError) as e:  # not a database, or damaged beyond SQLite's repair
            _raise_unless_damage(path, e)
            index = cls(store, path, None, generation)
            index._rebuild(e)
            return index
        index.sync(generation)  # heals damage the connection did not meet
        return index

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                _close_quietly(self._db)

    # -- healing ---------------------------------------------------------------------

    def _healing(self, operation):
        """`operation()`; if the file fails it, a rebuild, then `operation()` once more.

        Repeating a write is harmless: every write mirrors a change the database has
        committed already (so the rebuild holds it too) and replaces what it touches.
        """
        if self._db is None:  # an earlier rebuild failed: try again
            self._rebuild(StoreError("it could not be rebuilt before"))
            return operation()
        try:
            return operation()
        except sqlite3.DatabaseError as e:
            _raise_unless_damage(self.path, e)
            self._rebuild(e)
        try:
            return operation()
        except sqlite3.DatabaseError as e:  # the new file fails too: the disk, not the cache
            raise StoreError(f"the keyword index {self.path} fails even when rebuilt: {_short(e)}") from e

    def _rebuild(self, error: BaseException) -> None:
        """Drops the file and builds it again from every passage of the database."""
        if isinstance(error, _OlderFormat):  # after an update: expected, once, and no sign of damage
            updated("updating the keyword index %s to this version's format (%s), once; rebuilding it "
                    "from the database", self.path, error)
        else:
            repaired("the keyword index %s failed (%s); rebuilding it from the database", self.path, _short(error))
        started = time.perf_counter()
        try:
            with self._lock:
                if self._db is not None:
                    _close_quietly(self._db)
                    self._db = None
                move_aside(self.path)
                for stale in (self.path, *_companions(self.path)):
                    stale.unlink(missing_ok=True)
                self._db = _connect(self.path)
                self._count, self._data_version = None, None
                self._frequencies_cache.clear()
            generation = self.store.generation_by_id(self._generation.id) or self._generation
            self._sync(generation)
        except (sqlite3.DatabaseError, OSError) as e:
            raise StoreError(f"the keyword index {self.path} cannot be rebuilt: {_short(e)}") from e
        log.info("keyword index rebuilt in %.2f s", time.perf_counter() - started)

    # -- keeping in step with the database ------------------------------------------

    def sync(self, generation: GenerationInfo) -> None:
        """Makes the file hold exactly the store's passages, unless its stamp says it does."""
        self._healing(lambda: self._sync(generation))

    def _sync(self, generation: GenerationInfo) -> None:
        self._generation = generation
        if self._stamp() == (generation.id, generation.version):
            return
        started = time.perf_counter()
        stored = passage_ids(self.store)
        with self._lock:
            held = np.fromiter((r[0] for r in self._db.execute("SELECT rowid FROM passages")), np.int64)
        removed = np.setdiff1d(held, stored, assume_unique=True)
        added = np.setdiff1d(stored, held, assume_unique=True)
        if len(removed) or len(added):
            log.info("keyword index: repairing (%d to add, %d to remove)", len(added), len(removed))
        self._apply(removed.tolist(), added.tolist())
        self._stamp_with(generation)
        log.info("keyword index in step with generation %d in %.2f s", generation.id,
                 time.perf_counter() - started)

    def apply(self, removed: Sequence[int], added: Sequence[int]) -> None:
        """Mirrors a committed change; the added passages' text is read from the store."""
        self._healing(lambda: self._apply(removed, added))

    def _apply(self, removed: Sequence[int], added: Sequence[int]) -> None:
        started = time.perf_counter()
        if len(removed):
            with self._lock, self._db:
                self._db.executemany("DELETE FROM passages WHERE rowid = ?", ((int(i),) for i in removed))
            self._forget_counts()
        for i in range(0, len(added), REPAIR_BATCH):
            rows = passages_to_index(self.store, [int(a) for a in added[i : i + REPAIR_BATCH]])
            self._add(rows)
        self.seconds += time.perf_counter() - started

    def add(self, rows: Iterable[tuple[int, int, str, str | None]]) -> None:
        """Indexes (passage id, document id, text, language or None) rows; an id present
        already is replaced."""
        rows = list(rows)
        self._healing(lambda: self._add(rows))

    def _add(self, rows: Iterable[tuple[int, int, str, str | None]]) -> None:
        values = []
        for pid, doc, text, language in rows:
            terms = index_terms(text)
            stemmed = [stem(t, language) for t in terms] if stems(language) else terms
            values.append((pid, " ".join(terms), " ".join(stemmed), doc))
        with self._lock, self._db:
            self._db.executemany("DELETE FROM passages WHERE rowid = ?", ((v[0],) for v in values))
            self._db.executemany("INSERT INTO passages(rowid, terms, stems, document) VALUES (?, ?, ?, ?)", values)
        self._forget_counts()

    def stamp(self, generation: GenerationInfo) -> None:
        """Records that the file reflects `generation` at its version (call after a save)."""
        self._healing(lambda: self._stamp_with(generation))

    def _stamp_with(self, generation: GenerationInfo) -> None:
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('generation', ?)", (generation.id,))
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (generation.version,))

    def _stamp(self) -> tuple[int, int] | None:
        with self._lock:
            meta = dict(self._db.execute("SELECT key, value FROM meta"))
        if "generation" not in meta or "version" not in meta:
            return None
        return int(meta["generation"]), int(meta["version"])

    # -- queries --------------------------------------------------------------------

    def ids(self) -> np.ndarray:
        """Every passage id held, sorted, int64 [n]."""
        def read() -> np.ndarray:
            with self._lock:
                rows = self._db.execute("SELECT rowid FROM passages ORDER BY rowid")
                return np.fromiter((r[0] for r in rows), np.int64)

        return self._healing(read)

    def __len__(self) -> int:
        def count() -> int:
            with self._lock:
                return self._count_locked()

        return self._healing(count)

    def _count_locked(self) -> int:
        # The docsize shadow table has one small row per passage: counting it is far
        # cheaper than count(*) on the full-text table, which reads every row.
        return int(self._db.execute("SELECT count(*) FROM passages_docsize").fetchone()[0])

    def search(self, query: KeywordQuery, limit: int, min_share: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """(passage ids int64 [n], scores float32 [n]) best first, n <= limit; with
        `min_share`, only the passages scoring at least that.

        Scores are BM25 divided by the query's best possible BM25 (every term present,
        often), so 1.0 is "all of it, strongly" and a match of one common word is near 0;
        that makes them comparable across queries for the relevance floor and fusion.
        FTS5 scores every match whatever the LIMIT; the floor, applied inside SQLite,
        spares sorting and returning those below it (a query matching 8k passages:
        ~9 ms instead of 13 ms for its best 1000 and 22 ms more for its best 4000).
        """
        if not query:
            return np.empty(0, np.int64), np.empty(0, np.float32)
        return self._healing(lambda: self._search(query, limit, min_share))

    def _search(self, query: KeywordQuery, limit: int, min_share: float) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            total, frequencies = self._frequencies(query)
            matched = _without_common_words(query, frequencies, total)
            if not matched:
                return np.empty(0, np.int64), np.empty(0, np.float32)
            bound = _best_possible(query, frequencies, total)
            # A hair below the floor: the exact float32 comparison below decides.
            floor = min_share * bound * (1 - 1e-6) if min_share > 0 else -math.inf
            rows = self._db.execute(
                "SELECT rowid, score FROM (SELECT rowid, -bm25(passages) AS score FROM passages "
                "WHERE passages MATCH ?) WHERE score >= ? ORDER BY score DESC LIMIT ?",
                (matched.match_expression(), floor, int(limit))).fetchall()
        ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
        scores = np.minimum(np.fromiter((r[1] for r in rows), np.float32, len(rows)) / np.float32(bound), 1.0)
        if min_share > 0:
            keep = scores >= min_share
            ids, scores = ids[keep], scores[keep]
        return ids, scores

    def holds_any(self, query: KeywordQuery) -> bool:
        """Whether any passage holds one of the query's terms, from the cached term counts.

        Example: index.holds_any(KeywordQuery.of(["qwzx", "vlorp"])) is False in most libraries.
        """
        if not query:
            return False

        def holds() -> bool:
            with self._lock:
                held = self._frequencies(query)[1]
            return any(("terms", t) in held for t in query.terms)  # as written: no stem of nonsense

        return self._healing(holds)

    def holds_word(self, word: str) -> bool:
        """Whether the library holds `word`: its whole term, or each of its parts
        ("PyTorch": "pytorch", or both "py" and "torch"), in some passage."""
        query = KeywordQuery.of([word])  # as written: a name is not stemmed
        if not query:
            return False

        def holds() -> bool:
            with self._lock:
                held = self._frequencies(query)[1]
            return all(any(all(("terms", t) in held for t in alternative) for alternative in group)
                       for group in query.groups)

        return self._healing(holds)

    def matching(self, terms: Sequence[str], phrase: bool = False) -> np.ndarray:
        """Ids of every passage holding all `terms` (folded terms, e.g. from tokenize);
        with `phrase`, holding them consecutively in this order."""
        if not terms:
            return np.empty(0, np.int64)
        if phrase:
            expression = '"' + " ".join(t.replace('"', '""') for t in terms) + '"'
        else:
            expression = " AND ".join('"' + t.replace('"', '""') + '"' for t in terms)
        expression = "{terms} : (" + expression + ")"

        def read() -> np.ndarray:
            with self._lock:
                rows = self._db.execute("SELECT rowid FROM passages WHERE passages MATCH ?", (expression,))
                return np.fromiter((r[0] for r in rows), np.int64)

        return self._healing(read)

    def _frequencies(self, query: KeywordQuery) -> tuple[int, dict[tuple[str, str], int]]:
        """(passages held, passages holding each of the query's (column, term)s, those
        held by none left out); caller holds the lock."""
        version = self._db.execute("PRAGMA data_version").fetchone()[0]
        if version != self._data_version:  # another connection committed to the file
            self._count, self._data_version = None, version
            self._frequencies_cache.clear()
        cache = self._frequencies_cache
        if len(cache) > FREQUENCIES_CACHED:  # a long session of distinct words: start over
            cache.clear()
        for key in query.column_terms:  # one `term = ?` each: fts5vocab scans everything for IN (...)
            if key not in cache:
                column, term = key
                row = self._db.execute("SELECT doc FROM vocabulary WHERE term = ? AND col = ?",
                                       (term, column)).fetchone()
                cache[key] = 0 if row is None else int(row[0])
        if self._count is None:
            self._count = self._count_locked()
        return self._count, {key: cache[key] for key in query.column_terms if cache[key]}

    def _forget_counts(self) -> None:
        """After each commit of this connection's (data_version only sees other connections')."""
        with self._lock:
            self._count = None
            self._frequencies_cache.clear()


def _idf(n: int, total: int) -> float:
    """FTS5's bm25 idf, floored at 1e-6 as FTS5 does."""
    return max(math.log((total - n + 0.5) / (n + 0.5)), 1e-6) if total else 1e-6


def _best_possible(query: KeywordQuery, frequencies: dict[tuple[str, str], int], total: int) -> float:
    """Sum over the query's (column, term)s of idf * (k1 + 1): bm25's ceiling for it."""
    return max(sum(_idf(frequencies.get(key, 0), total) * (BM25_K1 + 1) for key in query.column_terms), 1e-6)


def _without_common_words(query: KeywordQuery, frequencies: dict[tuple[str, str], int], total: int) -> KeywordQuery:
    """The query without words in more than COMMON_SHARE of passages (large collections).

    Such words weigh little in BM25 (idf < 2.9) but make FTS5 score and sort a large part
    of the collection (380 ms for 25k of 100k passages): "the invoice FA-2024-5521"
    matches as fast as the number. A query of only such words gets no keyword candidates;
    meaning still answers it. Small collections keep every word: sorting them is cheap.
    """
    if total < PRUNE_MIN_PASSAGES:
        return query

    def pruned(column: str, groups: tuple[Group, ...]) -> tuple[Group, ...]:
        def rare(term: str) -> bool:
            return frequencies.get((column, term), 0) <= COMMON_SHARE * total

        kept = []
        for group in groups:
            # In an identifier's parts ("fa" AND "2024" AND "5521") the common parts select
            # nothing but cost a long posting list each: keep the rare ones.
            alternatives = tuple(dict.fromkeys(
                tuple(t for t in alt if rare(t)) for alt in group if any(rare(t) for t in alt)))
            if alternatives:
                kept.append(alternatives)
        return tuple(kept)

    return KeywordQuery(pruned("terms", query.groups), pruned("stems", query.stem_groups))


def inspect(path: Path) -> tuple[str | None, np.ndarray | None]:
    """(what is wrong with the keyword file at `path` or None, the passage ids it holds).

    Example: inspect(indexes / FILE_NAME) == (None, array([1, 2, 3]))

    SQLite's own integrity check of the file, then FTS5's of the full-text index against
    the text it holds, in a transaction that is rolled back: nothing is created or
    changed (the caller holds the home's write lock, so no writer is half-way through).
    """
    if not os.path.lexists(path):
        return "is missing", None
    if not path.is_file() or path.is_symlink():
        return "is not a file", None
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True, isolation_level=None)
    except sqlite3.Error as e:
        return f"cannot be opened ({_short(e)})", None
    try:
        found = [row[0] for row in db.execute("PRAGMA integrity_check")]
        if found != ["ok"]:
            return f"is damaged ({'; '.join(map(str, found[:3]))})", None
        db.execute("BEGIN")
        try:
            db.execute("INSERT INTO passages(passages) VALUES ('integrity-check')")
        finally:
            db.execute("ROLLBACK")
        return None, np.fromiter((r[0] for r in db.execute("SELECT rowid FROM passages ORDER BY rowid")), np.int64)
    except sqlite3.Error as e:
        return f"is damaged ({_short(e)})", None
    finally:
        db.close()


def _raise_unless_damage(path: Path, error: BaseException) -> None:
    """Re-raises what a rebuild cannot cure: our own misuse (a closed connection) as it is,
    a busy file or a full disk as a StoreError."""
    if isinstance(error, sqlite3.ProgrammingError):
        raise error
    text = str(error).lower()
    if isinstance(error, sqlite3.OperationalError) and any(
            word in text for word in ("locked", "busy", "full", "interrupt")):
        raise StoreError(f"the keyword index {path}: {error}") from error


def _short(error: BaseException) -> str:
    return str(error) or type(error).__name__


def _companions(path: Path) -> tuple[Path, ...]:
    """SQLite's files beside a database: its write-ahead log, shared memory, rollback journal."""
    return tuple(path.with_name(path.name + suffix) for suffix in ("-wal", "-shm", "-journal"))


def _close_quietly(db: sqlite3.Connection) -> None:
    try:
        db.close()
    except sqlite3.Error:
        pass


def _connect(path: Path) -> sqlite3.Connection:
    try:
        private_file(path)  # it holds every passage's words; SQLite would create it 0644
        db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.isolation_level = ""  # `with db:` commits or rolls back a transaction
        _create(db)
        # Touch the full-text structures: a damaged file fails here, not in a later search.
        db.execute("SELECT rowid FROM passages WHERE passages MATCH '\"probe\"' LIMIT 1").fetchall()
        db.execute("SELECT key, value FROM meta").fetchall()
    except sqlite3.OperationalError as e:
        if "fts5" in str(e).lower():
            raise StoreError("this Python's SQLite has no FTS5 full-text search") from e
        raise
    return db


class _OlderFormat(sqlite3.DatabaseError):
    """The file was written by an earlier Babelfind (SCHEMA_VERSION): rebuilt, with a note."""


def _create(db: sqlite3.Connection) -> None:
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if 0 < version < SCHEMA_VERSION:
        raise _OlderFormat(f"format {version}, now {SCHEMA_VERSION}")
    if version > SCHEMA_VERSION:  # a later Babelfind's: rebuilt like a damaged file
        raise sqlite3.DatabaseError(f"keyword index format {version}, expected {SCHEMA_VERSION}")
    with db:
        # `ascii` keeps every non-ASCII character inside a term; '_' joins identifier parts.
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS passages USING fts5("
                   "terms, stems, document UNINDEXED, tokenize = \"ascii tokenchars '_'\")")
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS vocabulary USING fts5vocab(passages, 'col')")
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER)")
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
