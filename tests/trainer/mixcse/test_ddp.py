"""DDP on CPU (gloo, 2 processes): negatives from every rank, gradients as in one process.

Each rank embeds its half of a batch; `trainer.mixcse.train.make_loss` all-gathers the embeddings
(the own slice keeps its autograd history) and scales the loss by the world size, so after
DDP averages the gradients they equal the single-process gradient on the whole batch.
"""

from __future__ import annotations

import pytest
import torch

from ddp_worker import data, model_under_test, spawn
from trainer.mixcse.losses import mixcse_loss


@pytest.mark.slow  # two processes each import torch + transformers: ~1 min on a quiet machine
def test_gathered_loss_and_gradients_equal_single_process_on_whole_batch(tmp_path):
    from train_helpers import tiny_training_inputs

    tiny, _ = tiny_training_inputs(tmp_path, sentences=32)
    ranks = spawn(tmp_path, str(tiny))

    model = model_under_test()
    x1, x2 = data()
    loss = mixcse_loss(model(x1), model(x2))
    loss.backward()
    for result in ranks:
        assert result["loss"] == pytest.approx(loss.item(), rel=1e-6)
        for got, param in zip(result["grads"], model.parameters()):
            torch.testing.assert_close(torch.tensor(got), param.grad, rtol=1e-5, atol=1e-7)

    # the training loop itself ran under DDP on both ranks with identical losses
    steps = [r["train"] for r in ranks]
    assert steps[0][-1] == "TrainStarted" and len(steps[0]) == 3
    assert steps[0] == steps[1]
    assert (tmp_path / "run" / "best" / "model" / "config.json").is_file()
