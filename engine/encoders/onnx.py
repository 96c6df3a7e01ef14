"""Sentence encoders served by ONNX Runtime; the query path never imports torch.

    >>> enc = OnnxEncoder(folder, manifest)          # usually via engine.models.load_encoder
    >>> enc.encode(["query text"], kind="query")    # float32 [1, dim], unit rows
    >>> enc.device, enc.providers                   # ('cpu', ['CPUExecutionProvider'])

The ONNX graph (made by trainer.serving.export) is the transformer body: it takes the looked-up
`token_embeddings` float32 [batch, seq, dim] and int64 `attention_mask` [batch, seq]
(plus `input_ids` when its position ids need them) and returns `embedding` [batch, dim],
pooled and L2-normalised inside. The token embedding table is a memory-mapped file
beside it (`engine.encoders.embedding_table`), named by `manifest.embeddings`. Folders
of earlier versions, whose graph holds the table and takes `input_ids`, still load
(`engine.encoders.migrate` converts them once).
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Sequence

import numpy as np

from engine.encoders.base import TextKind, l2_normalise
from engine.encoders.embedding_table import EmbeddingTable
from engine.encoders.unigram import CompactUnigram
from engine.errors import InputError, ModelError

log = logging.getLogger(__name__)

CPU_PROVIDER = "CPUExecutionProvider"
CUDA_PROVIDER = "CUDAExecutionProvider"
# Batches hold texts of similar length (padding is computed like real tokens), at most
# this many rows and padded tokens (rows * longest). On CPU a few hundred tokens keep a
# batch's FFN activations ([tokens, ffn] floats) near one core's L2 cache while the
# matrix multiplies still have enough rows; more rows of short texts or fewer of long
# ones measured slower (docs/benchmarks.md, "Encoders").
MAX_BATCH = 64
MAX_BATCH_TOKENS = 384
# At most this share of a batch's tokens may be padding; the rest of the long tail
# starts a new batch (one long sentence must not pad 15 short ones to its length).
MAX_PADDING = 0.10
# A GPU wants large batches; its memory, not its cache, bounds them.
GPU_MAX_BATCH = 256
# Up to this many characters per encode call go through the compact tokenizer (queries,
# small batches: it loads in milliseconds); more load tokenizers' Rust one, which is
# about five times faster per text (docs/benchmarks.md, "Serving footprint").
COMPACT_MAX_CHARS = 4096
GPU_MAX_BATCH_TOKENS = 65536


def cuda_device_count() -> int:
    """Number of CUDA devices the driver reports (0 without a driver); no torch needed."""
    for lib in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
        try:
            cuda = ctypes.CDLL(lib)
        except OSError:
            continue
        count = ctypes.c_int(0)
        if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
            return 0
        return count.value
    return 0


def choose_providers(
    device: str = "auto", available: Sequence[str] | None = None, gpu_count: int | None = None
) -> list[str]:
    """ONNX Runtime providers for `device` ("auto" | "cpu" | "cuda"), best first.

    CUDA is chosen only when onnxruntime-gpu offers it AND a GPU is present; the CPU
    provider is always last so a failing CUDA setup still falls back.
    """
    if device not in ("auto", "cpu", "cuda"):
        raise InputError(f"unknown device {device!r}; choose auto, cpu or cuda")
    if device == "cpu":
        return [CPU_PROVIDER]
    if available is None:
        import onnxruntime

        available = onnxruntime.get_available_providers()
    has_cuda = CUDA_PROVIDER in available
    if has_cuda and gpu_count is None:
        gpu_count = cuda_device_count()
    if has_cuda and gpu_count:
        return [CUDA_PROVIDER, CPU_PROVIDER]
    if device == "cuda":
        raise ModelError("device 'cuda' asked for, but onnxruntime-gpu or a GPU is missing")
    return [CPU_PROVIDER]


def resolve_device(device: str = "auto") -> str:
    """"cuda" or "cpu": what `device` means on this machine."""
    return "cuda" if choose_providers(device)[0] == CUDA_PROVIDER else "cpu"


def physical_cores() -> int:
    """Physical cores this process may run on (hyper-threads counted once).

    Encoders use one thread per physical core (see `parallel_plan`); OMP_NUM_THREADS,
    when set, caps it so a shared machine is not oversubscribed.
    """
    try:
        allowed = sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        allowed = list(range(os.cpu_count() or 1))
    cores = set()
    for cpu in allowed:
        base = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
        try:
            cores.add((base / "physical_package_id").read_text().strip() + ":" +
                      (base / "core_id").read_text().strip())
        except OSError:
            cores.add(str(cpu))
    count = max(1, len(cores))
    cap = os.environ.get("OMP_NUM_THREADS", "")
    return min(count, int(cap)) if cap.isdigit() and int(cap) > 0 else count


def length_batches(lengths: Sequence[int], max_batch: int = MAX_BATCH,
                   max_tokens: int = MAX_BATCH_TOKENS,
                   max_padding: float = MAX_PADDING) -> list[np.ndarray]:
    """Indices grouped into batches of similar length (longest first).

    A batch closes when it is full (`max_batch` rows or `max_tokens` padded tokens) or
    when the next text would make more than `max_padding` of its tokens padding.

    >>> length_batches([10, 30, 9, 29], max_batch=2)   # [array([1, 3]), array([0, 2])]
    >>> length_batches([10, 30])   # [array([1]), array([0])]: else 20 of 60 tokens are padding
    """
    lengths = np.maximum(np.asarray(lengths, dtype=np.int64), 1)  # empty texts still run
    order = np.argsort(-lengths, kind="stable")
    batches, start = [], 0
    while start < len(order):
        longest = int(lengths[order[start]])
        rows = max(1, min(max_batch, max_tokens // longest))
        end, real = start + 1, longest
        while end < len(order) and end - start < rows:
            padded = (end - start + 1) * longest
            if padded - (real + lengths[order[end]]) > max_padding * padded:
                break
            real += int(lengths[order[end]])
            end += 1
        batches.append(order[start:end])
        start = end
    return batches


def parallel_plan(device: str, threads: int) -> tuple[int, int]:
    """(batches run side by side, ORT intra-op threads per run) for `threads` cores.

    On CPU each core runs whole batches on its own: a small model's ops (384-wide
    matrices, softmax over a dozen tokens) are too short to split across cores without
    the cores waiting on each other. With the batch limits above this measured 1.4-2.0x
    the throughput of one batch at a time on two cores (docs/benchmarks.md, "Encoders").
    A GPU runs one batch at a time.
    """
    return (max(1, threads), 1) if device == "cpu" else (1, max(1, threads))


def create_session(path: Path, providers: Sequence[str], threads: int, *, optimised: bool = False):
    """An ORT session for `path` (`threads` intra-op threads), set up to start quickly.

    `optimised`: the file was saved already optimised for the CPU provider
    (`engine.encoders.migrate.save_cpu_optimised`), so a CPU session skips the optimiser (a third of the time).

    Raises:
        ModelError naming `path` when ONNX Runtime cannot load it.
    """
    import onnxruntime as ort

    options = session_options(ort, threads, optimised=optimised and providers[0] == CPU_PROVIDER)
    try:
        return ort.InferenceSession(str(path), options, providers=list(providers))
    except Exception as e:  # ORT raises its own Fail/InvalidGraph/... types
        raise ModelError(f"{path} is not a loadable ONNX model: {e}", path) from e


def session_options(ort, threads: int, *, optimised: bool = False):
    """Session options chosen for start-up time (docs/benchmarks.md, "Serving footprint").

    Weight prepacking stays on: turning it off saved 40 ms and 44 MB at start but
    doubled the time of each run.
    """
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_DISABLE_ALL if optimised
                                        else ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    return options


def check_output_shape(shape, dim: int, path: Path) -> None:
    """The graph's output must be [batch, dim]; ModelError naming the file otherwise."""
    if len(shape) != 2 or (isinstance(shape[1], int) and shape[1] != dim):
        raise ModelError(f"{path}: output shape {shape} is not [batch, {dim}] as the manifest says", path)


