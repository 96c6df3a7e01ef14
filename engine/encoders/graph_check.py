"""Is an ONNX graph safe to serve? Its allocations are checked before it answers a query.

    >>> check_model(folder, manifest, warm_up=True)          # at import: GraphRefusedError, one line
    >>> check_before_serving(folder, manifest, "fp32")       # at load: the static check, once per file

A model file comes from outside (an import, a download) and ONNX Runtime allocates what
its graph asks for. A ConstantOfShape whose shape is computed from the input's values (a
token id read as a length) asks for whatever the input says: the attack run's model took
4.5 GB in 12 s. Two checks, both before the model serves:

1. `check_graph`, statically: no operator may take the size of what it allocates
   (ConstantOfShape's shape, Expand's shape, Tile's repeats, Range's bounds, Pad's pads,
   OneHot's depth, Resize's sizes, a Loop's trip count...) from the input's *values*.
   Sizes from constants or from the input's *shape* are allowed: the encoder bounds the
   shape (batch rows and max_length), so those are bounded too. Values are followed
   through every operator; `Shape` gives the input's shape, not its values, unless that
   shape itself came from values (NonZero, a value-sized Reshape...).
2. `bounded_warm_up`, by running it: the largest batches the encoder ever feeds, in a
   child process whose address space is bounded and that is killed after a deadline.
   This catches a graph that allocates too much from the input's shape or from constants.

Imports run both (`check_model`); a model Babelfind built itself (an export, the default
models, a LASER import) has graphs of our own making and skips the warm-up. Every load
runs the static check once per file (`check_before_serving`), remembered in the model
folder by the file's SHA-256, which `verify_files` has just checked against the manifest.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from engine.errors import ModelError
from engine.model_manifest import GRAPH_CHECKS_FILE as CHECKS_FILE

log = logging.getLogger(__name__)

# Inputs that size an operator's output, by position.
SIZE_INPUTS = {
    "ConstantOfShape": (0,), "Expand": (1,), "Tile": (1,), "Range": (0, 1, 2), "Pad": (1,),
    "OneHot": (1,), "Resize": (2, 3), "Upsample": (1,), "CenterCropPad": (1,), "TopK": (1,),
    "Loop": (0,), "RandomNormalLike": (), "RandomUniformLike": (), "EyeLike": (),
}
# Operators whose output *shape* depends on input values (bounded by the input's size, but
# a Shape taken of their output is then value-dependent).
VALUE_SHAPED = frozenset({"NonZero", "Unique", "Compress", "Reshape", "Slice", "Split", "Squeeze",
                          "Unsqueeze", "TopK", "NonMaxSuppression", "If", "Loop", "Scan",
                          "StringSplit", "RegexFullMatch"})
# The warm-up child: memory beyond what it holds before loading the model, per byte of the
# model's files plus a fixed part for activations; and how long it may take.
WARM_UP_FIXED_BYTES = 1536 * 1024 * 1024
WARM_UP_PER_MODEL_BYTE = 3
WARM_UP_TIMEOUT_S = 180.0


class GraphRefusedError(ModelError):
    """A model's graph could allocate without bound, or failed its bounded warm-up."""

    def __init__(self, model: str, reason: str, path: Path | str | None = None):
        self.model = model
        self.reason = reason
        super().__init__(f"model '{model}' refused: {reason}", path)


# -- 1. the static check ----------------------------------------------------------------


def check_graph(path: Path, model: str) -> None:
    """GraphRefusedError when any operator of the graph at `path` (or of a subgraph)
    sizes an allocation from the input's values; ModelError when it cannot be read."""
    import onnx

    try:
        graph = onnx.load(str(path), load_external_data=False).graph
    except Exception as e:  # noqa: BLE001 -- protobuf and onnx raise several types
        raise ModelError(f"{path} is not a loadable ONNX model: {e}", path) from e
    values = {i.name for i in graph.input} - {t.name for t in graph.initializer}
    problem = _first_problem(graph, values, set())
    if problem is not None:
        raise GraphRefusedError(model, problem, path)


