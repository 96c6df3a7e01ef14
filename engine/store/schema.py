"""SQLAlchemy 2.0 models: the database is the source of truth for everything indexed.

The FAISS index is only a fast cache of the `vectors` table: FAISS ids are passage ids,
and each index generation (one per encoder model) keeps its own vectors, so changing
model re-encodes into a new generation while the old one keeps answering.
"""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class Base(DeclarativeBase):
    pass


class Root(Base):
    """A folder (or single file) the user asked to index."""

    __tablename__ = "roots"

    id: Mapped[int] = mapped_column(primary_key=True)
    path: Mapped[str] = mapped_column(String(4096), unique=True)
    watch: Mapped[bool] = mapped_column(Boolean, default=False)
    added_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    last_indexed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class Document(Base):
    __tablename__ = "documents"

    id: Mapped[int] = mapped_column(primary_key=True)
    root_id: Mapped[int] = mapped_column(ForeignKey("roots.id", ondelete="CASCADE"), index=True)
    path: Mapped[str] = mapped_column(String(4096), unique=True)
    size: Mapped[int] = mapped_column(Integer)
    mtime: Mapped[float] = mapped_column(Float)
    content_hash: Mapped[str | None] = mapped_column(String(64))  # sha256 hex; None if unreadable
    file_type: Mapped[str] = mapped_column(String(16))  # extension without the dot
    format: Mapped[str | None] = mapped_column(String(16))  # what extraction found
    language: Mapped[str | None] = mapped_column(String(8))  # ISO 639-1
    # "indexed" | "failed" | "container" (an archive or mailbox: no text of its own, its
    # members are documents; it is not counted as one)
    status: Mapped[str] = mapped_column(String(16))
    error: Mapped[str | None] = mapped_column(Text)  # readable reason when failed
    indexed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # The document holding this one (an archive, a message): its key; None for a file on disk.
    parent: Mapped[str | None] = mapped_column(String(4096), index=True)
    title: Mapped[str | None] = mapped_column(Text)  # its own title (a message's subject)
    # Its own date (a message's Date header, epoch seconds): `after:`/`before:` prefer it to mtime.
    date: Mapped[float | None] = mapped_column(Float)

    passages: Mapped[list[Passage]] = relationship(
        back_populates="document", cascade="all, delete-orphan", passive_deletes=True
    )


class DocumentText(Base):
    """The extracted text of a document that is costly to read again (a member, an OCR'd
    scan), as engine.store.texts encodes it; passage offsets refer to this text."""

    __tablename__ = "document_texts"

    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)


class Passage(Base):
    """A few sentences of a document; its id is also its FAISS vector id."""

    __tablename__ = "passages"
    # Never reuse the id of a deleted passage: ids are FAISS ids too.
    __table_args__ = {"sqlite_autoincrement": True}

    id: Mapped[int] = mapped_column(primary_key=True)
    document_id: Mapped[int] = mapped_column(
        ForeignKey("documents.id", ondelete="CASCADE"), index=True
    )
    ordinal: Mapped[int] = mapped_column(Integer)  # position in the document
    text: Mapped[str] = mapped_column(Text)
    start: Mapped[int] = mapped_column(Integer)  # character offsets in the extracted text
    end: Mapped[int] = mapped_column(Integer)
    page: Mapped[int | None] = mapped_column(Integer)  # 1-based PDF page
    language: Mapped[str | None] = mapped_column(String(8))
    # The title and section heading the passage is encoded with (engine.passage_context);
    # None: its own words only (no title nor heading, or indexed before contexts existed).
    context: Mapped[str | None] = mapped_column(Text)

    document: Mapped[Document] = relationship(back_populates="passages")


class IndexGeneration(Base):
    """The vectors of every passage under one model.

    `version` grows with every committed change to this generation's vectors; the
    FAISS file saved on disk records the version it reflects, so a file that lags
    behind (the app was killed) is rebuilt from the stored vectors on open.
    """

    __tablename__ = "index_generations"

    id: Mapped[int] = mapped_column(primary_key=True)
    model_name: Mapped[str] = mapped_column(String(200))
    dim: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16))  # "building" | "active" | "retired"
    version: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    completed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class Vector(Base):
    """One passage's vector in one generation: float16 little-endian bytes (earlier versions:
    float32; engine.store.vector_blobs reads both)."""

    __tablename__ = "vectors"

    generation_id: Mapped[int] = mapped_column(
        ForeignKey("index_generations.id", ondelete="CASCADE"), primary_key=True
    )
    passage_id: Mapped[int] = mapped_column(
        ForeignKey("passages.id", ondelete="CASCADE"), primary_key=True
    )
    data: Mapped[bytes] = mapped_column(LargeBinary)


Index("ix_vectors_passage", Vector.passage_id)


class Exclusion(Base):
    """A file or folder inside a root that the user forgot: scans of the root pass it by."""

    __tablename__ = "exclusions"

    id: Mapped[int] = mapped_column(primary_key=True)
    path: Mapped[str] = mapped_column(String(4096), unique=True)
    added_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