class LengthBatchedEncoder:
    """Shared part of the ONNX encoders: the model's files, device and threads, and an
    `encode` that sorts texts by token length into batches, so little padding is
    computed, runs `parallel_batches` of them at a time (ORT sessions take concurrent
    runs), and puts the rows back in input order.

    Subclasses name their graph (`graph_kind`, `input_names`) and provide
    `tokenize(texts, kind) -> list[list[int]]` and
    `_run(rows of ids) -> float32 [len(rows), dim]`, which must be thread-safe.
    """

    graph_kind: str  # "a transformer graph", for the error on a wrong file
    input_names: tuple[str, ...]  # inputs `_run` feeds
    exact_inputs = False  # True: the graph may have no other inputs

    def __init__(self, folder: Path, manifest, *, variant: str, device: str, threads: int | None):
        self.folder = Path(folder)
        self.manifest = manifest
        self.name = manifest.name
        self.dim = int(manifest.dim)
        self.variant = variant
        self.pad_id = int(manifest.pad_token_id)
        self.providers = choose_providers(device)
        self.device = "cuda" if self.providers[0] == CUDA_PROVIDER else "cpu"
        self.threads = threads or physical_cores()
        self.parallel_batches, self.intra_op_threads = parallel_plan(self.device, self.threads)
        self.model_path = self.folder / manifest.variant_file(variant)
        self.graph_optimised = bool((manifest.variants.get(variant) or {}).get("cpu_optimised"))

    def _load_session(self, path: Path):
        """An ORT session for `path`, checked to be this kind of graph (ModelError if not)."""
        session = create_session(path, self.providers, self.intra_op_threads,
                                 optimised=self.graph_optimised)
        inputs = {i.name for i in session.get_inputs()}
        outputs = session.get_outputs()
        expected = set(self.input_names)
        if not (inputs == expected if self.exact_inputs else expected <= inputs) or len(outputs) != 1:
            raise ModelError(
                f"{path}: not {self.graph_kind}: expected inputs {', '.join(self.input_names)} "
                f"and one output, found inputs {sorted(inputs)} and {len(outputs)} outputs", path)
        check_output_shape(outputs[0].shape, self.dim, path)
        self.providers = session.get_providers()
        return session

    def _warm_up(self) -> None:
        """One encode, so the first real one is not slow; its shape checks the graph."""
        try:
            vectors = self.encode(["warm-up"])
        except (ModelError, InputError):
            raise
        except Exception as e:  # noqa: BLE001 -- ORT raises its own Fail/RuntimeException types
            raise ModelError(f"{self.model_path}: the model fails on its first input: "
                             f"{' '.join(str(e).split())[:300]}", self.model_path) from e
        if vectors.shape != (1, self.dim):
            raise ModelError(f"{self.model_path}: produced shape {vectors.shape}, expected "
                             f"(1, {self.dim})", self.model_path)

    def encode(self, texts: Sequence[str], kind: TextKind = "passage") -> np.ndarray:
        """float32 [len(texts), dim], unit rows, in input order."""
        if isinstance(texts, str):
            raise InputError("encode() takes a list of texts, not one string")
        ids = self.tokenize(list(texts), kind)
        out = np.zeros((len(ids), self.dim), dtype=np.float32)
        batches = length_batches([len(x) for x in ids], **self._batch_limits(len(ids)))
        for batch, vectors in zip(batches, self._run_all([[ids[i] for i in b] for b in batches])):
            out[batch] = vectors
        return l2_normalise(out)

    def _batch_limits(self, count: int) -> dict:
        if self.device == "cuda":
            return {"max_batch": GPU_MAX_BATCH, "max_tokens": GPU_MAX_BATCH_TOKENS}
        # A few texts are split evenly so that every core gets some.
        return {"max_batch": min(MAX_BATCH, -(-count // self.parallel_batches) or 1),
                "max_tokens": MAX_BATCH_TOKENS}

    def _run_all(self, batches: list[list[list[int]]]):
        if self.parallel_batches == 1 or len(batches) <= 1:
            return map(self._run, batches)
        with ThreadPoolExecutor(self.parallel_batches, thread_name_prefix="encode") as pool:
            return list(pool.map(self._run, batches))


class OnnxEncoder(LengthBatchedEncoder):
    """An `Encoder` backed by an ONNX Runtime session and a fast `tokenizers` tokenizer."""

    graph_kind = "a transformer graph"
    input_names = ("input_ids", "attention_mask")

    def __init__(self, folder: Path, manifest, *, variant: str = "fp32", device: str = "auto",
                 threads: int | None = None):
        super().__init__(folder, manifest, variant=variant, device=device, threads=threads)
        self.max_length = int(manifest.max_length)
        self.prefixes = dict(manifest.prefixes or {})
        spec = dict(getattr(manifest, "embeddings", None) or {})
        # body + table format: the graph reads looked-up rows; else (earlier versions) ids
        self.table = EmbeddingTable.open(self.folder, spec) if spec else None
        if self.table is not None:
            self.input_names = (spec.get("input", "token_embeddings"), "attention_mask")
        self.tokenizer_path = self.folder / manifest.tokenizer_file
        self._tokenizer = None
        self._tokenizer_lock = threading.Lock()
        compact = getattr(manifest, "compact_tokenizer", "")
        self.compact = CompactUnigram.load(self.folder / compact) if compact else None
        if self.compact is None:
            self._tokenizer = self._load_tokenizer(self.tokenizer_path)
        self._check_vocabulary()
        self.session = self._load_session(self.model_path)
        self.feeds_ids = "input_ids" in {i.name for i in self.session.get_inputs()}
        self._warm_up()

    @property
    def tokenizer(self):
        """The `tokenizers.Tokenizer` (loaded on first use when a compact one serves queries)."""
        with self._tokenizer_lock:
            if self._tokenizer is None:
                self._tokenizer = self._load_tokenizer(self.tokenizer_path)
            return self._tokenizer

    def _check_vocabulary(self) -> None:
        if self.table is None:
            return
        size = (self.compact.vocab_size if self.compact is not None
                else self.tokenizer.get_vocab_size(with_added_tokens=True))
        if size > self.table.vocab_size:
            raise ModelError(f"{self.table.path}: {self.table.vocab_size} rows, but the tokenizer "
                             f"has {size} tokens", self.table.path)
        if self.table.dim != self.dim:
            raise ModelError(f"{self.table.path}: rows of {self.table.dim} values, the manifest "
                             f"says dim {self.dim}", self.table.path)

    def _load_tokenizer(self, path: Path):
        from tokenizers import Tokenizer

        try:
            tokenizer = Tokenizer.from_file(str(path))
        except Exception as e:  # tokenizers raises plain Exception subclasses
            raise ModelError(f"cannot read tokenizer {path}: {e}", path) from e
        tokenizer.no_padding()  # batches are padded here, per length bucket
        tokenizer.enable_truncation(self.max_length)
        return tokenizer

    def tokenize(self, texts: Sequence[str], kind: TextKind = "passage") -> list[list[int]]:
        """Token ids per text, with the model's prefix for `kind`, truncated to max_length."""
        if kind not in ("query", "passage"):
            raise InputError(f"unknown text kind {kind!r}; use 'query' or 'passage'")
        prefixed = [self.prefixes.get(kind, "") + t for t in texts]
        ids: list[list[int] | None] = [None] * len(prefixed)
        if self.compact is not None and sum(map(len, prefixed)) <= COMPACT_MAX_CHARS:
            ids = [self.compact.encode(t, self.max_length) for t in prefixed]
        rest = [i for i, row in enumerate(ids) if row is None]
        if rest:
            for i, encoding in zip(rest, self.tokenizer.encode_batch([prefixed[i] for i in rest])):
                ids[i] = encoding.ids
        return ids

    def _run(self, rows: list[list[int]]) -> np.ndarray:
        # input_ids / attention_mask: int64 [batch, longest in batch]
        width = max(1, max(len(r) for r in rows))  # all-empty texts still run
        input_ids = np.full((len(rows), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for i, row in enumerate(rows):
            input_ids[i, :len(row)] = row
            mask[i, :len(row)] = 1
        if self.device == "cuda":
            return self._run_bound(input_ids, mask, "cuda")
        return self.session.run(None, self._feeds(input_ids, mask))[0]

    def _feeds(self, input_ids: np.ndarray, mask: np.ndarray) -> dict[str, np.ndarray]:
        """The graph's inputs: looked-up rows [batch, seq, dim] when the table is outside."""
        if self.table is None:
            return {"input_ids": input_ids, "attention_mask": mask}
        feeds = {self.input_names[0]: self.table.lookup(input_ids), "attention_mask": mask}
        if self.feeds_ids:
            feeds["input_ids"] = input_ids
        return feeds

    def _run_bound(self, input_ids: np.ndarray, mask: np.ndarray, device: str) -> np.ndarray:
        # IO binding: inputs copied to `device` once and the output allocated there, so
        # ORT does not stage them through host buffers of its own ("cpu" works too).
        binding = self.session.io_binding()
        for name, value in self._feeds(input_ids, mask).items():
            binding.bind_cpu_input(name, value)
        binding.bind_output(self.session.get_outputs()[0].name, device)
        self.session.run_with_iobinding(binding)
        return binding.copy_outputs_to_cpu()[0].astype(np.float32)

    def __repr__(self) -> str:
        return (f"OnnxEncoder({self.name!r}, dim={self.dim}, variant={self.variant!r}, "
                f"device={self.device!r}, threads={self.threads}, "
                f"parallel_batches={self.parallel_batches})")
