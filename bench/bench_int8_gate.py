"""The int8 gate's evidence: fp32 vs each int8 scheme on Tatoeba (per language) and STS-B.

    PYTHONPATH=$PWD OMP_NUM_THREADS=2 python bench/bench_int8_gate.py \
        --model /work/models-cache/models/multilingual-e5-small --langs screen \
        --schemes dynamic-pc dynamic-pc-ffn-out-fp32 static-qdq-pc
    ... --langs all --schemes dynamic-pc-ffn-out-fp32 --evidence   # full 112, evidence JSON

fp32 is encoded once: its vectors and errors are cached per language under --out (git
ignored), so each scheme only encodes its own file, and a full run after a screening run
encodes only the languages it has not seen. Each scheme's per-language errors are cached
the same way. Sentences/s is each variant's Tatoeba encoding rate in this process (the
machine is shared and noisy: compare within one table, not across runs).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from engine.eval_tatoeba import available_languages, load_pair  # noqa: E402
from engine.model_manifest import read_manifest, sha256_file  # noqa: E402
from trainer.serving.file_encoder import file_encoder  # noqa: E402
from trainer.serving.int8_gate import (Quality, calibration_sentences, evidence_record,  # noqa: E402
                               judge_int8, stsb_spearman, tatoeba_errors)
from trainer.serving.quantise import INT8_FILE, SCHEMES, build_int8, scheme  # noqa: E402

log = logging.getLogger("bench_int8_gate")
DATA = Path(os.environ.get("BABELFIND_SHARED_DATA", "/work/shared/data"))
# The languages a user found hurt, and a spread of families and scripts.
SCREEN_LANGS = ("est", "lit", "hun", "ces", "fin", "lvs", "slk", "pol", "tur", "deu", "fra",
                "rus", "cmn", "ara", "hin")


class VariantRun:
    """One variant's encoder, with its per-language results cached in `cache_dir`."""

    def __init__(self, manifest, folder: Path, model_file: Path, cache_dir: Path,
                 keep_vectors: bool, cached_only: bool = False):
        self.cached_only = cached_only
        self.encoder = None if cached_only else _encoder(manifest, folder, model_file)
        self.cache_dir, self.keep_vectors = cache_dir, keep_vectors
        cache_dir.mkdir(parents=True, exist_ok=True)
        self.sentences, self.seconds = 0, 0.0

    def language(self, lang: str, tatoeba: Path) -> dict | None:
        """{"error": %, "vectors": (xxx, eng) or None}, from the cache when present (None
        when absent and `cached_only`)."""
        path = self.cache_dir / f"{lang}.npz"
        if path.is_file():
            data = np.load(path)
            vectors = (data["other"].astype(np.float32), data["eng"].astype(np.float32)) \
                if "other" in data else None
            return {"error": float(data["error"]), "vectors": vectors}
        if self.cached_only:
            return None
        start = time.perf_counter()
        sides = load_pair(tatoeba, lang)
        vectors = tuple(self.encoder.encode(side, kind="query") for side in sides)
        self.seconds += time.perf_counter() - start
        self.sentences += sum(len(side) for side in sides)
        error = tatoeba_errors({lang: vectors})[lang]
        extra = {"other": vectors[0].astype(np.float16), "eng": vectors[1].astype(np.float16)} \
            if self.keep_vectors else {}
        np.savez(path, error=error, **extra)
        return {"error": error, "vectors": vectors}

    def sts_b(self, sts_dir: Path) -> float | None:
        path = self.cache_dir / "sts_b.json"
        if path.is_file():
            return json.loads(path.read_text())["spearman"]
        if self.cached_only:
            return None
        value = stsb_spearman(self.encoder, sts_dir)
        path.write_text(json.dumps({"spearman": value}))
        return value

    def rate(self) -> float | None:
        return self.sentences / self.seconds if self.seconds else None


def _encoder(manifest, folder: Path, model_file: Path):
    """An encoder for `model_file` with `folder`'s tokenizer and embedding table."""
    _link_table(manifest, folder, model_file.parent)
    return file_encoder(model_file, folder / manifest.tokenizer_file, manifest.dim,
                        prefixes=manifest.prefixes, max_length=manifest.max_length,
                        pad_id=manifest.pad_token_id, embeddings=manifest.embeddings)


def _link_table(manifest, folder: Path, dest: Path) -> None:
    """The embedding table's files (a body graph reads its rows beside it) linked into `dest`."""
    spec = manifest.embeddings or {}
    for name in (spec.get("file"), spec.get("scales")):
        if name and (folder / name).is_file() and not (dest / name).exists() and dest != folder:
            (dest / name).symlink_to((folder / name).resolve())


