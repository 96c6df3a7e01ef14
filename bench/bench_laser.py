"""LASER speed on CPU: torch (packed BiLSTM, as laser_encoders runs it) vs our ONNX graph.

    OMP_NUM_THREADS=2 python bench/bench_laser.py --sentences 512 --out bench/out/laser.json

Without the official files this builds a LASER2-shaped encoder with random weights
(vocab 50,004, embed 320, 5 x BiLSTM 512, output 1024) and feeds both back ends the same
token ids: lengths are the Tatoeba sentences' word counts x 1.3 + 1 (LASER2's
SentencePiece gives ~1.3 pieces per word; + </s>). With --checkpoint/--spm the real
model and tokenizer are used on the Tatoeba sentences themselves. Same batches (length
sorted, 64 at most) for both; best of --repeats runs; vectors compared for parity.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from engine.encoders.onnx import create_session, length_batches, physical_cores  # noqa: E402
from engine.eval_tatoeba import available_languages, load_pair  # noqa: E402
from trainer.laser.bilstm import LaserLstm, export_laser_onnx, load_laser_checkpoint  # noqa: E402

TATOEBA = REPO.parent / "shared" / "data" / "tatoeba" / "v1"
LASER2_PARAMS = dict(num_embeddings=50004, padding_idx=1, embed_dim=320, hidden_size=512,
                     num_layers=5, bidirectional=True, left_pad=False, padding_value=0.0)


def tatoeba_sentences(n: int) -> list[str]:
    """n sentences, round robin over languages (non-English side)."""
    pools = [load_pair(TATOEBA, lang)[0] for lang in available_languages(TATOEBA)]
    out, row = [], 0
    while len(out) < n and any(row < len(p) for p in pools):
        out.extend(p[row] for p in pools if row < len(p))
        row += 1
    return out[:n]


def token_rows(args, texts: list[str]) -> tuple[LaserLstm, list[list[int]]]:
    if args.checkpoint:
        from engine.encoders.laser_tokenizer import LaserTokenizer

        module, _, vocab = load_laser_checkpoint(args.checkpoint)
        return module, LaserTokenizer(args.spm, vocab).batch_ids(texts)
    torch.manual_seed(0)
    module = LaserLstm(**LASER2_PARAMS).eval()
    rng = np.random.default_rng(0)
    rows = []
    for text in texts:
        length = max(1, round(len(text.split()) * 1.3))
        rows.append(list(rng.integers(4, LASER2_PARAMS["num_embeddings"], length)) + [2])
    return module, rows


def padded(rows: list[list[int]], pad: int) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.array([len(r) for r in rows], dtype=np.int64)
    ids = np.full((len(rows), int(lengths.max())), pad, dtype=np.int64)
    for i, row in enumerate(rows):
        ids[i, :len(row)] = row
    return ids, lengths


def run_all(encode, rows: list[list[int]], dim: int, repeats: int) -> tuple[float, np.ndarray]:
    """Best sentences/s over `repeats` runs of every length batch, and the vectors."""
    batches = length_batches([len(r) for r in rows])
    encode(*padded(rows[:8], 1))  # warm-up
    best, out = 0.0, np.zeros((len(rows), dim), dtype=np.float32)
    for _ in range(repeats):
        start = time.perf_counter()
        for batch in batches:
            out[batch] = encode(*padded([rows[i] for i in batch], 1))
        best = max(best, len(rows) / (time.perf_counter() - start))
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sentences", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--checkpoint", type=Path, help="laser2.pt (default: random LASER2 shape)")
    parser.add_argument("--spm", type=Path, help="laser2.spm, with --checkpoint")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(physical_cores())
    texts = tatoeba_sentences(args.sentences)
    module, rows = token_rows(args, texts)

    def torch_encode(ids, lengths):
        with torch.inference_mode():
            vectors = module(torch.from_numpy(ids), torch.from_numpy(lengths))
            return torch.nn.functional.normalize(vectors, dim=-1).numpy()

    with tempfile.TemporaryDirectory() as tmp:
        path = export_laser_onnx(module, Path(tmp) / "laser.onnx")
        session = create_session(path, ["CPUExecutionProvider"], physical_cores())

        def onnx_encode(ids, lengths):
            return session.run(None, {"input_ids": ids, "lengths": lengths})[0]

        torch_rate, torch_vectors = run_all(torch_encode, rows, module.output_units, args.repeats)
        onnx_rate, onnx_vectors = run_all(onnx_encode, rows, module.output_units, args.repeats)
    cosine = (torch_vectors * onnx_vectors).sum(1)
    result = {
        "model": str(args.checkpoint or "random LASER2-shaped BiLSTM"),
        "sentences": len(rows), "mean_tokens": float(np.mean([len(r) for r in rows])),
        "threads": physical_cores(), "torch_sent_per_s": round(torch_rate, 1),
        "onnx_sent_per_s": round(onnx_rate, 1), "onnx_over_torch": round(onnx_rate / torch_rate, 2),
        "min_cosine": float(cosine.min()),
    }
    print(json.dumps(result, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
