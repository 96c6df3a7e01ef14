"""After training: export the best checkpoint to ONNX, register it with its scores, activate.

    >>> manifest = finish_training(finished, "my-notes-e5", sts_dir=sts, activate=True)
    >>> manifest.training["sts_after"]["average"]

The caller re-encodes an existing library after activation (`Library.switch_model(name)`,
a generator); `babelfind train --activate` does that.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable, Iterator

from engine.config import DataPaths, data_paths
from engine.model_manifest import ModelManifest
from engine.models import set_active

log = logging.getLogger(__name__)

Progress = Callable[[float, str], None]
SERVE_MAX_LENGTH = 512  # the exported model's limit (capped by its position table)


def sts_scores(folder: Path, pooling: str, prefix: str, sts_dir: Path) -> dict:
    """STS report (dict) of a transformers folder with the run's pooling (MLP dropped)."""
    from trainer.evaluate import evaluate_sts
    from trainer.mixcse.model import SentenceModel, torch_encode

    model = SentenceModel.load(folder, pooling).eval()
    return evaluate_sts(torch_encode(model, prefix, max_len=256), sts_dir).to_dict()


def sts_before_and_after(finished, sts_dir: Path, paths: DataPaths | None = None) -> Iterator[str]:
    """Yields which model it scores now; returns {"before": base report, "after": best checkpoint's}."""
    from trainer.mixcse.model import resolve_base_model

    config = finished.config
    yield "the base model"
    before = sts_scores(resolve_base_model(config.base, paths).path, config.pooling, config.text_prefix, sts_dir)
    yield "the trained model"
    after = sts_scores(Path(finished.best_checkpoint) / "model", config.pooling, config.text_prefix, sts_dir)
    return {"before": before, "after": after}


def finish_training(finished, name: str, *, sts_dir: Path | None = None, sts_before: dict | None = None,
                    sts_after: dict | None = None, activate: bool = False, paths: DataPaths | None = None,
                    replace_existing: bool = False, variants=("int8",),
                    progress: Progress | None = None) -> ModelManifest:
    """Exports `finished.best_checkpoint` as registry model `name` and returns its manifest.

    Args:
        finished: the run's `TrainFinished` event.
        sts_dir: STS data; when given, the base model and the best checkpoint are scored
            and both reports go into the manifest.
        sts_before, sts_after: those reports when the caller already has them (the
            wizard shows them before export), so they are not computed again.
        activate: make the new model active (the caller re-encodes the library).
    """
    from trainer.mixcse.model import resolve_base_model
    from trainer.serving.export import export_transformer

    paths = paths or data_paths()
    progress = progress or (lambda fraction, message: None)
    config = finished.config
    best_model = Path(finished.best_checkpoint) / "model"
    export_pooling = "mean" if config.pooling == "mean" else "cls"
    training = {"config": config.to_dict(), "best_step": finished.best_step,
                "steps": finished.steps, "metric": finished.metric, "best_score": finished.best_score,
                "held_out_pairs": finished.held_out, "held_out_sentences": finished.held_out_sentences,
                "transformers_dir": str(best_model.resolve()), "method": _method(config)}
    if sts_dir is not None:
        progress(0.0, "scoring the base model on STS")
        base = resolve_base_model(config.base, paths)
        training["sts_before"] = sts_before or sts_scores(base.path, config.pooling, config.text_prefix, sts_dir)
        progress(0.3, "scoring the trained model on STS")
        training["sts_after"] = sts_after or sts_scores(best_model, config.pooling, config.text_prefix, sts_dir)
    prefixes = _serving_prefixes(config, paths)
    manifest = export_transformer(
        best_model, name, pooling=export_pooling, prefixes=prefixes, max_length=_max_length(best_model),
        languages=_languages(config, paths), source=f"{_method(config)} fine-tuning of {config.base}",
        licence=_licence(config, paths), training=training, variants=variants, paths=paths,
        replace_existing=replace_existing,
        progress=lambda f, m: progress(0.6 + 0.4 * f, m))
    if activate:
        set_active(name, paths)
    return manifest


def _max_length(folder: Path) -> int:
    """512 tokens, or fewer when the position table is shorter (the export tokenises with it)."""
    import json

    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    return min(SERVE_MAX_LENGTH, int(config.get("max_position_embeddings", SERVE_MAX_LENGTH)))


def _method(config) -> str:
    loss = "SimCSE" if config.lam is None else f"MixCSE (lambda {config.lam}, tau {config.tau})"
    return f"{loss} on translation pairs" if config.pairs else loss


def _base_manifest(config, paths: DataPaths):
    from engine.errors import ModelError
    from engine.models import get_manifest

    if Path(config.base).expanduser().is_dir():
        return None
    try:
        return get_manifest(config.base, paths)
    except ModelError:  # a bundled default not installed in this registry (yet)
        from trainer.serving.default_models import default_models

        return next((m for m in default_models() if m.name == config.base), None)


def _serving_prefixes(config, paths: DataPaths) -> dict:
    base = _base_manifest(config, paths)
    if base is not None:
        return dict(base.prefixes)
    # served as trained: one prefix on every sentence, or a pair's passage side's own
    passage = config.passage_prefix if config.pair_roles == "query-passage" else config.text_prefix
    return {"query": config.text_prefix or "", "passage": passage or ""}


def _languages(config, paths: DataPaths) -> tuple[str, ...]:
    base = _base_manifest(config, paths)
    return tuple(base.languages) if base is not None else ()


def _licence(config, paths: DataPaths) -> str:
    base = _base_manifest(config, paths)
    return f"as the base model: {base.licence}" if base is not None else "as the base model"
