#!/usr/bin/env bash
# The GPU paths on a CUDA machine, in one short run: the fused Triton MixCSE loss compiled
# for the real device and checked against the PyTorch reference (the same tests that run
# under TRITON_INTERPRET=1 on a CPU), then its time and memory beside the reference and the
# Gram form (bench/bench_loss.py) in float32 and bfloat16.
#
#     OUT=/tmp/gpu bash bench/gpu_check.sh
#
# Needs torch with CUDA, triton and pytest (no faiss, Qt or ONNX Runtime: only trainer/'s
# loss and engine/errors.py are imported). Writes its logs under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/babelfind-gpu}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1

{
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
    python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0))"
} 2>&1 | tee "$OUT/machine.txt"

# -o addopts= drops the project's pytest options that need plugins the machine may lack.
timeout 240 python3 -m pytest -q -p no:cacheprovider -o addopts="--import-mode=importlib -ra" \
    tests/trainer/mixcse/test_losses.py tests/trainer/mixcse/test_fused_compiles.py 2>&1 \
    | tail -25 | tee "$OUT/tests.txt"

for dtype in float32 bfloat16; do
    timeout 150 python3 bench/bench_loss.py --device cuda --dtype "$dtype" --repeats 10 \
        --sizes 64 256 1024 4096 16384 --memory-limit-gb 100 2>"$OUT/loss_$dtype.err" \
        | tee "$OUT/loss_$dtype.md"
done