def run(args) -> dict:
    """fp32 and every scheme, language by language (so an interrupted run leaves pairs)."""
    folder = Path(args.model)
    manifest = read_manifest(folder)
    tatoeba, sts_dir = DATA / "tatoeba" / "v1", DATA / "sts" / "original"
    langs = (available_languages(tatoeba) if args.langs == ["all"] else
             list(SCREEN_LANGS) if args.langs == ["screen"] else args.langs)
    # screened languages first: their results are cached, the rest follow in order
    langs = [l for l in SCREEN_LANGS if l in langs] + [l for l in langs if l not in SCREEN_LANGS]
    out = Path(args.out) / manifest.name
    calibration = calibration_sentences(DATA / "corpus")
    runs = {"fp32": VariantRun(manifest, folder, folder / manifest.variant_file("fp32"),
                               out / "fp32", True, args.cached_only)}
    built = {}
    for scheme_id in args.schemes:
        runs[scheme_id], built[scheme_id] = _prepare_scheme(scheme(scheme_id), manifest, folder,
                                                            out, calibration, args.cached_only)
    sts = {name: variant.sts_b(sts_dir) for name, variant in runs.items()}
    results = {name: {} for name in runs}
    for i, lang in enumerate(langs):
        for name, variant in runs.items():
            result = variant.language(lang, tatoeba)
            if result is not None:
                results[name][lang] = result
        log.info("%s (%d/%d): %s", lang, i + 1, len(langs), "  ".join(
            f"{name} {results[name][lang]['error']:.2f}" for name in runs if lang in results[name]))
    fp32_quality = Quality({k: v["error"] for k, v in results["fp32"].items()}, sts["fp32"])
    report = {"model": manifest.name, "langs": langs, "weights": _weights(args),
              "fp32": {"quality": fp32_quality.__dict__, "sentences_per_s": runs["fp32"].rate()},
              "schemes": {}}
    for scheme_id in args.schemes:
        report["schemes"][scheme_id] = _scheme_report(
            scheme(scheme_id), runs[scheme_id], results, scheme_id, sts[scheme_id],
            fp32_quality) | built[scheme_id]
    return report


def _prepare_scheme(int8_scheme, manifest, folder, out, calibration, cached_only: bool):
    """The scheme's int8 file (built once, then reused) and its `VariantRun`."""
    scheme_dir = out / int8_scheme.id
    scheme_dir.mkdir(parents=True, exist_ok=True)
    model_file = scheme_dir / INT8_FILE
    start = time.perf_counter()
    if not model_file.is_file() and not cached_only:
        build_int8(int8_scheme, manifest, folder, model_file, calibration)
    built = {"build_s": time.perf_counter() - start,
             "file_mb": model_file.stat().st_size / 1e6 if model_file.is_file() else None}
    return VariantRun(manifest, folder, model_file, scheme_dir / "langs", True, cached_only), built


def _scheme_report(int8_scheme, variant, results, scheme_id, sts_b, fp32_quality) -> dict:
    quality = Quality({k: v["error"] for k, v in results[scheme_id].items()}, sts_b)
    verdict = judge_int8(fp32_quality, quality)
    cosines = [(a * b).sum(1) for lang, result in results[scheme_id].items()
               if result["vectors"] is not None and results["fp32"][lang]["vectors"] is not None
               for a, b in zip(results["fp32"][lang]["vectors"], result["vectors"])]
    cos = np.concatenate(cosines) if cosines else None
    log.info("%s: %s (%s)", scheme_id, verdict.verdict, verdict.reason)
    return {"label": int8_scheme.label, "verdict": verdict.verdict, "reason": verdict.reason,
            "record": evidence_record(fp32_quality, quality, verdict),
            "sentences_per_s": variant.rate(),
            "mean_cosine": None if cos is None else float(cos.mean()),
            "min_cosine": None if cos is None else float(cos.min())}


def write_evidence(report: dict, path: Path, command: str) -> None:
    """Merges each scheme's verdict into the evidence file, keyed by model, weights, scheme."""
    if report["weights"] is None:
        raise SystemExit("--evidence needs --weights (the source file whose SHA-256 keys it)")
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {
        "about": "int8 gate verdicts of the bundled models (trainer/serving/int8_evidence.py reads it; "
                 "bench/bench_int8_gate.py writes it; docs/benchmarks.md, 'int8 gate').",
        "models": {}}
    entries = data["models"].setdefault(report["model"], [])
    import onnxruntime

    for scheme_id, result in report["schemes"].items():
        entry = {"scheme": scheme_id, "weights_sha256": report["weights"]["sha256"],
                 "weights": report["weights"]["file"], **result["record"],
                 "measured": {"onnxruntime": onnxruntime.__version__, "cpu": _cpu_kind(),
                              "date": time.strftime("%Y-%m-%d"), "command": command}}
        entries[:] = [e for e in entries if (e["scheme"], e["weights_sha256"]) !=
                      (scheme_id, entry["weights_sha256"])] + [entry]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _cpu_kind() -> str:
    """int8 MatMul kernels differ by instruction set: without VNNI, 8-bit weights can
    saturate int16 sums (7-bit "reduce range" weights cannot)."""
    try:
        flags = Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return "unknown"
    vnni = "avx512_vnni" in flags or "avx_vnni" in flags
    return "x86-64, " + ("VNNI" if vnni else "AVX2 without VNNI" if "avx2" in flags else "no AVX2")


def _weights(args) -> dict | None:
    if not args.weights:
        return None
    return {"file": Path(args.weights).name, "sha256": sha256_file(Path(args.weights))}


