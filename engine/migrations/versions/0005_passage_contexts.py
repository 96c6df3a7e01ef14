"""Each passage's context: the title and section heading it is encoded with.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-07

`passages.context` is what engine.passage_context adds to a passage's vector, kept so that
a model switch encodes the passages as the indexer did. Passages stored before it have
none, and keep their vectors of their own words until their file is indexed again.
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("passages") as batch:
        batch.add_column(sa.Column("context", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("passages") as batch:
        batch.drop_column("context")
