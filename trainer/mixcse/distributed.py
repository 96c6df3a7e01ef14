"""Multi-GPU training helpers: negatives from every device, gradients through the local slice.

    torchrun --nproc-per-node 4 -m trainer.mixcse.ddp --config run.json

Under DDP each rank embeds its own micro-batch. `gather_with_grad` all-gathers the
embeddings so the contrastive loss sees every rank's sentences as negatives; all_gather
returns tensors without autograd history, so the rank's own slice is put back as the local
tensor, and the gradient reaches this rank's encoder only through its own sentences (the
standard trick SimCSE uses). Every rank then computes the same loss on the same
``[world * n, d]`` batch; DDP *averages* parameter gradients over ranks, so the loss is
multiplied by the world size to give exactly the gradient of the single-process loss on the
concatenated batch (tested in tests/trainer/mixcse/test_ddp.py).
"""

from __future__ import annotations

import os

import torch
import torch.distributed as dist


def world() -> tuple[int, int]:
    """(rank, world size); (0, 1) outside torch.distributed."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def init_from_env(backend: str | None = None) -> bool:
    """Joins the process group torchrun describes in the environment; False when alone."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1 or dist.is_initialized():
        return dist.is_initialized()
    backend = backend or ("nccl" if torch.cuda.is_available() else "gloo")
    dist.init_process_group(backend)
    if torch.cuda.is_available():
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    return True


def gather_with_grad(local: torch.Tensor) -> torch.Tensor:
    """``[n, d]`` on each rank -> ``[world * n, d]``, rank order, grad through the own slice.

    Every rank must pass the same ``n`` (the trainer keeps micro-batches equal).
    """
    rank, size = world()
    if size == 1:
        return local
    parts = [torch.empty_like(local) for _ in range(size)]
    dist.all_gather(parts, local.detach().contiguous())
    parts[rank] = local
    return torch.cat(parts, dim=0)


def barrier() -> None:
    if world()[1] > 1:
        dist.barrier()