def table(report: dict) -> str:
    """Markdown: fp32, then each scheme as its change against fp32 on the languages it has."""
    fp32 = report["fp32"]["quality"]
    rows = ["| variant | gate | languages | Tatoeba error, change of mean | worst languages "
            "(points) | STS-B | mean cos to fp32 |", "|---|---|---|---|---|---|---|",
            f"| fp32 | - | {len(fp32['tatoeba'])} | {np.mean(list(fp32['tatoeba'].values())):.2f}% "
            f"| - | {_fmt(fp32['sts_b'], '.2f')} | 1 |"]
    for scheme_id, result in report["schemes"].items():
        tatoeba = result["record"]["tatoeba"]
        deltas = {k: tatoeba["int8"][k] - tatoeba["fp32"][k] for k in tatoeba["int8"]}
        worst = sorted(deltas, key=deltas.get, reverse=True)[:4]
        rows.append(f"| {scheme_id} | {result['verdict']} | {len(deltas)} | "
                    f"{np.mean(list(deltas.values())):+.2f} | "
                    + ", ".join(f"{k} {deltas[k]:+.2f}" for k in worst)
                    + f" | {_fmt(result['record']['sts_b']['int8'], '.2f')} | "
                    f"{_fmt(result['mean_cosine'], '.4f')} |")
    return "\n".join(rows)


def speed(args, rounds: int = 3) -> dict:
    """Median sentences/s of fp32 and each scheme on the same --speed sentences (round robin
    over the screened languages, both sides), the variants taking turns in each round."""
    from statistics import median

    folder = Path(args.model)
    manifest = read_manifest(folder)
    tatoeba = DATA / "tatoeba" / "v1"
    pools = [[s for pair in zip(*load_pair(tatoeba, lang)) for s in pair] for lang in SCREEN_LANGS]
    texts = [pool[i] for i in range(max(map(len, pools))) for pool in pools if i < len(pool)]
    texts = texts[:args.speed]
    out = Path(args.out) / manifest.name
    for scheme_id in args.schemes:  # built once, as a gate run builds them
        _prepare_scheme(scheme(scheme_id), manifest, folder, out, calibration_sentences(DATA / "corpus"), False)
    files = {"fp32": folder / manifest.variant_file("fp32")} | {s: out / s / INT8_FILE for s in args.schemes}
    encoders = {name: _encoder(manifest, folder, path) for name, path in files.items()}
    # indexing encodes passages: the same sentences, 12 to a passage (~160 tokens)
    passages = [" ".join(texts[i:i + 12]) for i in range(0, len(texts), 12)]
    workloads = {"sentences": (texts, "query"), "passages": (passages, "passage")}
    rates = {(name, w): [] for name in encoders for w in workloads}
    for _ in range(rounds):
        for name, encoder in encoders.items():
            for workload, (items, kind) in workloads.items():
                start = time.perf_counter()
                encoder.encode(items, kind=kind)
                rates[name, workload].append(len(items) / (time.perf_counter() - start))
    report = {}
    for (name, workload), r in rates.items():
        ratios = [a / b for a, b in zip(r, rates["fp32", workload])]
        report.setdefault(name, {})[workload] = {"median": median(r), "rounds": r,
                                                 "vs_fp32_median_of_rounds": median(ratios)}
    return report


def _fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a model folder with manifest.json and model.onnx")
    parser.add_argument("--schemes", nargs="+", default=["dynamic-pc"], choices=sorted(SCHEMES))
    parser.add_argument("--langs", nargs="+", default=["screen"],
                        help="'screen' (15 languages), 'all' (112) or ISO 639-3 codes")
    parser.add_argument("--weights", help="the weight source file, whose SHA-256 keys the evidence")
    parser.add_argument("--out", default=str(REPO / "bench" / "out" / "int8_gate"))
    parser.add_argument("--speed", type=int, metavar="N",
                        help="only measure sentences/s of fp32 and the schemes on N sentences")
    parser.add_argument("--rounds", type=int, default=3, help="--speed: rounds of alternation")
    parser.add_argument("--cached-only", action="store_true",
                        help="encode nothing: judge each scheme on the languages cached so far")
    parser.add_argument("--evidence", type=Path,
                        help="merge the verdicts into this file (resources/models/int8_evidence.json)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s")
    log.setLevel(logging.INFO)  # the quantiser logs every tensor at INFO through the root
    if args.speed:
        rates = speed(args, args.rounds)
        print(json.dumps(rates, indent=1))
        for name, workloads in rates.items():
            print(f"{name}: " + ", ".join(
                f"{r['median']:.1f} {workload}/s ({r['vs_fp32_median_of_rounds']:.2f}x fp32)"
                for workload, r in workloads.items()))
        return
    report = run(args)
    out = Path(args.out) / report["model"] / f"report-{len(report['langs'])}.json"
    out.write_text(json.dumps(report, indent=1))
    if args.evidence:
        write_evidence(report, args.evidence, " ".join(["bench/bench_int8_gate.py", *sys.argv[1:]]))
    print(table(report))
    print(f"report: {out}")


if __name__ == "__main__":
    main()
