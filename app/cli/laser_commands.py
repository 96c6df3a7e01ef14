"""`babelfind models import-laser` and `babelfind models download`: official LASER encoders.

    babelfind models import-laser ~/Downloads/laser                 # laser2.pt + laser2.spm + laser2.cvocab
    babelfind models import-laser laser3-wol.v1.pt --spm laser2.spm --cvocab laser2.cvocab
    babelfind models download laser2                                # when online

Both export the BiLSTM to ONNX with the trainer (torch) and register it as family "laser".
Without --name the model is named from its files (laser2, laser3-xxx).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from app.cli.arguments import existing_file, existing_path
from app.cli.output import manifest_dict, print_result
from engine.errors import InputError


def register_models(sub) -> None:
    """Adds import-laser and download to the `models` sub-commands."""
    laser = sub.add_parser("import-laser", help="add an official LASER2/LASER3 BiLSTM encoder")
    laser.add_argument("source", type=existing_path, metavar="FILE_OR_FOLDER",
                       help="laser2.pt / laser3-xxx.v1.pt, or a folder holding the official files")
    laser.add_argument("--spm", type=existing_file, help="its SentencePiece model (laser2.spm); "
                                                         "found in the folder when SOURCE is one")
    laser.add_argument("--cvocab", type=existing_file, help="its vocabulary (laser2.cvocab), checked and kept")
    add_common(laser)
    laser.set_defaults(run=run_import_laser)
    download = sub.add_parser("download", help="fetch an official LASER encoder (needs internet) and import it")
    download.add_argument("model", help="laser2 or laser3-xxx (xxx: the language code)")
    add_common(download)
    download.set_defaults(run=run_download)


def add_common(parser) -> None:
    parser.add_argument("--name", help="name in the registry (default: from the files, e.g. laser2)")
    parser.add_argument("--replace", action="store_true", help="replace a model of that name")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def _need_trainer() -> None:
    """Exporting a LASER checkpoint runs it in torch: without the `train` extra, say how to add it."""
    from app.training_extra import require_training

    require_training("importing a LASER checkpoint")


def resolve_files(args):
    """(checkpoint, spm, cvocab, name) from a file and its options, or from a folder."""
    from engine.encoders.laser_files import find_laser_files, model_name

    source = Path(args.source)
    if source.is_dir():
        found = find_laser_files(source)
        return (found.checkpoint, args.spm or found.spm, args.cvocab or found.cvocab,
                args.name or found.name)
    if args.spm is None:
        raise InputError(f"{source} is a checkpoint file: give its SentencePiece model with "
                         "--spm (or pass the folder that holds all the files)")
    return source, args.spm, args.cvocab, args.name or model_name(source)


def run_import_laser(args) -> int:
    _need_trainer()
    checkpoint, spm, cvocab, name = resolve_files(args)
    return _import(args, checkpoint, spm, cvocab, name)


def _import(args, checkpoint: Path, spm: Path, cvocab: Path | None, name: str) -> int:
    from trainer.laser.bilstm import export_laser

    def progress(fraction: float, message: str) -> None:
        if not args.json:
            print(f"[{fraction:4.0%}] {message}", file=sys.stderr)

    if cvocab is None and not args.json:
        print("no .cvocab given or found: the vocabulary cross-check is skipped", file=sys.stderr)
    manifest = export_laser(checkpoint, spm, cvocab, name, replace_existing=args.replace,
                            progress=progress)
    parity = manifest.export_parity["min_cosine"]
    print_result(manifest_dict(manifest), args.json,
           f"imported {manifest.name} (LASER, dim {manifest.dim}, ONNX parity {parity:.6f})")
    return 0


def run_download(args) -> int:
    """Downloads into a temporary folder (removed afterwards), then imports from it."""
    from engine.config import data_paths
    from engine.encoders.laser_files import download_laser, find_laser_files, laser_file_names
    from engine.models import check_name, model_dir

    laser_file_names(args.model)  # an unknown name fails before anything else
    name = args.name or args.model
    check_name(name)
    if model_dir(name, data_paths()).exists() and not args.replace:
        raise InputError(f"a model named '{name}' is already installed (use --replace)")
    _need_trainer()
    with tempfile.TemporaryDirectory(prefix="babelfind-laser-") as tmp:
        download_laser(args.model, Path(tmp), progress=_download_bar(args))
        found = find_laser_files(Path(tmp))
        return _import(args, found.checkpoint, found.spm, found.cvocab, name)


def _download_bar(args):
    """A tqdm bar per file on a terminal; nothing with --json or without a terminal."""
    if args.json or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    bars: dict[str, tqdm] = {}

    def progress(file: str, done: int, total: int | None) -> None:
        bar = bars.get(file)
        if bar is None:
            bar = bars[file] = tqdm(total=total, desc=file, unit="B", unit_scale=True, file=sys.stderr)
        bar.update(done - bar.n)
        if total is not None and done >= total:
            bar.close()

    return progress
