"""Exclusions: subfolders and files the user forgot inside an indexed root.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "exclusions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("path", sa.String(4096), nullable=False, unique=True),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("exclusions")
