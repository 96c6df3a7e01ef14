"""Model folders and archives are untrusted input: names stay inside, values are checked.

    >>> contained(folder, "model.onnx")              # folder/model.onnx
    >>> contained(folder, "../other/model.onnx")     # ModelError: outside the model folder
    >>> validate_manifest(json.loads(text), path)    # ModelError naming the bad field

A manifest names files (`files`, each variant's `file`, `tokenizer_file`, LASER's
`preprocessing.vocab_file`); a crafted one could make the app serve, copy or export a
file from anywhere. Every such name goes through `contained`, and `validate_manifest`
checks each field's type before a dataclass or an encoder trusts it.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath, PureWindowsPath

from engine.errors import ModelError

MAX_DIM = 1 << 16  # far above any sentence encoder; a typo like 3840000 is refused
MAX_LENGTH = 1 << 20  # tokens
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_TEXT_FIELDS = ("name", "family", "pooling", "source", "licence", "notes", "tokenizer_file")


def contained(folder: Path, name: object, what: str = "file", *,
              source: str = "the model manifest", error: type[Exception] = ModelError) -> Path:
    """`folder / name`, refusing names that are absolute, climb out (`..`) or resolve,
    through symlinks, to a place outside `folder`.

    The one check for every file name read from a file (a model manifest, a training
    run's latest.json); `source` and `error` say where the name came from and what to
    raise (ModelError takes a path, other BabelfindErrors only the message).
    """
    folder = Path(folder)

    def refuse(message: str, path: Path):
        return error(message, path) if issubclass(error, ModelError) else error(message)

    if not isinstance(name, str) or not name or "\x00" in name:
        raise refuse(f"{folder}: invalid {what} name {name!r} in {source}", folder)
    posix, windows = PurePosixPath(name), PureWindowsPath(name)
    if posix.is_absolute() or windows.is_absolute() or windows.drive or ".." in posix.parts \
            or ".." in windows.parts:
        raise refuse(f"{folder}: {what} {name!r} in {source} lies outside {folder}", folder)
    path = folder / name
    if not path.resolve().is_relative_to(folder.resolve()):
        raise refuse(f"{path}: {what} {name!r} in {source} leads outside {folder} "
                     "(a symbolic link?)", path)
    return path


def manifest_file_names(data: dict) -> list[tuple[str, object]]:
    """(what, name) of every file a manifest dict names, for containment checks."""
    names = [("listed file", n) for n in data.get("files") or {}]
    for variant, info in (data.get("variants") or {}).items():
        if isinstance(info, dict) and info.get("file") is not None:
            names.append((f"{variant} variant file", info["file"]))
    if "tokenizer_file" in data:
        names.append(("tokenizer file", data["tokenizer_file"]))
    preprocessing = data.get("preprocessing") or {}
    if isinstance(preprocessing, dict) and "vocab_file" in preprocessing:
        names.append(("vocabulary file", preprocessing["vocab_file"]))
    return names


def validate_manifest(data: object, path: Path) -> None:
    """ModelError naming the first field of the wrong type or out of range."""
    if not isinstance(data, dict):
        raise ModelError(f"{path}: a model manifest must be a JSON object, "
                         f"not a {type(data).__name__}", path)
    for key in ("name", "family", "dim", "pooling", "max_length"):
        if key not in data:
            raise ModelError(f"{path}: the model manifest lacks {key!r}", path)
    for key in _TEXT_FIELDS:
        if key in data and not isinstance(data[key], str):
            raise ModelError(f"{path}: {key!r} must be a string, got {data[key]!r}", path)
    _positive_int(data, "dim", MAX_DIM, path)
    _positive_int(data, "max_length", MAX_LENGTH, path)
    if "pad_token_id" in data and not _is_int(data["pad_token_id"], minimum=0):
        raise ModelError(f"{path}: 'pad_token_id' must be an integer >= 0, "
                         f"got {data['pad_token_id']!r}", path)
    _string_map(data, "prefixes", path)
    _dict_field(data, "variants", path)
    _dict_field(data, "preprocessing", path)
    _dict_field(data, "export_parity", path)
    _dict_field(data, "adapter", path)
    if data.get("training") is not None:
        _dict_field(data, "training", path)
    languages = data.get("languages", [])
    if not isinstance(languages, list) or not all(isinstance(x, str) for x in languages):
        raise ModelError(f"{path}: 'languages' must be a list of language codes", path)
    _check_files(data, path)
    _check_variants(data, path)
    folder = Path(path).parent
    for what, name in manifest_file_names(data):
        contained(folder, name, what)


def _is_int(value: object, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def _positive_int(data: dict, key: str, maximum: int, path: Path) -> None:
    value = data[key]
    if not _is_int(value, minimum=1) or value > maximum:
        raise ModelError(f"{path}: {key!r} must be a whole number from 1 to {maximum}, "
                         f"got {value!r}", path)


def _dict_field(data: dict, key: str, path: Path) -> None:
    if key in data and not isinstance(data[key], dict):
        raise ModelError(f"{path}: {key!r} must be a JSON object, got {data[key]!r}", path)


def _string_map(data: dict, key: str, path: Path) -> None:
    _dict_field(data, key, path)
    values = data.get(key) or {}
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in values.items()):
        raise ModelError(f"{path}: {key!r} must map names to strings", path)


def _check_files(data: dict, path: Path) -> None:
    _dict_field(data, "files", path)
    for name, digest in (data.get("files") or {}).items():
        if not isinstance(digest, str) or not _SHA256.match(digest):
            raise ModelError(f"{path}: the checksum of {name!r} is not a SHA-256 hex digest", path)


def _check_variants(data: dict, path: Path) -> None:
    listed = data.get("files") or {}
    for variant, info in (data.get("variants") or {}).items():
        if info is None:
            continue
        if not isinstance(info, dict):
            raise ModelError(f"{path}: variant {variant!r} must be a JSON object", path)
        file = info.get("file")
        if file is not None and (not isinstance(file, str) or file not in listed):
            raise ModelError(f"{path}: the {variant} variant's file {file!r} is not listed "
                             "in 'files'", path)
