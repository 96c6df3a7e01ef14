"""Asking before a model switch: what will be re-encoded, for how long, and what is lost.

    >>> if confirm_model_switch(window, library.status(), get_manifest("all-minilm-l6-v2")):
    ...     window.switch_model("all-minilm-l6-v2")

A switch re-encodes every passage of the library. It runs in the background and the old
index keeps answering, but on a large library it takes a long time, and an English-only
model makes every other language unsearchable: people must know before they start.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from PySide6.QtWidgets import QMessageBox

from app.first_run import OfferedModel
from app.gui.common.qt_languages import language_name
from app.gui.common.texts import duration_text

# Passages per second on a laptop CPU, slowest and fastest default-model runs in
# docs/benchmarks.md ("Indexing throughput"); a GPU is much faster.
CPU_PASSAGES_PER_S = (25.0, 75.0)


@dataclass(frozen=True)
class SwitchPlan:
    """What a switch to `model` would do, in words a person can judge."""

    model: str
    summary: str  # documents and passages to re-encode, and the time it may take
    warning: str | None  # languages the target model was not trained on, if any


def uncovered_languages(library_languages: Mapping[str, int], model_languages) -> dict[str, int]:
    """Documents per language that the target model does not list.

    Example: uncovered_languages({"en": 5, "de": 3}, ("en",)) == {"de": 3}
    An empty model language list means "not stated": nothing is reported.
    """
    if not model_languages:
        return {}
    known = set(model_languages)
    return {lang: n for lang, n in library_languages.items() if lang and lang not in known}


def switch_plan(status, manifest) -> SwitchPlan:
    """Example: switch_plan(library.status(), get_manifest("all-minilm-l6-v2")).warning
    == "all-minilm-l6-v2 was trained on English only. 3 documents in German (de) ..."
    """
    slow, fast = (status.passages / rate for rate in CPU_PASSAGES_PER_S)
    if status.passages == 0:
        summary = f"Nothing is indexed yet: {manifest.name} will be used for the documents you add."
    else:
        summary = (
            f"Every passage is re-encoded with {manifest.name}: {status.documents:,} documents, "
            f"{status.passages:,} passages. On a CPU this may take {duration_text(fast)} to "
            f"{duration_text(slow)} (less on a GPU). It runs in the background; searches keep "
            f"using {status.model} until it is done."
        )
    if isinstance(manifest, OfferedModel):
        summary = (f"{manifest.name} is built first from the bundled weights (about a minute, "
                   f"once). " + summary)
    return SwitchPlan(manifest.name, summary, _language_warning(status, manifest))


def _language_warning(status, manifest) -> str | None:
    uncovered = uncovered_languages(status.languages, manifest.languages)
    if not uncovered:
        return None
    trained = (
        "English only" if tuple(manifest.languages) == ("en",)
        else f"{len(manifest.languages)} languages"
    )
    count = sum(uncovered.values())
    top = sorted(uncovered.items(), key=lambda kv: -kv[1])[:6]
    names = ", ".join(f"{language_name(lang)} ({lang})" for lang, _ in top)
    more = " and others" if len(uncovered) > len(top) else ""
    return (
        f"{manifest.name} was trained on {trained}. {count:,} of your documents are in "
        f"languages it does not know: {names}{more}. Searching them, and searching across "
        "languages, will work much worse."
    )


def confirm_model_switch(parent, status, manifest) -> bool:
    """Shows the plan and asks; True when the person chose to re-encode."""
    plan = switch_plan(status, manifest)
    box = QMessageBox(parent)
    box.setObjectName("modelSwitchConfirm")
    box.setWindowTitle("Switch model")
    box.setIcon(QMessageBox.Icon.Warning if plan.warning else QMessageBox.Icon.Question)
    box.setText(f"Switch to {plan.model}?")
    box.setInformativeText(plan.summary + (f"\n\n{plan.warning}" if plan.warning else ""))
    start = box.addButton("Re-encode", QMessageBox.ButtonRole.AcceptRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel if plan.warning else start)
    box.exec()
    return box.clickedButton() is start