def _first_problem(graph, values: set[str], value_shaped: set[str]) -> str | None:
    """Follows value dependence through `graph` in order; the first unbounded allocation.

    `values`: tensors whose values come from the input; `value_shaped`: tensors whose
    shape does. Both grow as the nodes are walked (ONNX graphs are topologically sorted).
    """
    for node in graph.node:
        inputs = [name for name in node.input if name]
        sized_by = [node.input[i] for i in SIZE_INPUTS.get(node.op_type, ()) if i < len(node.input) and node.input[i]]
        tainted = [name for name in sized_by if name in values]
        if tainted:
            return (f"node '{node.name or node.op_type}' ({node.op_type}) allocates a tensor whose size comes "
                    f"from the input's values ({tainted[0]}); a crafted input could ask for any amount of memory")
        for attribute in node.attribute:  # Loop, Scan and If bodies see the outer tensors
            for subgraph in _subgraphs(attribute):
                problem = _first_problem(subgraph, values | {i.name for i in subgraph.input},
                                         set(value_shaped))
                if problem is not None:
                    return problem
        if node.op_type in ("Shape", "Size"):
            carries_values = any(name in value_shaped for name in inputs)
        else:
            carries_values = any(name in values for name in inputs)
        shaped = any(name in value_shaped for name in inputs) or (
            node.op_type in VALUE_SHAPED and any(name in values for name in inputs[1:] or inputs))
        for output in node.output:
            if carries_values:
                values.add(output)
            if shaped:
                value_shaped.add(output)
    return None


def _subgraphs(attribute) -> Iterable:
    if attribute.HasField("g"):
        yield attribute.g
    yield from attribute.graphs


# -- 2. the bounded warm-up --------------------------------------------------------------


def bounded_warm_up(folder: Path, manifest, variants: list[str]) -> dict:
    """Runs the encoder's largest batches for each of `variants`, in one child process
    with bounded memory and time.

    Returns {"peak_mib": ...} of the child; GraphRefusedError when it fails, runs out of
    its memory or time.
    """
    files = {name for variant in variants for name in (manifest.variant_file(variant), *manifest.serving_files())}
    biggest = max((Path(folder) / name).stat().st_size for name in files if (Path(folder) / name).is_file())
    allowance = WARM_UP_FIXED_BYTES + WARM_UP_PER_MODEL_BYTE * biggest
    environment = dict(os.environ, OMP_NUM_THREADS="1")
    package_parent = str(Path(__file__).resolve().parents[2])
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [package_parent, os.environ.get("PYTHONPATH")]))
    command = [sys.executable, "-m", __name__, str(folder), str(allowance), *variants]
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=environment,
                              timeout=WARM_UP_TIMEOUT_S, errors="replace")
    except subprocess.TimeoutExpired as e:
        raise GraphRefusedError(manifest.name, f"its warm-up did not finish in {WARM_UP_TIMEOUT_S:g} s") from e
    lines = done.stdout.strip().splitlines()
    result = _json_or_none(lines[-1]) if lines else None
    if done.returncode != 0 or not isinstance(result, dict) or "peak_mib" not in result:
        why = (result or {}).get("error") if isinstance(result, dict) else None
        why = why or _last_line(done.stderr) or f"exit code {done.returncode}"
        raise GraphRefusedError(
            manifest.name, f"its warm-up failed within {allowance / 2**30:.1f} GiB of memory ({why})")
    log.info("model %s (%s): warm-up peak %.0f MiB", manifest.name, ", ".join(variants), result["peak_mib"])
    return result


