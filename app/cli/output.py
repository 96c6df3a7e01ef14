"""What the model commands print: JSON with --json, a line of text otherwise.

    >>> print_result(manifest_dict(manifest), args.json, f"imported {manifest.name}")
"""

from __future__ import annotations

import json


def print_result(data, as_json: bool, text: str) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False) if as_json else text)


def manifest_dict(manifest) -> dict:
    """A model manifest as the JSON `models info --json` prints."""
    return json.loads(manifest.to_json())
