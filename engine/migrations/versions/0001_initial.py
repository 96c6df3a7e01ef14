"""Initial schema: roots, documents, passages, index generations, vectors.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "roots",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("path", sa.String(4096), nullable=False, unique=True),
        sa.Column("watch", sa.Boolean, nullable=False),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_indexed_at", sa.DateTime(timezone=True)),
    )
    op.create_table(
        "documents",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("root_id", sa.Integer, sa.ForeignKey("roots.id", ondelete="CASCADE"), nullable=False),
        sa.Column("path", sa.String(4096), nullable=False, unique=True),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("mtime", sa.Float, nullable=False),
        sa.Column("content_hash", sa.String(64)),
        sa.Column("file_type", sa.String(16), nullable=False),
        sa.Column("format", sa.String(16)),
        sa.Column("language", sa.String(8)),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("indexed_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_documents_root_id", "documents", ["root_id"])
    op.create_table(
        "passages",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "document_id", sa.Integer, sa.ForeignKey("documents.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("ordinal", sa.Integer, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("start", sa.Integer, nullable=False),
        sa.Column("end", sa.Integer, nullable=False),
        sa.Column("page", sa.Integer),
        sa.Column("language", sa.String(8)),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_passages_document_id", "passages", ["document_id"])
    op.create_table(
        "index_generations",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("model_name", sa.String(200), nullable=False),
        sa.Column("dim", sa.Integer, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("completed_at", sa.DateTime(timezone=True)),
    )
    op.create_table(
        "vectors",
        sa.Column(
            "generation_id",
            sa.Integer,
            sa.ForeignKey("index_generations.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column(
            "passage_id", sa.Integer, sa.ForeignKey("passages.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("data", sa.LargeBinary, nullable=False),
    )
    op.create_index("ix_vectors_passage", "vectors", ["passage_id"])


def downgrade() -> None:
    for table in ("vectors", "index_generations", "passages", "documents", "roots"):
        op.drop_table(table)
