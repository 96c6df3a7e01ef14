"""The int8 gate's verdicts for the bundled models, measured once and shipped.

    >>> decision = int8_decision("multilingual-e5-small", sha256_file(weights))
    >>> decision.scheme or decision.record["reason"]      # a scheme that passed, or why none

A user's machine has no benchmark data, so the gate (trainer.serving.int8_gate) cannot run where
the default models are installed. bench/bench_int8_gate.py measures it and its verdicts
are committed in resources/models/int8_evidence.json, keyed by model name, the SHA-256 of
the weight source and the scheme id. The installer builds int8 only by a scheme whose
evidence for these exact weights passed; otherwise the manifest records why not.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

from engine.errors import ModelError
from engine.model_manifest import ModelManifest

EVIDENCE_FILE = "int8_evidence.json"
NOT_USED_HERE = "not used on this CPU"


def evidence_path() -> Path:
    """resources/models/int8_evidence.json (BABELFIND_RESOURCES moves resources/)."""
    from engine.resources import resources_dir

    return resources_dir() / "models" / EVIDENCE_FILE


def load_evidence(path: Path | None = None) -> dict:
    """{"models": {name: [entry, ...]}}; ModelError naming the file when unreadable."""
    path = Path(path) if path is not None else evidence_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"models": {}}
    except (OSError, ValueError) as e:
        raise ModelError(f"int8 evidence file is unreadable: {path} ({e})", path) from e
    if not isinstance(data.get("models"), dict):
        raise ModelError(f"{path}: no 'models' table", path)
    return data


@dataclass(frozen=True)
class Int8Decision:
    """What to do about int8 for one model: `scheme` to build (None: none), and the
    `record` for its manifest's variants["int8"] (gate, reason, the measured numbers)."""

    scheme: str | None
    record: dict


def int8_decision(name: str, weights_sha256: str, evidence: dict | None = None) -> Int8Decision:
    """The fastest scheme (quantise.DEFAULT_SCHEMES' order, then the file's) whose evidence
    for exactly these weights passed and whose products this CPU adds exactly; else none,
    with why.

    >>> int8_decision("multilingual-e5-small", "ab12...").record["reason"]
    'dynamic-pc: est +1.75 points Tatoeba error (gate: <= 2 per language); ...'
    """
    evidence = evidence if evidence is not None else load_evidence()
    from trainer.serving.quantise import DEFAULT_SCHEMES

    entries = [_as_seen_here(e) for e in evidence["models"].get(name, [])
               if e.get("weights_sha256") == weights_sha256]
    speed = {scheme_id: i for i, scheme_id in enumerate(DEFAULT_SCHEMES)}
    passed = sorted((e for e in entries if e.get("gate") == "passed"),
                    key=lambda e: speed.get(e["scheme"], len(speed)))
    if passed:
        return Int8Decision(passed[0]["scheme"], _record(passed[0]))
    if not entries:
        return Int8Decision(None, {
            "file": None, "gate": "not run",
            "reason": f"no int8 gate evidence for these weights (sha256 {weights_sha256[:12]}…) "
                      f"in {EVIDENCE_FILE}"})
    reason = "; ".join(f"{e['scheme']}: {e.get('reason', e.get('gate'))}" for e in entries)
    # refused when every scheme was; one that lacks full evidence leaves it incomplete
    gates = {e.get("gate") for e in entries}
    gate = "refused" if gates == {"refused"} else NOT_USED_HERE if gates <= {"refused", NOT_USED_HERE} \
        else "incomplete"
    return Int8Decision(None, _record(entries[0]) | {
        "file": None, "gate": gate, "reason": reason,
        "schemes_tried": [{"scheme": e["scheme"], "gate": e.get("gate"), "reason": e.get("reason")}
                          for e in entries]})


def _as_seen_here(entry: dict) -> dict:
    """`entry`, or when it passed with products this CPU's int8 kernels would saturate,
    the same marked NOT_USED_HERE: its evidence was measured where they add exactly."""
    from trainer.serving.quantise import SATURATES_HERE, SCHEMES

    int8_scheme = SCHEMES.get(entry.get("scheme"))
    if entry.get("gate") != "passed" or int8_scheme is None or int8_scheme.exact_here():
        return entry
    return entry | {"gate": NOT_USED_HERE, "reason": f"passed, but {SATURATES_HERE}"}


def _record(entry: dict) -> dict:
    record = {k: v for k, v in entry.items() if k != "weights_sha256"}
    return record | {"evidence": f"resources/models/{EVIDENCE_FILE}"}


def apply_int8_decision(folder: Path, manifest: ModelManifest, decision: Int8Decision,
                        texts: Sequence[str] | None = None) -> ModelManifest:
    """`manifest` with variants["int8"] set by `decision`, building the int8 file into
    `folder` (beside model.onnx) when a scheme passed. The caller writes the manifest.

    The file is built here, so the cosine check (`texts`, default the export parity set)
    confirms it behaves as the measured one; if not, it is removed and refused.
    """
    from trainer.serving.quantise import INT8_FILE, _cosine_problem, _mean_cosine, build_int8, scheme

    folder = Path(folder)
    if decision.scheme is None:
        return replace(manifest, variants=manifest.variants | {"int8": decision.record})
    from engine.encoders.parity import PARITY_SENTENCES

    texts = list(texts or PARITY_SENTENCES)
    int8_scheme = scheme(decision.scheme)
    if int8_scheme.method == "static":  # its calibration text is benchmark data, not shipped
        return replace(manifest, variants=manifest.variants | {"int8": decision.record | {
            "file": None, "gate": "refused",
            "reason": f"{int8_scheme.id} needs its calibration sentences to be rebuilt"}})
    # built in a scratch folder and moved in whole: a crash leaves no half file to list
    scratch = Path(tempfile.mkdtemp(prefix=".export-int8-", dir=folder.parent))
    try:
        build_int8(int8_scheme, manifest, folder, scratch / INT8_FILE, texts)
        os.replace(scratch / INT8_FILE, folder / INT8_FILE)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    mean, worst = _mean_cosine(manifest, folder, INT8_FILE, texts)
    record = decision.record | {"file": INT8_FILE, "for": "cpu", "weight_levels": int8_scheme.weight_levels,
                                "mean_cosine": mean, "min_cosine": worst}
    problem = _cosine_problem(int8_scheme.label, mean, worst)
    if problem is not None:
        (folder / INT8_FILE).unlink()
        record |= {"file": None, "gate": "refused",
                   "reason": f"built here, it differs from the measured file: {problem}"}
    return replace(manifest, variants=manifest.variants | {"int8": record})
