"""What ordinary sentences reach in a library (engine.search.reference_level), kept
between processes beside the FAISS file, `generation-<id>.levels.json`:

    {"format": 1, "stamp": "...", "levels": {"en": [27626, 0.517], "": [27626, 0.52]}}

A level is one batched search of a language's reference queries (0.1-0.15 s at 27k
passages), and every command-line search is a new process that would measure it again.
Each entry holds the library's size when measured, so a reader applies the same 10% drift
rule as the process that wrote it; the stamp names what else a level depends on (the
corrections' settings, the reference sentences), and a file of another stamp is ignored.
Writing is best effort: a read-only folder or a race between two processes costs only a
measurement.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from engine.atomic import atomic_file

log = logging.getLogger(__name__)

FORMAT_VERSION = 1

Level = tuple[int, float | None]  # (passages when measured, the level; None: nothing to measure)


def levels_file_for(folder: Path, generation_id: int) -> Path:
    return Path(folder) / f"generation-{generation_id}.levels.json"


def read_levels(path: Path, stamp: str) -> dict[str, Level]:
    """language key ('' for pooled) -> (passages, level) kept under `stamp`; {} when there
    is no such file, it is damaged, or it was written under another stamp."""
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:  # UnicodeDecodeError is a ValueError
        log.info("the answer levels file %s cannot be read (%s); they are measured again", path, e)
        return {}
    if not isinstance(data, dict) or data.get("format") != FORMAT_VERSION or data.get("stamp") != stamp:
        return {}
    levels = data.get("levels")
    return {key: (int(value[0]), None if value[1] is None else float(value[1]))
            for key, value in (levels.items() if isinstance(levels, dict) else ())
            if isinstance(key, str) and _is_entry(value)}


def keep_level(path: Path, stamp: str, key: str, level: Level) -> None:
    """Adds (or replaces) one language's level in the file, keeping the others of the same stamp."""
    levels = read_levels(path, stamp)
    levels[key] = level
    try:
        with atomic_file(Path(path), "w", encoding="utf-8") as f:
            json.dump({"format": FORMAT_VERSION, "stamp": stamp, "levels": levels}, f)
    except OSError as e:
        log.info("the answer levels cannot be kept in %s (%s)", path, e)


def _is_entry(value) -> bool:
    return (isinstance(value, list) and len(value) == 2 and isinstance(value[0], int)
            and (value[1] is None or isinstance(value[1], (int, float))))
