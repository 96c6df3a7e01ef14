"""What the training wizard shows of a run: its scores, progress texts, its folder on disk.

    >>> rows = sentence_rows(finished.held_out_sentences)   # [(measure, before, after)]
    >>> folder = QtRunFolder(); folder.show_folder(finished.run_dir)

The rows come straight from the trainer's reports (`trainer.mixcse.pair_eval.PairReport`,
`trainer.mixcse.sentence_eval.SentenceReport`, `trainer.mixcse.finish.sts_scores`); nothing is
computed here.
"""

from __future__ import annotations

import math
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QWidget

from app.gui.common import qt_files
from app.gui.common.qt_theme import hint
from trainer.config import PAIR_METRIC, SENTENCE_METRIC, STS_METRIC

TASK_NAMES = {"STSBenchmark": "STS-B", "SICKRelatedness": "SICK-R"}
DEV_TITLES = {STS_METRIC: "STS-B dev (Spearman x 100)",
              PAIR_METRIC: "Held-out translations found first (%)",
              SENTENCE_METRIC: "Held-out sentences told apart (%)"}
NO_METRIC_TITLE = "Not scored (no STS data, too few sentences to hold out)"
# One line on the held-out sentence score, shown under the curve and the results.
SEPARATION_HELP = ("Told apart: how surely the model matches each of your sentences it never "
                   "trained on with a slightly perturbed copy of itself, among all of them "
                   "(higher is better). It shows the model fits your sentences; only labelled "
                   "data (STS, translations) shows whether answers got better.")


def eta_text(seconds: float) -> str:
    """'about 3 min left' style remaining time."""
    if not math.isfinite(seconds) or seconds < 0:
        return ""
    if seconds < 90:
        return f"about {seconds:.0f} s left"
    if seconds < 90 * 60:
        return f"about {seconds / 60:.0f} min left"
    return f"about {seconds / 3600:.1f} h left"


def data_text(started) -> str:
    """What the run learns from, for the status line."""
    parts = []
    if started.pairs is not None:
        parts.append(f"{started.pairs.trained:,} translation pairs")
    if started.corpus is not None:
        parts.append(f"{started.corpus.kept:,} sentences")
    return " and ".join(parts)


def dev_title(metric: str | None) -> str:
    """The evaluation curve's title for `TrainStarted.metric` / `TrainEval.metric`."""
    return NO_METRIC_TITLE if metric is None else DEV_TITLES.get(metric, metric)


def _before_after(held_out: dict | None) -> tuple[dict, dict] | None:
    if not held_out or "base" not in held_out or "best" not in held_out:
        return None
    return held_out["base"], held_out["best"]


def pair_rows(held_out: dict | None) -> list[tuple[str, str, str]]:
    """(measure, before, after) rows of the held-out pairs' reports (`TrainFinished.held_out`)."""
    both = _before_after(held_out)
    if both is None:
        return []
    rows = [("Translations found first (held-out pairs)", "retrieval", "{:.1f}%"),
            ("  sentence -> translation", "source_to_target", "{:.1f}%"),
            ("  translation -> sentence", "target_to_source", "{:.1f}%"),
            ("Same-language sentence ranked above the translation", "same_language_bias", "{:.1f}%"),
            ("Alignment of held-out pairs (lower is better)", "alignment", "{:.3f}"),
            ("Uniformity (lower is better)", "uniformity", "{:.3f}")]
    return [(label, fmt.format(both[0][key]), fmt.format(both[1][key])) for label, key, fmt in rows]


def pair_summary(held_out: dict) -> str:
    before, after = held_out["base"], held_out["best"]
    return (f"Held-out translations found first: {before['retrieval']:.1f}% -> "
            f"{after['retrieval']:.1f}%; a same-language sentence ranked above the translation "
            f"{before['same_language_bias']:.1f}% -> {after['same_language_bias']:.1f}% of the time "
            f"({after['pairs']:,} pairs the model never saw).")


def sentence_rows(held_out: dict | None) -> list[tuple[str, str, str]]:
    """(measure, before, after) rows of the held-out sentences' reports
    (`TrainFinished.held_out_sentences`)."""
    both = _before_after(held_out)
    if both is None:
        return []
    rows = [("Held-out sentences told apart", "separation", "{:.1f}%"),
            ("  perturbed copy found first", "view_retrieval", "{:.1f}%"),
            ("Nearest neighbours kept from the base model", "neighbours_kept", "{:.0f}%"),
            ("Alignment of the copies (lower is better)", "alignment", "{:.3f}"),
            ("Uniformity (lower is better)", "uniformity", "{:.3f}")]
    return [(label, fmt.format(both[0][key]), fmt.format(both[1][key])) for label, key, fmt in rows]


def sentence_summary(held_out: dict) -> str:
    before, after = held_out["base"], held_out["best"]
    return (f"No STS data was found, so {after['sentences']:,} of your sentences were held out: "
            f"told apart {before['separation']:.1f}% -> {after['separation']:.1f}%, "
            f"{after['neighbours_kept']:.0f}% of their nearest neighbours unchanged. "
            + SEPARATION_HELP)


def score_rows(before: dict | None, after: dict) -> list[tuple[str, str, str]]:
    """(measure, before, after) rows of two STS report dicts (`StsReport.to_dict`)."""
    def fmt(report, key, task=None, digits=2):
        value = (report or {}).get("scores", {}).get(task) if task else (report or {}).get(key)
        return "" if value is None else f"{value:.{digits}f}"

    rows = [(TASK_NAMES.get(task, task), fmt(before, None, task), fmt(after, None, task)) for task in after["scores"]]
    rows.append(("Average", fmt(before, "average"), fmt(after, "average")))
    for key in ("alignment", "uniformity"):
        rows.append((f"{key.capitalize()} (lower is better)", fmt(before, key, digits=4), fmt(after, key, digits=4)))
    return rows


class QtRunFolder(QWidget):
    """"Run folder: PATH" (selectable) and a button that opens it in the file manager."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.folder: Path | None = None
        self.failed = None  # the last "Open failed" message box
        self.label = hint("")
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.open_button = QPushButton("Open run folder")
        self.open_button.setToolTip("Checkpoints, the best model, the settings and the scores")
        self.open_button.clicked.connect(self.open)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.label, 1)
        row.addWidget(self.open_button)
        self.show_folder(None)

    def show_folder(self, folder: Path | str | None) -> None:
        self.folder = Path(folder) if folder is not None else None
        self.label.setText(f"Run folder: {self.folder}" if self.folder else "")
        self.open_button.setEnabled(self.folder is not None)
        self.open_button.setVisible(self.folder is not None)

    def open(self) -> bool:
        """Opens the folder; says why in a (non-blocking) message when it cannot."""
        if self.folder is None:
            return False
        if self.folder.is_dir() and qt_files.open_file(self.folder):
            return True
        self.failed = qt_files.open_failed_message(self, self.folder, "open")
        return False
