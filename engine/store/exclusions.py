"""The store's list of forgotten paths inside indexed roots.

    >>> store.add_exclusion("/home/me/corpus/mining")
    >>> store.exclusions_under("/home/me/corpus")      # ['/home/me/corpus/mining']

Forgetting a whole root deletes the root; forgetting something inside one must outlive
the next scan of that root, so it is written down here and `reindex` passes it by.
"""

from __future__ import annotations

from sqlalchemy import delete, select

from engine.scan import is_below
from engine.store.schema import Exclusion


def _under(column, path: str):
    prefix = path.rstrip("/") + "/"
    return (column == path) | column.startswith(prefix, autoescape=True)


class ExclusionsMixin:
    """Exclusion methods of `Store` (which provides `session()`)."""

    def add_exclusion(self, path: str) -> None:
        """Remembers `path`; exclusions below it become redundant and are dropped."""
        with self.session() as s:
            s.execute(delete(Exclusion).where(_under(Exclusion.path, path)))
            s.add(Exclusion(path=path))

    def remove_exclusions(self, path: str) -> list[str]:
        """Forgets exclusions at or below `path`, and any folder above it that hides it.

        The user asked for `path` again, so nothing may keep it out. Returns the paths removed.
        """
        with self.session() as s:
            rows = list(s.scalars(select(Exclusion.path)))
            gone = [p for p in rows if p == path or is_below(p, path) or is_below(path, p)]
            if gone:
                s.execute(delete(Exclusion).where(Exclusion.path.in_(gone)))
            return gone

    def exclusions_under(self, path: str) -> list[str]:
        """Excluded paths at or below `path`, sorted."""
        with self.session() as s:
            return list(s.scalars(select(Exclusion.path).where(_under(Exclusion.path, path)).order_by(Exclusion.path)))

    def exclusions(self) -> list[str]:
        with self.session() as s:
            return list(s.scalars(select(Exclusion.path).order_by(Exclusion.path)))
