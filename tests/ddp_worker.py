"""Worker of tests/trainer/mixcse/test_ddp.py (a module of its own so spawned processes import it)."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from trainer.config import TrainConfig

N_PER_RANK, DIM_IN, DIM = 5, 12, 8
WORLD = 2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def data():
    generator = torch.Generator().manual_seed(3)
    x = torch.randn(WORLD * N_PER_RANK, DIM_IN, generator=generator)
    noise = 0.1 * torch.randn(WORLD * N_PER_RANK, DIM_IN, generator=generator)
    return x, x + noise


def model_under_test():
    torch.manual_seed(11)
    return torch.nn.Sequential(torch.nn.Linear(DIM_IN, 16), torch.nn.Tanh(), torch.nn.Linear(16, DIM))


def _worker(rank: int, port: int, out_dir: str, tiny: str | None) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      WORLD_SIZE=str(WORLD), OMP_NUM_THREADS="1")
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    try:
        from trainer.mixcse.train import make_loss

        model = torch.nn.parallel.DistributedDataParallel(model_under_test())
        x1, x2 = data()
        mine = slice(rank * N_PER_RANK, (rank + 1) * N_PER_RANK)
        config = TrainConfig(batch_size=N_PER_RANK, device="cpu")
        h = model(torch.cat([x1[mine], x2[mine]]))  # one forward, as the trainer does
        loss = make_loss(config)(h[:N_PER_RANK], h[N_PER_RANK:])
        loss.backward()  # DDP all-reduces (averages) the gradients here
        grads = [p.grad.tolist() for p in model.parameters()]
        result = {"loss": loss.item() / WORLD, "grads": grads}
        if tiny:
            result["train"] = _train_tiny(tiny, out_dir)
        Path(out_dir, f"rank{rank}.json").write_text(json.dumps(result))
    finally:
        dist.destroy_process_group()


def _train_tiny(tiny: str, out_dir: str) -> list:
    """The real loop under DDP: both ranks must see the same loss every step."""
    from train_helpers import tiny_config
    from trainer.events import TrainPreparing
    from trainer.mixcse.train import TrainStep, train

    config = tiny_config(Path(tiny), Path(tiny).parent / "corpus.txt", Path(out_dir) / "run",
                         max_steps=2, batch_size=4)
    events = [e for e in train(config) if not isinstance(e, TrainPreparing)]  # what it does before step 1
    return [e.loss for e in events if isinstance(e, TrainStep)] + [type(events[0]).__name__]


def spawn(tmp_path, tiny=None) -> list[dict]:
    mp.spawn(_worker, args=(free_port(), str(tmp_path), tiny), nprocs=WORLD, join=True)
    return [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(WORLD)]
