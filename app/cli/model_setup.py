"""First use of a model from the command line: install the bundled models, with one bar.

    >>> parser.set_defaults(run=run_search, uses_model=ACTIVE_MODEL)   # in a command's register()

`app.cli.main` calls `prepare_models` after the arguments are checked and before the
command runs, so every command shares one install path. `uses_model` is ACTIVE_MODEL,
or a function of the parsed arguments returning a model name, ACTIVE_MODEL, or None
when this run needs no model. Only the bundled models are ever installed: a user's own
model name that is missing stays an error from the command.
"""

from __future__ import annotations

import argparse
import sys

from engine.config import DataPaths

ACTIVE_MODEL = "<active model>"


def model_for(args: argparse.Namespace) -> str | None:
    """The model the command will use (ACTIVE_MODEL or a name), or None for none."""
    uses = getattr(args, "uses_model", None)
    return uses(args) if callable(uses) else uses


def prepare_models(paths: DataPaths, which: str) -> None:
    """Makes `which` usable; on a fresh home installs the bundled models first.

    Shows one progress bar on a terminal, and one line either way, so a script's log
    says why the first command took a minute.
    """
    from app.first_run import ensure_models, models_missing
    from app.logging_setup import quiet_onnxruntime

    quiet_onnxruntime()  # before the command makes its first session
    name = None if which == ACTIVE_MODEL else which
    if not models_missing(paths, name):
        return
    print(f"babelfind: {_first_use_work()}", file=sys.stderr)
    bar = _InstallBar()
    try:
        ready = ensure_models(paths, bar.update, name)
    finally:
        bar.close()
    print(f"babelfind: models installed; using {ready}", file=sys.stderr)


def _first_use_work() -> str:
    """What the first use does: copy the models an installer prepared, or build them."""
    from trainer.serving.default_models import prepared_models_dir

    prepared = prepared_models_dir()
    if prepared is not None and prepared.is_dir():
        return "copying the bundled models into the data folder (first use only, seconds)"
    return "installing the bundled models (first use only, about a minute)"


class _InstallBar:
    """A tqdm bar in percent, made on the first report; hidden when stderr is no terminal."""

    def __init__(self):
        self._bar = None

    def update(self, fraction: float, message: str) -> None:
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(total=100, desc="installing models", unit="%", file=sys.stderr,
                             leave=False, disable=not sys.stderr.isatty(),
                             bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed}{postfix}")
        self._bar.n = min(100, round(100 * fraction))
        self._bar.set_postfix_str(message[:48], refresh=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
