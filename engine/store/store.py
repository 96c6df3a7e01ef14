"""The SQL side of the library: one object, short transactions, typed errors.

    >>> store = Store.open("sqlite:////tmp/babelfind.db")   # migrates to the newest schema
    >>> store.active_generation()
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from sqlalchemy import bindparam, create_engine, delete, event, func, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from engine.errors import StoreError
from engine.store.exclusions import ExclusionsMixin
from engine.store.schema import Document, DocumentText, IndexGeneration, Passage, Root, Vector
from engine.store.migrate import migrate
from engine.store.urls import check_sqlite_folder, mask_url, one_line, scrub, sqlite_file
from engine.store.vector_blobs import EARLIER, STORED, decode_vectors, vector_blobs

log = logging.getLogger(__name__)

MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"
_ID_CHUNK = 500  # bound on ids per IN (...) clause; SQLite allows 32k, keep plans small


@dataclass(frozen=True)
class DocumentState:
    """What the store knows about a file, to decide whether it changed."""

    id: int
    size: int
    mtime: float
    content_hash: str | None
    status: str
    error: str | None
    parent: str | None = None  # the document holding it (an archive, a message); None on disk


@dataclass(frozen=True)
class NewPassage:
    text: str
    start: int
    end: int
    page: int | None
    language: str | None
    context: str | None = None  # title and section it is encoded with (engine.passage_context)


@dataclass(frozen=True)
class DocumentWrite:
    """Everything written for one successfully indexed file, in one transaction."""

    path: str
    size: int
    mtime: float
    content_hash: str
    file_type: str
    format: str
    language: str | None
    passages: tuple[NewPassage, ...]
    vectors: np.ndarray  # [len(passages), dim] float32 (stored as float16: vector_blobs)
    parent: str | None = None  # the document holding it (an archive, a message)
    title: str | None = None
    date: float | None = None  # the document's own date (a message's), epoch seconds
    # The extracted text (engine.store.texts), kept for documents costly to read again.
    text: bytes | None = None
    status: str = "indexed"  # "container" for an archive's or a mailbox's own record


@dataclass(frozen=True)
class FailureWrite:
    path: str
    size: int
    mtime: float
    content_hash: str | None
    file_type: str
    reason: str
    parent: str | None = None


@dataclass(frozen=True)
class PassageRow:
    """A passage joined with its document, for search results."""

    passage_id: int
    text: str
    start: int
    end: int
    page: int | None
    language: str | None
    path: str
    file_type: str
    document_language: str | None
    format: str | None = None
    title: str | None = None


@dataclass(frozen=True)
class DocumentInfo:
    """One stored document as a front end shows or opens it."""

    path: str
    parent: str | None
    format: str | None
    file_type: str
    title: str | None
    mtime: float


@dataclass(frozen=True)
class GenerationInfo:
    id: int
    model_name: str
    dim: int
    status: str
    version: int


def _enable_sqlite_pragmas(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record):
        cursor = dbapi_connection.cursor()
        # WAL lets the GUI read while the indexer writes; foreign keys make deletes cascade.
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()


def _chunks(ids: Sequence[int], size: int = _ID_CHUNK) -> Iterator[Sequence[int]]:
    for i in range(0, len(ids), size):
        yield ids[i : i + size]


def _generation_info(row: IndexGeneration) -> GenerationInfo:
    return GenerationInfo(row.id, row.model_name, row.dim, row.status, row.version)


class Store(ExclusionsMixin):
    """Roots, documents, passages and per-generation vectors in one SQL database."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)

    @classmethod
    def open(cls, url: str) -> Store:
        """Connects and migrates to the newest schema; StoreError on failure."""
        try:
            check_sqlite_folder(url)
            _private_sqlite_file(url)
            engine = create_engine(url)
            if engine.dialect.name == "sqlite":
                _enable_sqlite_pragmas(engine)
            store = cls(engine)
            store.migrate()
            return store
        except ImportError as e:  # the dialect's driver (mysqlclient, psycopg...) is absent
            raise StoreError(f"cannot open the database {mask_url(url)}: its driver is not "
                             f"installed ({e}); install it or use another URL") from e
        except (SQLAlchemyError, OSError, ValueError, TypeError) as e:
            # ValueError: a malformed URL part, such as a port that is not a number
            raise StoreError(f"cannot open the database {mask_url(url)}: "
                             f"{scrub(one_line(e), url)}") from e

    def migrate(self) -> None:
        """Upgrades to the newest schema; safe when several processes start at once."""
        migrate(self.engine, MIGRATIONS)

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def session(self) -> Iterator[Session]:
        with self._sessions.begin() as session:
            yield session

    # -- roots ---------------------------------------------------------------

    def ensure_root(self, path: str) -> int:
        with self.session() as s:
            root_id = s.scalar(select(Root.id).where(Root.path == path))
            if root_id is None:
                root = Root(path=path, watch=False)
                s.add(root)
                s.flush()
                root_id = root.id
            return root_id

    def root_for(self, path: str) -> int | None:
        """The id of the root that holds `path` (itself or an enclosing folder)."""
        with self.session() as s:
            for root_id, root_path in s.execute(select(Root.id, Root.path)):
                if path == root_path or path.startswith(root_path.rstrip("/") + "/"):
                    return root_id
        return None

    def mark_root_indexed(self, root_id: int) -> None:
        with self.session() as s:
            s.execute(
                update(Root).where(Root.id == root_id).values(last_indexed_at=datetime.now(timezone.utc))
            )

    def set_watch(self, path: str, watch: bool) -> None:
        with self.session() as s:
            s.execute(update(Root).where(Root.path == path).values(watch=watch))

    def roots(self) -> list[tuple[Root, int, int, int]]:
        """(root, documents indexed, passages, documents failed) for each root."""
        with self.session() as s:
            roots = list(s.scalars(select(Root).order_by(Root.path)))
            docs = dict(
                s.execute(
                    select(Document.root_id, func.count())
                    .where(Document.status == "indexed")
                    .group_by(Document.root_id)
                ).all()
            )
            failed = dict(
                s.execute(
                    select(Document.root_id, func.count())
                    .where(Document.status == "failed")
                    .group_by(Document.root_id)
                ).all()
            )
            passages = dict(
                s.execute(
                    select(Document.root_id, func.count(Passage.id))
                    .join(Passage, Passage.document_id == Document.id)
                    .group_by(Document.root_id)
                ).all()
            )
            return [(r, docs.get(r.id, 0), passages.get(r.id, 0), failed.get(r.id, 0)) for r in roots]

    def delete_root(self, path: str) -> None:
        with self.session() as s:
            s.execute(delete(Root).where(Root.path == path))

    # -- documents -------------------------------------------------------------

    def documents_under(self, path: str) -> dict[str, DocumentState]:
        """Documents at `path` or below it, keyed by path."""
        prefix = path.rstrip("/") + "/"
        with self.session() as s:
            rows = s.execute(
                select(
                    Document.path,
                    Document.id,
                    Document.size,
                    Document.mtime,
                    Document.content_hash,
                    Document.status,
                    Document.error,
                    Document.parent,
                ).where((Document.path == path) | Document.path.startswith(prefix, autoescape=True))
            )
            return {row[0]: DocumentState(*row[1:]) for row in rows}

    def touch_document(self, path: str, size: int, mtime: float) -> None:
        """The content is unchanged (same hash); remember the new size and mtime."""
        with self.session() as s:
            s.execute(update(Document).where(Document.path == path).values(size=size, mtime=mtime))

    def write_documents(
        self, root_id: int, generation_id: int, writes: Sequence[DocumentWrite]
    ) -> tuple[list[int], list[list[int]]]:
        """Replaces these documents' passages and vectors in one transaction.

        Returns (passage ids removed, new passage ids per write) so the caller can
        update the FAISS index after the commit.
        """
        with self.session() as s:
            removed = self._delete_documents(s, [w.path for w in writes])
            new_ids = [self._insert_document(s, root_id, generation_id, w) for w in writes]
            self._bump_versions(s)
        return removed, new_ids

    def write_failures(self, root_id: int, failures: Sequence[FailureWrite]) -> list[int]:
        """Records files that could not be indexed; returns passage ids they had before."""
        with self.session() as s:
            removed = self._delete_documents(s, [f.path for f in failures])
            for f in failures:
                s.add(
                    Document(
                        root_id=root_id,
                        path=f.path,
                        size=f.size,
                        mtime=f.mtime,
                        content_hash=f.content_hash,
                        file_type=f.file_type,
                        status="failed",
                        error=f.reason,
                        parent=f.parent,
                    )
                )
            if removed:
                self._bump_versions(s)
        return removed

    def remove_documents(self, paths: Sequence[str]) -> list[int]:
        """Deletes documents with their passages and vectors; returns the passage ids."""
        if not paths:
            return []
        with self.session() as s:
            removed = self._delete_documents(s, list(paths))
            self._bump_versions(s)
        return removed

    def failed_documents(self, under: str | None = None) -> list[tuple[str, str]]:
        with self.session() as s:
            query = select(Document.path, Document.error).where(Document.status == "failed")
            if under:
                prefix = under.rstrip("/") + "/"
                query = query.where(
                    (Document.path == under) | Document.path.startswith(prefix, autoescape=True)
                )
            return [(p, e or "") for p, e in s.execute(query.order_by(Document.path))]

    def document_info(self, path: str) -> DocumentInfo | None:
        """What the store holds about the document at key `path`; None when it holds nothing."""
        with self.session() as s:
            row = s.execute(select(Document.path, Document.parent, Document.format, Document.file_type,
                                   Document.title, Document.mtime).where(Document.path == path)).first()
            return DocumentInfo(*row) if row else None

    def stored_text(self, path: str) -> bytes | None:
        """The extracted text kept for the document at `path` (engine.store.texts), if any."""
        with self.session() as s:
            return s.scalar(select(DocumentText.data).join(Document, DocumentText.document_id == Document.id)
                            .where(Document.path == path))

    def counts(self) -> tuple[int, int, int, dict[str, int]]:
        """(documents indexed, passages, documents failed, documents per language)."""
        with self.session() as s:
            indexed = s.scalar(select(func.count()).where(Document.status == "indexed"))
            failed = s.scalar(select(func.count()).where(Document.status == "failed"))
            passages = s.scalar(select(func.count(Passage.id)))
            languages = dict(
                s.execute(
                    select(Document.language, func.count())
                    .where(Document.status == "indexed", Document.language.is_not(None))
                    .group_by(Document.language)
                ).all()
            )
            return indexed or 0, passages or 0, failed or 0, languages

    def _insert_document(
        self, s: Session, root_id: int, generation_id: int, w: DocumentWrite
    ) -> list[int]:
        doc = Document(
            root_id=root_id,
            path=w.path,
            size=w.size,
            mtime=w.mtime,
            content_hash=w.content_hash,
            file_type=w.file_type,
            format=w.format,
            language=w.language,
            status=w.status,
            parent=w.parent,
            title=w.title,
            date=w.date,
        )
        doc.passages = [
            Passage(ordinal=i, text=p.text, start=p.start, end=p.end, page=p.page, language=p.language,
                    context=p.context)
            for i, p in enumerate(w.passages)
        ]
        s.add(doc)
        s.flush()  # assigns passage ids, which are also the FAISS ids
        if w.text is not None:
            s.add(DocumentText(document_id=doc.id, data=w.text))
        ids = [p.id for p in doc.passages]
        s.add_all(Vector(generation_id=generation_id, passage_id=pid, data=blob)
                  for pid, blob in zip(ids, vector_blobs(w.vectors)))
        return ids

    def _delete_documents(self, s: Session, paths: list[str]) -> list[int]:
        removed: list[int] = []
        for chunk in _chunks(paths):
            doc_ids = list(s.scalars(select(Document.id).where(Document.path.in_(chunk))))
            if not doc_ids:
                continue
            passage_ids = list(s.scalars(select(Passage.id).where(Passage.document_id.in_(doc_ids))))
            for ids in _chunks(passage_ids):
                s.execute(delete(Vector).where(Vector.passage_id.in_(ids)))
            s.execute(delete(Passage).where(Passage.document_id.in_(doc_ids)))
            s.execute(delete(DocumentText).where(DocumentText.document_id.in_(doc_ids)))
            s.execute(delete(Document).where(Document.id.in_(doc_ids)))
            removed.extend(passage_ids)
        return removed

    def _bump_versions(self, s: Session) -> None:
        s.execute(
            update(IndexGeneration)
            .where(IndexGeneration.status != "retired")
            .values(version=IndexGeneration.version + 1)
        )

    # -- passages --------------------------------------------------------------

    def passages(self, ids: Iterable[int]) -> dict[int, PassageRow]:
        ids = [int(i) for i in ids]
        out: dict[int, PassageRow] = {}
        with self.session() as s:
            for chunk in _chunks(ids):
                rows = s.execute(
                    select(
                        Passage.id,
                        Passage.text,
                        Passage.start,
                        Passage.end,
                        Passage.page,
                        Passage.language,
                        Document.path,
                        Document.file_type,
                        Document.language,
                        Document.format,
                        Document.title,
                    )
                    .join(Document, Passage.document_id == Document.id)
                    .where(Passage.id.in_(chunk))
                )
                out.update((row[0], PassageRow(*row)) for row in rows)
        return out

    def passage_texts(self, under: str | None = None) -> list[tuple[str, str | None]]:
        """(text, language) of every indexed passage (of documents at or below `under`),
        in document order."""
        query = select(Passage.text, Passage.language).join(Document)
        if under is not None:
            prefix = under.rstrip("/") + "/"
            query = query.where((Document.path == under)
                                | Document.path.startswith(prefix, autoescape=True))
        with self.session() as s:
            return [tuple(row) for row in s.execute(query.order_by(Document.id, Passage.ordinal))]

    def passages_without_vectors(self, generation_id: int, limit: int) -> list[tuple[int, str, str | None]]:
        """(passage id, text, context) of passages that have no vector in this generation yet."""
        with self.session() as s:
            has_vector = select(Vector.passage_id).where(Vector.generation_id == generation_id)
            rows = s.execute(
                select(Passage.id, Passage.text, Passage.context)
                .where(Passage.id.not_in(has_vector))
                .order_by(Passage.id)
                .limit(limit)
            )
            return [(pid, text, context) for pid, text, context in rows]

    # -- generations and vectors ----------------------------------------------

    def generation(self, status: str) -> GenerationInfo | None:
        with self.session() as s:
            row = s.scalars(
                select(IndexGeneration)
                .where(IndexGeneration.status == status)
                .order_by(IndexGeneration.id.desc())
            ).first()
            return _generation_info(row) if row else None

    def generation_by_id(self, generation_id: int) -> GenerationInfo | None:
        with self.session() as s:
            row = s.get(IndexGeneration, generation_id)
            return _generation_info(row) if row else None

    def create_generation(self, model_name: str, dim: int, status: str) -> GenerationInfo:
        with self.session() as s:
            row = IndexGeneration(model_name=model_name, dim=dim, status=status, version=0)
            if status == "active":
                row.completed_at = datetime.now(timezone.utc)
            s.add(row)
            s.flush()
            return _generation_info(row)

    def activate_generation(self, generation_id: int) -> None:
        """Makes a finished generation the active one and drops the others' vectors."""
        with self.session() as s:
            old = list(
                s.scalars(select(IndexGeneration.id).where(IndexGeneration.id != generation_id))
            )
            for gid in old:
                s.execute(delete(Vector).where(Vector.generation_id == gid))
            s.execute(
                update(IndexGeneration).where(IndexGeneration.id.in_(old)).values(status="retired")
            )
            s.execute(
                update(IndexGeneration)
                .where(IndexGeneration.id == generation_id)
                .values(status="active", completed_at=datetime.now(timezone.utc))
            )

    def add_vectors(self, generation_id: int, ids: Sequence[int], vectors: np.ndarray) -> None:
        """Stores vectors of existing passages in a (building) generation."""
        with self.session() as s:
            s.add_all(Vector(generation_id=generation_id, passage_id=int(pid), data=blob)
                      for pid, blob in zip(ids, vector_blobs(vectors)))
            s.execute(
                update(IndexGeneration)
                .where(IndexGeneration.id == generation_id)
                .values(version=IndexGeneration.version + 1)
            )

    def iter_vectors(self, generation_id: int, dim: int, batch: int = 20_000):
        """Yields (ids int64 [n], vectors float32 [n, dim]) for a whole generation."""
        last = -1
        while True:
            with self.session() as s:
                rows = s.execute(
                    select(Vector.passage_id, Vector.data)
                    .where(Vector.generation_id == generation_id, Vector.passage_id > last)
                    .order_by(Vector.passage_id)
                    .limit(batch)
                ).all()
            if not rows:
                return
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            yield ids, decode_vectors([r[1] for r in rows], dim)
            last = int(ids[-1])

    def count_vectors(self, generation_id: int) -> int:
        with self.session() as s:
            return s.scalar(select(func.count()).where(Vector.generation_id == generation_id)) or 0

    def has_earlier_vectors(self, generation_id: int, dim: int) -> bool:
        """True when the generation holds float32 vectors of earlier versions."""
        with self.session() as s:
            return s.scalar(select(Vector.passage_id).where(
                Vector.generation_id == generation_id,
                func.length(Vector.data) == EARLIER.itemsize * dim).limit(1)) is not None

    def convert_vectors(self, generation_id: int, dim: int, batch: int = 5_000) -> int:
        """Rewrites the generation's float32 vectors as float16, in one transaction: a
        crash leaves all of them as they were or all converted. Returns how many."""
        table = Vector.__table__
        change = table.update().where(table.c.generation_id == bindparam("g"),
                                      table.c.passage_id == bindparam("p")).values(data=bindparam("d"))
        converted, last = 0, -1
        with self.session() as s:
            while True:
                rows = s.execute(select(Vector.passage_id, Vector.data).where(
                    Vector.generation_id == generation_id, Vector.passage_id > last,
                    func.length(Vector.data) == EARLIER.itemsize * dim)
                    .order_by(Vector.passage_id).limit(batch)).all()
                if not rows:
                    return converted
                vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype=EARLIER).reshape(-1, dim)
                s.connection().execute(change, [
                    {"g": generation_id, "p": pid, "d": blob}
                    for (pid, _), blob in zip(rows, vector_blobs(vectors.astype(STORED)))])
                converted += len(rows)
                last = int(rows[-1][0])


def _private_sqlite_file(url: str) -> None:
    """A SQLite database file made 0600 before SQLite creates it with the umask's mode:
    it holds the text of every passage."""
    if not url.startswith("sqlite:///") or url in ("sqlite:///", "sqlite:///:memory:") or "mode=memory" in url:
        return
    from engine.private import private_file

    private_file(sqlite_file(url))
