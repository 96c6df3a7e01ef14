"""Benchmark of the MixCSE loss: forward+backward time and peak memory per implementation.

    OMP_NUM_THREADS=1 python bench/bench_loss.py                       # CPU: reference vs gram
    python bench/bench_loss.py --device cuda --dtype bfloat16          # adds the fused kernel

For each batch size N (default 64 256 1024 4096, d = 768) and implementation it builds two
seeded views ``h2 = h1 + 3 noise`` (positive cosine ~0.3), runs ``mixcse_loss(...).backward()``
with the paper's settings (lambda 0.2, tau 0.05, bidirectional, stop-gradient) and reports

* time: median wall time of ``--repeats`` forward+backward passes after one warm-up pass,
  and the median CPU time of the process (on a shared, loaded CPU the steadier figure);
* peak memory: the rise above the memory held just before the first pass (the inputs).
  On CUDA ``torch.cuda.max_memory_allocated``; on a CPU each case runs in a fresh child
  process and the figure is its peak RSS (``ru_maxrss``) minus its RSS before the pass, so
  small cases mostly show allocator noise;
* the loss's relative difference from the reference (or from "gram" where the reference
  was skipped), as a check that the fast paths compute the same thing.

Cases whose estimated memory exceeds ``--memory-limit-gb`` are skipped and listed with the
estimate: the reference peaks at about 13 bytes per ``[N, N, d]`` element (some three float32
tensors of that shape: the mixes, the normalised mixes, a product), i.e. ~10 GiB at N = 1024
and ~160 GiB at N = 4096, where a single such tensor is already 48 GiB.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

GIB = 1024**3
# Peak bytes per element, measured with this script on a CPU (float32, bidirectional,
# stop-gradient): reference 12.4 per [N, N, d] element at N = 256 and 512; gram well under
# 48 per [N, N] element (it holds about a dozen float32 [N, N] matrices).
REFERENCE_BYTES_PER_NND = 13
GRAM_BYTES_PER_NN = 48


def estimate_bytes(impl: str, n: int, d: int) -> int:
    if impl == "reference":
        return REFERENCE_BYTES_PER_NND * n * n * d
    if impl in ("gram", "official"):
        return GRAM_BYTES_PER_NN * n * n
    return 16 * n * d  # fused: gradients and row statistics only


def make_views(n: int, d: int, device: str, dtype_name: str):
    import torch

    g = torch.Generator().manual_seed(n)
    h1 = torch.randn(n, d, generator=g)
    h2 = h1 + 3.0 * torch.randn(n, d, generator=g)
    dtype = getattr(torch, dtype_name)
    return (h1.to(device, dtype).requires_grad_(), h2.to(device, dtype).requires_grad_())


def run_case(impl: str, n: int, d: int, device: str, dtype_name: str, repeats: int) -> dict:
    """Loss value, median ms and peak extra bytes of one implementation at one size."""
    import torch

    from trainer.mixcse.losses import mixcse_loss

    torch.manual_seed(0)
    h1, h2 = make_views(n, d, device, dtype_name)
    kwargs = {"variant": "official"} if impl == "official" else {"impl": impl}

    def step() -> float:
        h1.grad = h2.grad = None
        loss = mixcse_loss(h1, h2, **kwargs)
        loss.backward()
        return loss.item()

    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        value = step()
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - before
    else:
        before = _rss_bytes()
        value = step()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    times, cpu_times = [], []
    for _ in range(repeats):
        start, cpu_start = time.perf_counter(), time.process_time()
        step()
        if device == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
        cpu_times.append(time.process_time() - cpu_start)
    return {"loss": value, "ms": 1000 * statistics.median(times),
            "cpu_ms": 1000 * statistics.median(cpu_times), "peak": max(peak, 0)}


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def _child(queue, *args) -> None:
    queue.put(run_case(*args))


def run_isolated(*args) -> dict:
    """run_case in a fresh process, so its peak RSS belongs to this case alone."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(queue, *args))
    proc.start()
    result = queue.get()
    proc.join()
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 256, 1024, 4096])
    parser.add_argument("--dim", type=int, default=768)
    parser.add_argument("--impls", nargs="+", default=None,
                        help="reference gram fused official (default: reference gram, plus fused on cuda)")
    parser.add_argument("--dtype", default="float32", help="input dtype: float32 or bfloat16")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--memory-limit-gb", type=float, default=24.0,
                        help="skip a case whose estimated peak memory exceeds this")
    args = parser.parse_args(argv)
    impls = args.impls or (["reference", "gram", "fused"] if args.device == "cuda" else ["reference", "gram"])
    rows = []
    for n in args.sizes:
        results = {}
        for impl in impls:
            estimate = estimate_bytes(impl, n, args.dim)
            if estimate > args.memory_limit_gb * GIB:
                results[impl] = {"skipped": f"skipped: needs ~{estimate / GIB:.0f} GiB > {args.memory_limit_gb:g}"}
                continue
            case = (impl, n, args.dim, args.device, args.dtype, args.repeats)
            results[impl] = run_case(*case) if args.device == "cuda" else run_isolated(*case)
            print(f"N={n} {impl}: {results[impl]}", file=sys.stderr, flush=True)
        rows.extend(table_rows(n, impls, results))
    print(f"MixCSE loss fwd+bwd, d={args.dim}, {args.dtype}, device={args.device}, median of {args.repeats}\n")
    print("| N | impl | fwd+bwd wall ms | CPU ms | peak extra MiB | speed-up vs reference (CPU time) | loss rel. diff |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))


def table_rows(n: int, impls: list[str], results: dict) -> list[str]:
    base_name = "reference" if "ms" in results.get("reference", {}) else "gram"
    base = results.get(base_name, {})
    rows = []
    for impl in impls:
        r = results[impl]
        if "skipped" in r:
            rows.append(f"| {n} | {impl} | {r['skipped']} | | | | |")
            continue
        ratio = ""
        if impl == "reference":
            ratio = "1 (baseline)"
        elif "ms" in base and base_name == "reference":
            ratio = f"{base['cpu_ms'] / r['cpu_ms']:.1f}x"
        diff = ""
        if "loss" in base and impl not in (base_name, "official"):
            diff = f"{abs(r['loss'] - base['loss']) / abs(base['loss']):.1e} (vs {base_name})"
        rows.append(f"| {n} | {impl} | {r['ms']:.1f} | {r['cpu_ms']:.1f} | {r['peak'] / 2**20:.0f} | {ratio} | {diff} |")
    return rows


if __name__ == "__main__":
    main()
