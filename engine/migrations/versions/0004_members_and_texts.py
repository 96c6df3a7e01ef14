"""Documents inside documents, titles, and the text of documents that are costly to read again.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02

`documents.parent` is the key of the document that holds this one (an archive, a
message), NULL for a file on disk; a member's key is its parent's key, "/", its name.
`documents.title` is the document's own title (a message's subject), `documents.date`
its own date (a message's Date header), which date filters prefer to the mtime. `document_texts`
keeps the extracted text of members and OCR'd documents, so a preview never unpacks
an archive or runs OCR again (the offsets of stored passages refer to this text).
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("documents") as batch:
        batch.add_column(sa.Column("parent", sa.String(4096), nullable=True))
        batch.add_column(sa.Column("title", sa.Text, nullable=True))
        batch.add_column(sa.Column("date", sa.Float, nullable=True))
    op.create_index("ix_documents_parent", "documents", ["parent"])
    op.create_table(
        "document_texts",
        sa.Column("document_id", sa.Integer, sa.ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("data", sa.LargeBinary, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("document_texts")
    op.drop_index("ix_documents_parent", "documents")
    with op.batch_alter_table("documents") as batch:
        batch.drop_column("date")
        batch.drop_column("title")
        batch.drop_column("parent")
