"""Path keys become collision-free: a literal backslash that looks like an escape is doubled.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01

Before, a name that was not UTF-8 was stored with `\\xNN` escapes while a literal
backslash stayed single, so the file named `coll\\xff.txt` and the bytes coll<0xFF>.txt
had the same key and the second one failed the whole batch with an IntegrityError.
Only keys holding a backslash can change. An old key is read as escaped bytes when
un-escaping gives bytes that are not UTF-8 (the old code escaped only such names),
else as a literal name. A guess that is wrong for some odd name heals itself: the next
index run finds no file under the old key, drops it and indexes the file again.

The encoding is copied here, frozen, rather than imported from engine.scan.
"""

import os
import re

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_SURROGATE = "\ud800-\udfff"
_ESCAPE = re.compile(f"\\\\(?=[\\\\xu{_SURROGATE}])|[{_SURROGATE}]")
_OLD_ESCAPE = re.compile(r"\\x([89a-f][0-9a-f])")


def _escape(match: re.Match) -> str:
    found = match.group()
    if found == "\\":
        return "\\\\"
    code = ord(found)
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def new_key(old: str) -> str:
    """The 0003 key for a key stored by 0001 or 0002."""
    raw = _OLD_ESCAPE.sub(lambda m: chr(0xDC00 + int(m.group(1), 16)), old)
    as_bytes = raw.encode("utf-8", "surrogateescape")
    try:
        as_bytes.decode("utf-8")
        name = old  # valid UTF-8 once un-escaped: it was a literal name all along
    except UnicodeDecodeError:
        name = as_bytes.decode("utf-8", "surrogateescape")
    return _ESCAPE.sub(_escape, name)


def _rekey(table_name: str) -> None:
    table = sa.table(table_name, sa.column("id", sa.Integer), sa.column("path", sa.String))
    bind = op.get_bind()
    rows = bind.execute(sa.select(table.c.id, table.c.path).where(table.c.path.contains("\\", autoescape=True)))
    for row_id, old in rows.all():
        key = new_key(old)
        if key != old:
            bind.execute(sa.update(table).where(table.c.id == row_id).values(path=key))


def upgrade() -> None:
    if os.name == "nt":
        return  # Windows keys had no escapes before; unpaired surrogates simply failed
    _rekey("roots")
    _rekey("documents")
    _rekey("exclusions")  # forgotten paths (0002) are keys too


def downgrade() -> None:
    # 0001 keys cannot tell the colliding names apart; the new keys are kept.
    pass
