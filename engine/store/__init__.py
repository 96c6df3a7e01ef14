"""SQL storage (SQLAlchemy 2.0, Alembic migrations): the source of truth."""

from engine.store.store import (
    DocumentInfo,
    DocumentState,
    DocumentWrite,
    FailureWrite,
    GenerationInfo,
    NewPassage,
    PassageRow,
    Store,
)

__all__ = [
    "DocumentInfo",
    "DocumentState",
    "DocumentWrite",
    "FailureWrite",
    "GenerationInfo",
    "NewPassage",
    "PassageRow",
    "Store",
]
