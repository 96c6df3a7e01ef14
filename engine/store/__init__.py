"""SQL storage (SQLAlchemy 2.0, Alembic migrations): the source of truth."""

from engine.store.store import (
    DocumentState,
    DocumentWrite,
    FailureWrite,
    GenerationInfo,
    NewPassage,
    PassageRow,
    Store,
)

__all__ = [
    "DocumentState",
    "DocumentWrite",
    "FailureWrite",
    "GenerationInfo",
    "NewPassage",
    "PassageRow",
    "Store",
]
