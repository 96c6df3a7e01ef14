"""`babelfind models ...`, `babelfind embed` and `babelfind eval`.

    babelfind models list --json
    babelfind models import-laser ~/Downloads/laser       # official LASER files (app.cli.laser_commands)
    babelfind embed sentences.txt -o vectors.npy --kind query
    babelfind eval multilingual-e5-small --tatoeba --langs deu fra --json

On a fresh home, `embed`, `eval` and `models info|use|export` install the bundled
models first (once) when they use one of them (the active model or a bundled name);
`models list` shows what is installed; `models import|import-laser|download|remove` need none.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

from app.cli.arguments import existing_file, existing_folder, existing_path, output_file
from app.cli.laser_commands import register_models as register_laser_models
from app.cli.model_setup import ACTIVE_MODEL
from app.cli.output import manifest_dict, print_result
from app.printable import printable
from engine.errors import InputError

NO_MODELS_YET = ("no models installed yet; the bundled ones (multilingual-e5-small, "
                 "all-minilm-l6-v2) install on first use, e.g. 'babelfind index FOLDER'")
EMBED_CHUNK = 2048  # lines read and encoded at a time, so large files stream


def register(subparsers) -> None:
    models = subparsers.add_parser("models", help="list, inspect, choose and move models")
    sub = models.add_subparsers(dest="models_command", metavar="ACTION", required=True)
    for action, help_text in (("list", "installed models"), ("info", "one model's manifest"),
                              ("use", "make a model active (re-encodes the index)"),
                              ("import", "add a model from a folder or .zip"),
                              ("export", "write a model to a .zip"),
                              ("remove", "delete an installed model")):
        parser = sub.add_parser(action, help=help_text)
        parser.add_argument("--json", action="store_true", help="machine-readable output")
        # Naming a bundled model (info, use, export) installs the bundled models first
        # on a fresh home; list only reads what is there and says how to get them.
        parser.set_defaults(run=globals()[f"run_models_{action}"],
                            uses_model=_named_model if action in ("info", "use", "export") else None)
        if action in ("info", "use", "export", "remove"):
            parser.add_argument("name", help="model name")
        if action == "import":
            parser.add_argument("source", type=existing_path, help="folder or .zip from 'models export'")
        if action == "export":
            parser.add_argument("dest", type=output_file, help="the .zip to write")
    register_laser_models(sub)  # import-laser, download: official LASER encoders

    embed = subparsers.add_parser("embed", help="encode one sentence per line into a .npy file")
    embed.add_argument("input", type=existing_file, help="UTF-8 text file, one sentence per line")
    embed.add_argument("-o", "--output", type=output_file, required=True, help="float32 [n, d] .npy")
    embed.add_argument("--model", help="model name (default: the active model)")
    embed.add_argument("--kind", choices=("query", "passage"), default="passage")
    embed.add_argument("--variant", choices=("fp32", "fp16", "int8"),
                       help="default: fp16 on GPU; on CPU int8 when its quality gate passed "
                            "(see 'models info'), else fp32 (reproducible vectors)")
    embed.set_defaults(run=run_embed, uses_model=_chosen_model)

    evaluate = subparsers.add_parser("eval", help="evaluate a model on benchmark data")
    evaluate.add_argument("model", help="model name")
    evaluate.add_argument("--tatoeba", action="store_true", help="LASER Tatoeba similarity search")
    evaluate.add_argument("--langs", nargs="+", help="Tatoeba languages (ISO 639-3; default all)")
    evaluate.add_argument("--data", type=existing_folder, help="data folder (default: ../shared/data)")
    evaluate.add_argument("--variant", choices=("fp32", "fp16", "int8"))
    evaluate.add_argument("--json", action="store_true", help="machine-readable output")
    if importlib.util.find_spec("trainer.evaluate") is not None:
        evaluate.add_argument("--sts", action="store_true", help="STS benchmarks")
    evaluate.set_defaults(run=run_eval, check=check_eval, uses_model=lambda args: args.model)


def _named_model(args) -> str:
    return args.name


def _chosen_model(args) -> str:
    return args.model or ACTIVE_MODEL


def run_models_list(args) -> int:
    from engine.models import active_model_name, list_models

    active = active_model_name()
    manifests = list_models()
    rows = [{"name": m.name, "active": m.name == active, "installed": True, "dim": m.dim, "family": m.family,
             "variants": sorted(v for v in m.variants if m.variant_file(v)),
             "languages": len(m.languages), "licence": m.licence} for m in manifests]
    lines = [f"{'*' if r['active'] else ' '} {r['name']:<28} dim {r['dim']:<5} "
             f"{','.join(r['variants']):<15} {printable(r['licence'])}" for r in rows]
    offered = _bundled_not_installed() if manifests else []
    lines += [f"  {m.name:<28} not installed: 'babelfind models use {m.name}' builds it "
              "(about a minute) and re-encodes the library" for m in offered]
    # the same keys as an installed model's row; what only a build knows is None or empty
    rows += [{"name": m.name, "active": False, "installed": False, "dim": None, "family": "transformer",
              "variants": [], "languages": len(m.languages), "licence": m.licence} for m in offered]
    print_result(rows, args.json, "\n".join(lines) or NO_MODELS_YET)
    return 0


def _bundled_not_installed() -> list:
    """Bundled models built on demand that are not installed yet (app.first_run.OfferedModel)."""
    from app.first_run import offered_models
    from engine.config import data_paths

    return offered_models(data_paths())


def run_models_info(args) -> int:
    from engine.models import active_model_name, get_manifest, int8_not_default_reason

    manifest = get_manifest(args.name)
    int8_reason = int8_not_default_reason(manifest)
    data = manifest_dict(manifest) | {"active": active_model_name() == manifest.name,
                                       "int8_not_default": int8_reason}
    if args.json:
        print_result(data, True, "")
        return 0
    for key in ("name", "active", "family", "dim", "pooling", "max_length", "prefixes",
                "source", "licence", "notes", "export_parity"):
        print(f"{key:>14}: {json.dumps(data[key], ensure_ascii=False)}")
    print(f"{'variants':>14}: {_variants_line(manifest)}")
    print(f"{'languages':>14}: {' '.join(manifest.languages)}")
    for line in _adapter_lines(manifest.adapter):
        print(f"{'adapter':>14}: {line}")
    for line in _int8_lines(manifest.variants.get("int8") or {}):
        print(f"{'int8':>14}: {line}")
    if int8_reason is not None:
        print(f"int8 not used by default: {int8_reason}")
    return 0


def _adapter_lines(card: dict) -> list[str]:
    """The adapter folded into the model: what it is, what it learnt from, what it changed
    (measured; the whole card is in --json)."""
    if not card:
        return []
    lines = [f"{card.get('file', '?')} ({card.get('kind', '?')}, {int(card.get('parameters', 0)):,} "
             f"parameters, SHA-256 {str(card.get('sha256', ''))[:12]}...)",
             f"trained on {card.get('data', '?')}"]
    measured = _json_field(card, "measured")
    lines += [f"{what}: {effect}" for what, effect in measured.items()]
    return lines


def _json_field(card: dict, key: str) -> dict:
    """A card entry stored as JSON text (safetensors metadata holds strings only)."""
    try:
        value = json.loads(card.get(key) or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _int8_lines(info: dict) -> list[str]:
    """The int8 gate's verdict, where it was measured, and the languages it moved most
    (the whole table is in --json and resources/models/int8_evidence.json)."""
    if not info.get("gate"):
        return []
    scheme = f"{info['scheme']}: " if info.get("scheme") else ""
    lines = [f"{scheme}gate {info['gate']}: {info.get('reason', '')}"]
    measured = info.get("measured") or {}
    if measured:
        lines.append(f"measured {measured.get('date', '?')} on {measured.get('cpu', '?')}, "
                     f"onnxruntime {measured.get('onnxruntime', '?')}")
    tatoeba = info.get("tatoeba") or {}
    fp32, int8 = tatoeba.get("fp32") or {}, tatoeba.get("int8") or {}
    moved = sorted((int8[k] - fp32[k], k) for k in int8 if k in fp32)
    if moved:
        lines.append(f"Tatoeba error over {len(moved)} languages: fp32 {tatoeba.get('fp32_mean', 0):.2f}%, "
                     f"int8 {tatoeba.get('int8_mean', 0):.2f}%; most worse: "
                     + ", ".join(f"{k} {d:+.2f}" for d, k in reversed(moved[-4:])))
    return lines


def _variants_line(manifest) -> str:
    """"fp32 model.onnx, int8 model.int8.onnx (gate passed)": the per-language evidence
    stays in --json."""
    parts = []
    for name, info in sorted(manifest.variants.items()):
        info = info or {}
        gate = f" (gate {info['gate']})" if info.get("gate") else ""
        parts.append(f"{name} {info.get('file') or 'not made'}{gate}")
    return ", ".join(parts)


def run_models_use(args) -> int:
    from engine.config import data_paths
    from engine.models import set_active

    paths = data_paths()
    manifest = set_active(args.name, paths)
    switched = _switch_library(args, manifest.name, paths)
    print_result({"active": manifest.name, "reindexed": switched}, args.json,
           f"active model: {manifest.name}" + (" (index re-encoded)" if switched else ""))
    return 0


def _switch_library(args, name: str, paths) -> bool:
    """Re-encodes an existing library with `name`; False when there is no library yet."""
    db_url = getattr(args, "db", None)
    has_library = db_url or paths.db_url != paths.default_db_url or (paths.home / "babelfind.db").exists()
    if not has_library:
        return False
    from app.cli.library_commands import drive, lock_options
    from engine.library import Library

    library = Library.open(paths, db_url=db_url, **lock_options(args))
    try:
        drive(library.switch_model(name), show_progress=sys.stderr.isatty())
    finally:
        library.close()
    return True


def run_models_import(args) -> int:
    from engine.models import import_model

    manifest = import_model(args.source)
    print_result(manifest_dict(manifest), args.json, f"imported {manifest.name}")
    return 0


def run_models_export(args) -> int:
    from engine.models import export_model

    dest = export_model(args.name, args.dest)
    print_result({"name": args.name, "zip": str(dest)}, args.json, f"wrote {dest}")
    return 0


def run_models_remove(args) -> int:
    from engine.models import remove_model

    remove_model(args.name)
    print_result({"removed": args.name}, args.json, f"removed {args.name}")
    return 0


def embed_lines(path: Path):
    """Lines of a text file as `embed` reads them: any of \\n, \\r\\n and a lone \\r ends one.

    Example: list(embed_lines(Path("a.txt"))) == ["first", "second"]

    Counting and encoding both read through here, so the preallocated array always has
    exactly one row per line (a file with CR-only line breaks once broke that).
    """
    from engine.safe_open import open_regular_text

    with open_regular_text(path) as f:  # a FIFO or a link to /dev/zero is refused, not read
        for line in f:
            yield line.rstrip("\n")


def count_lines(path: Path) -> int:
    """Lines in a text file, as `embed_lines` sees them (a last line without newline counts)."""
    return sum(1 for _ in embed_lines(path))


def run_embed(args) -> int:
    """Streams INPUT through the encoder into a preallocated .npy (memory-mapped)."""
    from engine.models import load_encoder

    total = count_lines(args.input)
    encoder = load_encoder(args.model, variant=args.variant)
    tmp = args.output.with_name(args.output.name + ".part.npy")
    try:
        done = _embed_into(tmp, args, encoder, total)
        os.replace(tmp, args.output)
    finally:  # an error or Ctrl-C leaves no half-written .part file behind
        tmp.unlink(missing_ok=True)
    print(f"wrote {done} x {encoder.dim} vectors to {args.output}", file=sys.stderr)
    return 0


def _embed_into(tmp: Path, args, encoder, total: int) -> int:
    import numpy as np
    from tqdm import tqdm

    out = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float32, shape=(total, encoder.dim))
    done = 0
    with tqdm(total=total, unit="line", file=sys.stderr, disable=not sys.stderr.isatty()) as bar:
        chunk = []
        for line in embed_lines(args.input):
            chunk.append(line)
            if len(chunk) == EMBED_CHUNK:
                done = _write_chunk(out, done, encoder.encode(chunk, kind=args.kind), bar)
                chunk = []
        if chunk:
            done = _write_chunk(out, done, encoder.encode(chunk, kind=args.kind), bar)
    if done != total:
        raise InputError(f"{args.input} changed while it was read ({total} lines, then {done})")
    out.flush()
    del out
    return done


def _write_chunk(out, start: int, vectors, bar) -> int:
    if start + len(vectors) > len(out):
        raise InputError("the input file grew while it was read; run embed again")
    out[start:start + len(vectors)] = vectors
    bar.update(len(vectors))
    return start + len(vectors)


def check_eval(args) -> None:
    """Refuses an evaluation with nothing chosen, or Tatoeba languages that are not in the
    data, before a model loads (or installs)."""
    if not args.tatoeba and not getattr(args, "sts", False):
        raise InputError("choose what to evaluate: --tatoeba" +
                         (" or --sts" if hasattr(args, "sts") else ""))
    if args.tatoeba:
        _check_tatoeba_languages((args.data or _default_data_dir()) / "tatoeba" / "v1", args.langs or ())


def _check_tatoeba_languages(folder: Path, langs) -> None:
    from engine.eval_tatoeba import available_languages
    from engine.languages import tatoeba_code_for

    available = set(available_languages(folder))  # InputError when the folder is missing
    for lang in langs:
        if lang not in available:
            guess = tatoeba_code_for(lang, available)
            hint = f"; did you mean '{guess}'?" if guess else " (Tatoeba uses ISO 639-3 codes such as deu)"
            raise InputError(f"no Tatoeba pair for '{lang}' in {folder}{hint}")


def run_eval(args) -> int:
    from engine.models import load_encoder

    encoder = load_encoder(args.model, variant=args.variant)
    data_dir = args.data or _default_data_dir()
    report = {"model": args.model, "variant": encoder.variant}
    if args.tatoeba:
        report["tatoeba"] = _eval_tatoeba(encoder, data_dir / "tatoeba" / "v1", args)
    if getattr(args, "sts", False):
        from trainer import evaluate  # added by the trainer work; needs torch-free encoders only

        report["sts"] = evaluate.run_sts(encoder, data_dir, as_json=args.json)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


def _default_data_dir() -> Path:
    env = os.environ.get("BABELFIND_SHARED_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[3] / "shared" / "data"


def _eval_tatoeba(encoder, tatoeba_dir: Path, args) -> dict:
    from tqdm import tqdm

    from engine.eval_tatoeba import PUBLISHED_112, evaluate_encoder

    with tqdm(unit="lang", file=sys.stderr, disable=not sys.stderr.isatty()) as bar:
        def progress(lang: str, done: int, total: int) -> None:
            bar.total, bar.n = total, done
            bar.set_postfix_str(lang)
            bar.refresh()

        result = evaluate_encoder(encoder, tatoeba_dir, args.langs, progress=progress)
    data = result.to_dict()
    if not args.json:
        for r in result.results:
            print(f"{r.lang}  error {r.error:6.2f}%  ({r.pairs} pairs; "
                  f"xx->en {r.error_to_eng:.2f}, en->xx {r.error_from_eng:.2f})")
        print(f"mean error over {len(result.results)} languages: {result.mean_error:.2f}% "
              f"(accuracy {100 - result.mean_error:.2f}%)")
        if len(result.results) == 112:
            for name, error in PUBLISHED_112.items():
                print(f"  published, 112 languages: {name}: {error:.1f}% error")
    return data
