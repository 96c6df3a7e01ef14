"""Programs that read some formats for us (antiword, catdoc, tesseract), run bounded.

    >>> tool = find_tool("antiword")              # None when not installed
    >>> run_tool(path, [tool, "-m", "UTF-8.txt", "-"], data, budget)   # its stdout, bytes

They are optional: a missing one turns its format into a MissingToolError that names
it and the Debian package that brings it (`babelfind doctor` lists them too). Each run
gets the document's remaining time as its timeout and is killed past it, and its
output is capped, so a hostile file cannot hang or flood the indexer.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from engine.errors import CorruptDocumentError, ExtractionTimeoutError
from engine.extract.limits import Budget

# Environment variable naming a folder searched before PATH (a bundle ships tools there).
TOOLS_ENV = "BABELFIND_TOOLS"
MAX_OUTPUT_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Tool:
    """A program Babelfind can use, what it reads, and where it comes from."""

    name: str
    reads: str  # what it is for, for doctor and skip reasons
    package: str  # the Debian/Ubuntu package that installs it


TOOLS = (
    Tool("antiword", "legacy Word documents (.doc)", "antiword"),
    Tool("catdoc", "legacy Word documents (.doc), when antiword is absent", "catdoc"),
    Tool("tesseract", "images and scanned PDF pages (OCR)", "tesseract-ocr"),
)


def tool_info(name: str) -> Tool:
    return next(t for t in TOOLS if t.name == name)


def find_tool(name: str) -> str | None:
    """Full path of the program `name`, looked up in $BABELFIND_TOOLS then PATH; None if absent."""
    extra = os.environ.get(TOOLS_ENV)
    if extra:
        found = shutil.which(name, path=extra)
        if found:
            return found
    return shutil.which(name)


def install_hint(*names: str) -> str:
    """Example: install_hint("antiword") == "sudo apt-get install antiword" """
    packages = dict.fromkeys(tool_info(n).package for n in names)
    return f"sudo apt-get install {' '.join(packages)}"


def run_tool(path: Path, command: list[str], data: bytes, budget: Budget, *, suffix: str = "",
             timeout: float | None = None) -> bytes:
    """Runs `command` with `data` in a temporary file named by `{input}` in it; returns stdout.

    Example: run_tool(p, ["antiword", "{input}"], data, budget, suffix=".doc")

    Raises:
        ExtractionTimeoutError: the program ran past the document's deadline (it is killed).
        CorruptDocumentError: it failed; the reason quotes the first line it printed.
    """
    import time

    remaining = budget.deadline - time.monotonic()
    limit = remaining if timeout is None else min(timeout, remaining)
    if limit <= 0:
        budget.check_time()
    with tempfile.TemporaryDirectory(prefix="babelfind-tool-") as folder:
        source = Path(folder) / f"input{suffix}"
        source.write_bytes(data)
        argv = [str(source) if part == "{input}" else part for part in command]
        try:
            done = subprocess.run(argv, capture_output=True, timeout=max(limit, 0.1), cwd=folder,
                                  stdin=subprocess.DEVNULL, env=_tool_environment())
        except subprocess.TimeoutExpired as e:
            raise ExtractionTimeoutError(
                path, f"{Path(command[0]).name} took longer than the {budget.seconds_allowed:g} s limit per document"
            ) from e
        except OSError as e:
            raise CorruptDocumentError(path, f"{Path(command[0]).name} could not run ({e})") from e
    if done.returncode != 0:
        message = (done.stderr or done.stdout).decode("utf-8", "replace").strip().splitlines()
        first = message[0][:160] if message else f"exit status {done.returncode}"
        raise CorruptDocumentError(path, f"{Path(command[0]).name} could not read it ({first})")
    return done.stdout[:MAX_OUTPUT_BYTES]


def _tool_environment() -> dict[str, str]:
    """The tools' messages in English (they are matched), and one thread each for OCR."""
    env = dict(os.environ)
    env.update(LC_ALL="C.UTF-8", LANG="C.UTF-8", OMP_THREAD_LIMIT="1")
    return env


def tool_version(name: str) -> str | None:
    """The first line a tool prints for its version ("tesseract 5.3.0"); None if absent or silent."""
    program = find_tool(name)
    if program is None:
        return None
    flags = {"antiword": ["-h"], "catdoc": ["-V"], "tesseract": ["--version"]}[name]
    try:
        done = subprocess.run([program, *flags], capture_output=True, timeout=10, stdin=subprocess.DEVNULL,
                              env=_tool_environment())
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [line.strip() for line in (done.stdout + done.stderr).decode("utf-8", "replace").splitlines()]
    for line in lines:  # antiword's help has a "Version: 0.37" line; the others start with it
        if line.lower().startswith("version:"):
            return f"{name} {line.split(':', 1)[1].strip()}"[:80]
    return next((line[:80] for line in lines if line and "usage" not in line.lower()), None)
