"""A LASER student distilled from multilingual-e5-small, next to its teacher.

    nice -n 10 python bench/bench_laser_student.py --minutes 20 --out bench/out/laser_student.json

Training data (../shared/data): every PUD sentence (11 languages x 1000) and the first
--wiki English Wikipedia sentences (default: all 11,914) as the corpus, PUD's L-en
alignments as translation pairs. Tatoeba is never trained on. Teacher: the bundled
multilingual-e5-small from $BABELFIND_TEST_MODELS (read only; linked into a temporary
BABELFIND_HOME).

Measured, teacher and student in the same process:
- Tatoeba error (%, both directions averaged) for the ten PUD languages, on the first
  --tatoeba-pairs pairs of each (the teacher's encoding is the slow part on 2 cores);
- PUD BUCC-style F1 (bench/bench_mining.py's design with fewer distractors: per language a
  dev and a test split of 500 PUD sentences, 40% keep their translation, 30% only in L,
  30% only in English, plus Tatoeba sentences without translation; ratio margin, k=4, mode
  max, threshold tuned on dev, F1 on test). PUD is in the student's training data, as a
  user's own documents are when the student is trained on them and then mines them;
  Tatoeba is the unseen test;
- sentences/s on CPU (--threads), median of --repeats alternating runs over the same
  sentences, and the ratio student / teacher.
The teacher's vectors are cached by text in --cache, so a rerun skips them.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_mining import best_threshold, prf  # noqa: E402

from engine.eval_tatoeba import nearest_neighbour_error  # noqa: E402
from engine.mining.margin import mine_vectors  # noqa: E402

log = logging.getLogger("bench_laser_student")
PUD_LANGS = ("ar", "de", "es", "fr", "hi", "it", "pt", "ru", "tr", "zh")
TATOEBA = {"de": "deu", "fr": "fra", "es": "spa", "ru": "rus", "zh": "cmn", "ar": "ara",
           "hi": "hin", "it": "ita", "pt": "por", "tr": "tur"}
TEACHER = "multilingual-e5-small"


class CachedEncoder:
    """An Encoder whose vectors of texts seen before come from a cache file (by text)."""

    def __init__(self, encoder, cache: Path):
        self.encoder, self.cache, self.dim, self.name = encoder, cache, encoder.dim, encoder.name
        self.vectors: dict[tuple[str, str], np.ndarray] = {}
        self.saved = time.monotonic()
        if cache.is_file():
            data = np.load(cache, allow_pickle=False)
            for kind, text, vec in zip(data["kinds"], data["texts"], data["vectors"]):
                self.vectors[str(kind), str(text)] = vec

    def encode(self, texts, kind="query"):
        missing = list(dict.fromkeys(t for t in texts if (kind, t) not in self.vectors))
        for start in range(0, len(missing), 256):
            part = missing[start:start + 256]
            for text, vec in zip(part, self.encoder.encode(part, kind=kind)):
                self.vectors[kind, text] = vec
        if missing and time.monotonic() - self.saved > 120:  # a kill loses two minutes at most
            self.save()
        return np.stack([self.vectors[kind, t] for t in texts])

    def save(self) -> None:
        self.saved = time.monotonic()
        keys = list(self.vectors)
        if not keys:
            return
        tmp = self.cache.with_name(self.cache.stem + ".tmp.npz")
        np.savez(tmp, kinds=np.array([k for k, _ in keys]), texts=np.array([t for _, t in keys]),
                 vectors=np.stack([self.vectors[k] for k in keys]))
        tmp.replace(self.cache)


PUD_LIMIT = 1000  # sentences per language; --pud lowers it for a quick trial of the script


def pud(shared: Path, lang: str) -> list[str]:
    path = shared / "corpus" / "pud-parallel" / f"pud.{lang}.tsv"
    lines = path.read_text(encoding="utf-8").splitlines()[:PUD_LIMIT]
    return [line.split("\t", 1)[1] for line in lines]


def tatoeba(shared: Path, lang: str, n: int) -> tuple[list[str], list[str]]:
    base = shared / "tatoeba" / "v1" / f"tatoeba.{TATOEBA[lang]}-eng"
    read = lambda p: Path(p).read_text(encoding="utf-8").rstrip("\n").split("\n")  # noqa: E731
    return read(f"{base}.{TATOEBA[lang]}")[:n], read(f"{base}.eng")[:n]


def write_training_data(shared: Path, folder: Path, wiki: int) -> tuple[Path, list[Path]]:
    """corpus.txt (one sentence a line) and one pairs TSV per language (score, L, en)."""
    folder.mkdir(parents=True, exist_ok=True)
    english = pud(shared, "en")
    sentences = english + [s for lang in PUD_LANGS for s in pud(shared, lang)]
    wiki_path = shared / "corpus" / "wiki-en" / "wiki1m_for_simcse.head.txt"
    sentences += wiki_path.read_text(encoding="utf-8").splitlines()[:wiki]
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(s.replace("\n", " ") for s in sentences) + "\n", encoding="utf-8")
    pairs = []
    for lang in PUD_LANGS:
        path = folder / f"pud.{lang}-en.tsv"
        path.write_text("".join(f"1.0\t{a}\t{b}\n" for a, b in zip(pud(shared, lang), english)),
                        encoding="utf-8")
        pairs.append(path)
    return corpus, pairs


def mining_splits(shared: Path, lang: str, distractors: tuple[list[str], list[str]], seed: int = 0):
    """{"dev": (src, tgt, gold), "test": ...} as bench_mining.build_splits, smaller distractors."""
    rng = random.Random(seed)
    src_pud, en_pud = pud(shared, lang), pud(shared, "en")
    ids = list(range(len(src_pud)))
    rng.shuffle(ids)
    tat_src, tat_en = distractors
    quarter = len(tat_src) // 4
    splits, half = {}, len(ids) // 2  # 500 of PUD's 1000
    for n, name in enumerate(("dev", "test")):
        part = ids[n * half:(n + 1) * half]
        gold_ids, src_only, tgt_only = part[:half * 2 // 5], part[half * 2 // 5:half * 7 // 10], part[half * 7 // 10:]
        # L sentences from one quarter of the Tatoeba pairs, English from another: none
        # has its translation on the other side
        src = [(src_pud[i], i) for i in gold_ids + src_only] + [
            (t, None) for t in tat_src[2 * n * quarter:(2 * n + 1) * quarter]]
        tgt = [(en_pud[i], i) for i in gold_ids + tgt_only] + [
            (t, None) for t in tat_en[(2 * n + 1) * quarter:(2 * n + 2) * quarter]]
        rng.shuffle(src)
        rng.shuffle(tgt)
        where = {i: j for j, (_, i) in enumerate(tgt) if i is not None}
        gold = frozenset((s, where[i]) for s, (_, i) in enumerate(src) if i is not None and i in where)
        splits[name] = ([t for t, _ in src], [t for t, _ in tgt], gold)
    return splits


def mining_f1(encoder, splits) -> float:
    scored = {}
    for name, (src, tgt, gold) in splits.items():
        pairs = mine_vectors(encoder.encode(src, kind="query"), encoder.encode(tgt, kind="query"),
                             k=4, margin="ratio", mode="max", threshold=None)
        scored[name] = ([(p.score, (p.src_index, p.tgt_index)) for p in pairs], gold)
    threshold = best_threshold(*scored["dev"])
    return 100 * prf(*scored["test"], threshold)[2]


def evaluate(encoder, shared: Path, tatoeba_pairs: int) -> dict:
    rows = {}
    for lang in PUD_LANGS:
        other, english = tatoeba(shared, lang, tatoeba_pairs)
        a, b = encoder.encode(other, kind="query"), encoder.encode(english, kind="query")
        error = float(np.mean(nearest_neighbour_error(a, b)))
        f1 = mining_f1(encoder, mining_splits(shared, lang, (other, english)))
        rows[lang] = {"tatoeba_error": error, "pud_f1": f1}
        log.info("%s %s: tatoeba error %.1f, PUD F1 %.1f", encoder.name, lang, error, f1)
    rows["mean"] = {k: float(np.mean([rows[lang][k] for lang in PUD_LANGS]))
                    for k in ("tatoeba_error", "pud_f1")}
    return rows


def speed(encoders: dict, sentences: list[str], repeats: int) -> dict:
    """Median sentences/s of each encoder over `repeats` alternating runs."""
    times = {name: [] for name in encoders}
    for _ in range(repeats):
        for name, encoder in encoders.items():
            start = time.perf_counter()
            encoder.encode(sentences, kind="query")
            times[name].append(time.perf_counter() - start)
    return {name: len(sentences) / statistics.median(t) for name, t in times.items()}


def train(args, home: Path, teacher) -> tuple[object, dict]:
    from engine.config import DataPaths
    from trainer.laser.student import StudentFinished, train_student
    from trainer.laser.student_config import StudentConfig
    from trainer.laser.student_files import finish_student
    from trainer.mixcse.train import TrainEval, TrainStep

    paths = DataPaths(home)
    corpus, pairs = write_training_data(args.shared, home / "data", args.wiki)
    pairs += args.extra_pairs  # a trial beside the benchmark's data, never Tatoeba
    config = StudentConfig(teacher=TEACHER, corpus=(str(corpus),), one_per_line=True,
                           pairs=tuple(map(str, pairs)), out_dir=home / "run", threads=args.threads,
                           steps=args.steps, time_limit_s=args.minutes * 60, eval_steps=100,
                           init_from_teacher=not args.random_embeddings,
                           embedding_lr_scale=args.embedding_lr_scale, **{
                               name: value for name, value in (("vocab_size", args.vocab_size),
                                                               ("spans_per_sentence", args.spans),
                                                               ("epochs", args.epochs))
                               if value is not None})
    started, finished, log_rows = time.monotonic(), None, []
    for event in train_student(config, paths=paths, teacher=teacher):
        if isinstance(event, TrainStep):
            if event.step % 25 == 0:
                log.info("step %d/%d loss %.4f", event.step, event.total, event.loss)
                log_rows.append((event.step, event.loss))
        elif isinstance(event, TrainEval):
            log.info("step %d: held-out cosine %.2f", event.step, event.score)
        elif isinstance(event, StudentFinished):
            finished = event
        else:
            log.info("%s", event if not hasattr(event, "config") else type(event).__name__)
    manifest = finish_student(finished, "laser-student", paths=paths)
    info = {"train_s": time.monotonic() - started, "steps": finished.steps,
            "best_step": finished.best_step, "held_out_cosine": finished.best_score,
            "loss_log": log_rows, "config": config.to_dict(), "parity": manifest.export_parity}
    return manifest, info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--models", type=Path, default=Path(os.environ.get(
        "BABELFIND_TEST_MODELS", "/work/models-cache/models")))
    parser.add_argument("--wiki", type=int, default=None, help="English Wikipedia sentences (default: all)")
    parser.add_argument("--pud", type=int, default=1000, help="PUD sentences per language (trials)")
    parser.add_argument("--tatoeba-pairs", type=int, default=300)
    parser.add_argument("--steps", type=int, default=None, help="default: --epochs passes")
    parser.add_argument("--epochs", type=int, default=None, help="default: the trainer's")
    parser.add_argument("--vocab-size", type=int, default=None, help="default: the trainer's")
    parser.add_argument("--spans", type=int, default=None, help="spans per sentence (default: the trainer's)")
    parser.add_argument("--minutes", type=float, default=20.0, help="training time limit")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--random-embeddings", action="store_true",
                        help="the student's embeddings start random (the first baseline)")
    parser.add_argument("--embedding-lr-scale", type=float, default=1.0)
    parser.add_argument("--extra-pairs", nargs="+", type=Path, default=[], metavar="TSV",
                        help="more translation pairs beside PUD's (a trial with other text)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "bench_laser_student")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    global PUD_LIMIT
    PUD_LIMIT = args.pud
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    from engine.config import DataPaths
    from engine.models import load_encoder

    args.cache.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="bench-laser-student-"))
    (home / "models").mkdir()
    (home / "models" / TEACHER).symlink_to(args.models / TEACHER)
    os.environ["BABELFIND_HOME"] = str(home)
    paths = DataPaths(home)
    teacher = CachedEncoder(load_encoder(TEACHER, device="cpu", paths=paths, threads=args.threads),
                            args.cache / "teacher_vectors.npz")
    manifest, info = train(args, home, teacher)
    teacher.save()
    student = load_encoder(manifest.name, device="cpu", paths=paths, threads=args.threads)
    result = {"teacher": evaluate(teacher, args.shared, args.tatoeba_pairs),
              "student": evaluate(student, args.shared, args.tatoeba_pairs), "training": info}
    teacher.save()
    sentences = tatoeba(args.shared, "de", 250)[0] + pud(args.shared, "fr")[:250]
    rates = speed({"teacher": teacher.encoder, "student": student}, sentences, args.repeats)
    result["speed"] = rates | {"ratio": rates["student"] / rates["teacher"],
                               "sentences": len(sentences), "threads": args.threads}
    print(json.dumps({k: v for k, v in result.items() if k != "training"}, indent=2))
    print(json.dumps({k: v for k, v in info.items() if k != "loss_log"}, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    shutil.rmtree(home, ignore_errors=True)  # the run folder; the teacher cache stays


if __name__ == "__main__":
    main()