def _json_or_none(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return None


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def _warm_up_child(folder: Path, allowance: int, variants: list[str]) -> dict:
    """In the child: the encoder's own code on its largest batches, memory bounded."""
    import resource

    import numpy as np  # noqa: F401 -- imported before the bound is set, as the encoder needs it
    import onnxruntime  # noqa: F401

    from engine.encoders.onnx import MAX_BATCH, MAX_BATCH_TOKENS
    from engine.model_manifest import read_manifest

    manifest = read_manifest(folder)
    with open("/proc/self/statm", encoding="ascii") as f:
        baseline = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (baseline + allowance, resource.getrlimit(resource.RLIMIT_AS)[1]))
    length = int(getattr(manifest, "max_length", 0) or 512)
    long_rows = max(1, min(MAX_BATCH, MAX_BATCH_TOKENS // length))
    texts = [" ".join(["warm-up"] * length)] * long_rows + ["warm"] * MAX_BATCH
    for variant in variants:
        encoder = _encoder(folder, manifest, variant)
        vectors = encoder.encode(texts)
        if vectors.shape != (len(texts), encoder.dim):
            raise ModelError(f"{variant}: produced shape {vectors.shape}, expected ({len(texts)}, {encoder.dim})")
        del encoder
    return {"peak_mib": _peak_rss_kib() / 1024}


def _peak_rss_kib() -> int:
    """This process's peak resident memory. Not ru_maxrss: Linux carries that across
    exec, so a child would report its parent's peak."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def _encoder(folder: Path, manifest, variant: str):
    if manifest.family == "laser":
        from engine.encoders.laser_onnx import LaserOnnxEncoder

        return LaserOnnxEncoder(folder, manifest, variant=variant, device="cpu", threads=1)
    from engine.encoders.onnx import OnnxEncoder

    return OnnxEncoder(folder, manifest, variant=variant, device="cpu", threads=1)


# -- when the checks run ----------------------------------------------------------------


def check_model(folder: Path, manifest, *, warm_up: bool) -> None:
    """Both checks (the warm-up only when `warm_up`) for every variant that has a file, in
    a model folder about to enter the registry; remembers what passed in the folder."""
    variants = [v for v in manifest.variants if manifest.variant_file(v)]
    for variant in variants:
        check_graph(Path(folder) / manifest.variant_file(variant), manifest.name)
    if warm_up and variants:
        bounded_warm_up(folder, manifest, variants)
    _remember(folder, {manifest.variant_file(v): manifest.files.get(manifest.variant_file(v)) for v in variants})


def check_before_serving(folder: Path, manifest, variant: str) -> None:
    """The static check of the graph about to serve, unless this file passed it before."""
    name = manifest.variant_file(variant)
    digest = manifest.files.get(name)
    if digest is not None and _passed(folder).get(name) == digest:
        return
    check_graph(Path(folder) / name, manifest.name)
    _remember(folder, {name: digest})


def _passed(folder: Path) -> dict:
    try:
        checks = json.loads((Path(folder) / CHECKS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return checks if isinstance(checks, dict) else {}


def _remember(folder: Path, passed: dict) -> None:
    """Best effort, like verify_files' stamps: a read-only registry checks again next time."""
    from engine.private import open_private

    try:
        with open_private(Path(folder) / CHECKS_FILE, "w") as f:
            f.write(json.dumps(_passed(folder) | passed, indent=1, sort_keys=True))
    except OSError:
        log.debug("cannot record the graph checks in %s", folder)


def _child_main(argv: list[str]) -> int:
    folder, allowance, variants = Path(argv[0]), int(argv[1]), argv[2:]
    try:
        result = _warm_up_child(folder, allowance, variants)
    except MemoryError:
        result = {"error": "ran out of memory"}
    except Exception as e:  # noqa: BLE001 -- ORT raises its own types; the parent reports it
        text = " ".join(str(e).split())
        result = {"error": ("ran out of memory: " if "alloc" in text.lower() else "") + text[:300]}
    print(json.dumps(result))
    return 0 if "peak_mib" in result else 1


if __name__ == "__main__":
    sys.exit(_child_main(sys.argv[1:]))
