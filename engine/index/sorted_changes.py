"""Per-passage tables kept as sorted arrays plus a dict of recent changes, merged in one go.

    >>> ids, values = merge_changes(ids, values, {7: row, 3: None})   # 7 added, 3 removed

The hubness penalties and the documents' passages are both looked up by passage id with
`np.searchsorted` on a sorted id array; additions and removals arrive one document at a
time, so they wait in a dict (`None` for a removed passage) and are merged here when the
dict grows or a lookup needs them.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def worth_merging(recent: Mapping[int, object], held: int) -> bool:
    """Whether the recent changes are many enough to merge now: 4,096, or an eighth of the
    ids held, so a lookup's pass over the dict stays small beside the arrays' search."""
    return len(recent) > max(4096, held // 8)


def merge_changes(ids: np.ndarray, values: np.ndarray, recent: Mapping[int, object]) -> tuple[np.ndarray, np.ndarray]:
    """(ids, values) sorted by id, with every passage in `recent` dropped from the base and
    those whose value is not None added with it. `values` has one row per id, of any shape."""
    changed = np.fromiter(recent.keys(), np.int64, len(recent))
    added = [(pid, value) for pid, value in recent.items() if value is not None]
    keep = ~np.isin(ids, changed)
    new_ids = np.array([pid for pid, _ in added], np.int64)
    new_values = np.array([value for _, value in added], values.dtype).reshape((len(added),) + values.shape[1:])
    merged_ids = np.concatenate([ids[keep], new_ids])
    merged_values = np.concatenate([values[keep], new_values])
    order = np.argsort(merged_ids, kind="stable")
    return merged_ids[order], merged_values[order]
