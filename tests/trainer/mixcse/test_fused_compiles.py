"""The fused MixCSE kernels compile for a real GPU (sm_90) even on a machine without one.

The value tests run the kernels under the Triton interpreter, which accepts code that the
GPU compiler rejects (dot shapes, dtypes, layouts). Compiling to a cubin with Triton's own
ptxas catches those without a device. It needs a process without TRITON_INTERPRET, hence
the subprocess; it takes minutes of CPU, hence ``slow``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]

COMPILE_ALL = textwrap.dedent("""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    import trainer.mixcse.fused_loss as fm

    SCALARS = {"N": "i32", "D": "i32", "stride_a": "i32", "stride_b": "i32", "lam": "fp32", "inv_tau": "fp32"}

    def signature(kernel, dtype):
        sig = {}
        for p in kernel.params:
            if p.is_constexpr:
                sig[p.name] = "constexpr"
            elif p.name in ("a_ptr", "b_ptr"):
                sig[p.name] = "*" + dtype
            elif p.name.endswith("_ptr"):
                sig[p.name] = "*fp32"
            else:
                sig[p.name] = SCALARS[p.name]
        return sig

    target = GPUTarget("cuda", 90, 32)
    for dtype, precision in (("fp32", "ieee"), ("bf16", "tf32")):
        blocks = dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=64, PRECISION=precision, HAS_MIX=True)
        triton.compile(ASTSource(fm._fwd_kernel, signature(fm._fwd_kernel, dtype), blocks), target=target)
        for kernel in (fm._bwd_rows_kernel, fm._bwd_cols_kernel):
            constants = dict(blocks, STOP_GRAD=False, BLOCK_D=128)
            triton.compile(ASTSource(kernel, signature(kernel, dtype), constants), target=target,
                           options={"num_warps": 8})
        print("compiled", dtype)
""")


@pytest.mark.slow
def test_fused_kernels_compile_for_sm90():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_DEFAULT_FP_FUSION"] = "1"  # silence 3.9's notice; fusion is the default anyway
    result = subprocess.run([sys.executable, "-c", COMPILE_ALL], cwd=REPO_ROOT, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.split() == ["compiled", "fp32", "compiled", "bf16"]
