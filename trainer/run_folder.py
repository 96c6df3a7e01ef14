"""A training run's folder as front ends read it, without torch: its last checkpoint.

    >>> latest_checkpoint(Path("~/.local/share/babelfind/training/run-20260101-120000"))
    >>> checkpoint_step(path)        # 120 for checkpoints/step-00000120

The layout and the writing are trainer.checkpoint's; the window asks what a cancelled
run kept, and must not import torch to know.
"""

from __future__ import annotations

import json
from pathlib import Path

from engine.errors import InputError
from engine.model_files import contained

LATEST = "latest.json"
BEST = "best"
STEP_PREFIX = "step-"


def latest_checkpoint(out_dir: Path) -> Path | None:
    """The checkpoint `latest.json` names, kept inside `out_dir`; None before the first one."""
    latest = Path(out_dir) / LATEST
    try:
        data = json.loads(latest.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise InputError(f"{latest} is unreadable: {e}") from e
    if not isinstance(data, dict) or not isinstance(data.get("path"), str):
        raise InputError(f"{latest} does not name a checkpoint (expected {{\"path\": ...}})")
    path = contained(Path(out_dir), data["path"], "checkpoint", source=str(latest), error=InputError)
    return path if (path / "state.pt").is_file() else None


def checkpoint_step(path: Path) -> int:
    """The step a checkpoint folder was written at: checkpoint_step(Path("step-00000120")) == 120."""
    return int(Path(path).name.removeprefix(STEP_PREFIX))
