"""OnnxEncoder: provider choice, threads, bucketing, prefixes, and equality with torch."""

from __future__ import annotations

import numpy as np
import pytest

from engine.encoders.base import Encoder
from engine.encoders.onnx import (
    CPU_PROVIDER, CUDA_PROVIDER, choose_providers, length_batches, parallel_plan, physical_cores,
)
from engine.errors import InputError, ModelError
from engine.models import get_manifest, load_encoder
from tiny_models import random_sentences

CUDA_AND_CPU = [CUDA_PROVIDER, CPU_PROVIDER]


def test_cpu_provider_chosen_without_gpu():
    assert choose_providers("auto", available=[CPU_PROVIDER]) == [CPU_PROVIDER]
    # onnxruntime-gpu installed but no device: still CPU
    assert choose_providers("auto", available=CUDA_AND_CPU, gpu_count=0) == [CPU_PROVIDER]
    assert choose_providers("cpu", available=CUDA_AND_CPU, gpu_count=1) == [CPU_PROVIDER]


def test_cuda_provider_chosen_with_gpu_and_cpu_kept_as_fallback():
    assert choose_providers("auto", available=CUDA_AND_CPU, gpu_count=1) == CUDA_AND_CPU
    assert choose_providers("cuda", available=CUDA_AND_CPU, gpu_count=2) == CUDA_AND_CPU


def test_asking_for_cuda_without_it_is_a_clear_error():
    with pytest.raises(ModelError, match="cuda"):
        choose_providers("cuda", available=[CPU_PROVIDER])
    with pytest.raises(InputError):
        choose_providers("tpu")


def test_physical_cores_respects_affinity_and_omp_cap(monkeypatch):
    import os

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    cores = physical_cores()
    assert 1 <= cores <= len(os.sched_getaffinity(0))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert physical_cores() == 1


def test_length_batches_cover_every_index_once_longest_first():
    rng = np.random.default_rng(3)
    lengths = rng.integers(1, 300, size=500).tolist()
    batches = length_batches(lengths, max_batch=16, max_tokens=2000)
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(500))
    assert all(len(b) * max(lengths[i] for i in b) <= 2000 or len(b) == 1 for b in batches)
    firsts = [lengths[b[0]] for b in batches]
    assert firsts == sorted(firsts, reverse=True)


def test_length_batches_bound_padding_so_long_texts_do_not_pad_short_ones():
    rng = np.random.default_rng(5)
    lengths = np.concatenate([rng.integers(5, 30, size=400), [135, 90, 61]]).tolist()
    batches = length_batches(lengths, max_batch=16, max_tokens=16384, max_padding=0.1)
    assert sorted(np.concatenate(batches).tolist()) == list(range(len(lengths)))
    for batch in batches:
        rows = [lengths[i] for i in batch]
        padded = len(rows) * max(rows)
        assert padded - sum(rows) <= 0.1 * padded
    assert [len(b) for b in batches[:3]] == [1, 1, 1]  # the three long texts stand alone
    # Unbounded padding puts them with the next-longest texts, as before this bound.
    assert len(length_batches(lengths, max_batch=16, max_tokens=16384, max_padding=1.0)[0]) == 16


def test_parallel_plan_runs_whole_batches_per_core_on_cpu_only():
    assert parallel_plan("cpu", 4) == (4, 1)
    assert parallel_plan("cuda", 4) == (1, 4)
    assert parallel_plan("cpu", 0) == (1, 1)


def test_batches_run_side_by_side_give_the_serial_vectors(tiny_registry):
    encoder = load_encoder("tiny", paths=tiny_registry, variant="fp32", threads=2)
    assert (encoder.parallel_batches, encoder.intra_op_threads) == (2, 1)
    texts = random_sentences(90, seed=4)
    side_by_side = encoder.encode(texts)
    encoder.parallel_batches = 1
    np.testing.assert_array_equal(encoder.encode(texts), side_by_side)


def test_a_few_texts_are_split_so_every_core_gets_some(tiny_registry):
    encoder = load_encoder("tiny", paths=tiny_registry, variant="fp32", threads=2)
    run, batch_sizes = encoder._run, []
    encoder._run = lambda rows: batch_sizes.append(len(rows)) or run(rows)
    encoder.encode(["the cat sat"] * 6)
    assert batch_sizes == [3, 3]
    batch_sizes.clear()
    encoder.encode(["the cat sat"])
    assert batch_sizes == [1]


def test_encoder_on_this_machine_uses_cpu_and_reports_it(tiny_registry):
    encoder = load_encoder("tiny", paths=tiny_registry, variant="fp32")
    assert isinstance(encoder, Encoder)
    assert encoder.device == "cpu" and encoder.providers == [CPU_PROVIDER]
    assert encoder.threads >= 1


def test_bucketed_batches_equal_one_by_one_encoding(tiny_registry):
    encoder = load_encoder("tiny", paths=tiny_registry, variant="fp32")
    texts = random_sentences(40, seed=1)
    together = encoder.encode(texts)
    one_by_one = np.concatenate([encoder.encode([t]) for t in texts])
    assert together.dtype == np.float32 and together.shape == (40, encoder.dim)
    np.testing.assert_allclose(together, one_by_one, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)


def test_prefix_follows_kind_and_changes_the_vector(tiny_registry):
    encoder = load_encoder("tiny", paths=tiny_registry, variant="fp32")
    query_ids = encoder.tokenize(["the cat"], kind="query")[0]
    passage_ids = encoder.tokenize(["the cat"], kind="passage")[0]
    assert encoder.tokenizer.decode(query_ids).startswith("query :")
    assert encoder.tokenizer.decode(passage_ids).startswith("passage :")
    q, p = encoder.encode(["the cat"], kind="query"), encoder.encode(["the cat"], kind="passage")
    assert float((q * p).sum()) < 0.9999
    with pytest.raises(InputError):
        encoder.encode(["x"], kind="document")


def test_long_texts_are_truncated_to_max_length(tiny_registry):
    encoder = load_encoder("tiny", paths=tiny_registry, variant="fp32")
    long_text = "the cat sat on the mat " * 200
    assert len(encoder.tokenize([long_text])[0]) == encoder.max_length
    assert encoder.encode([long_text]).shape == (1, encoder.dim)


def test_empty_input_and_single_string_misuse(tiny_registry):
    encoder = load_encoder("tiny", paths=tiny_registry, variant="fp32")
    assert encoder.encode([]).shape == (0, encoder.dim)
    assert encoder.encode([""]).shape == (1, encoder.dim)
    with pytest.raises(InputError):
        encoder.encode("one string")


def test_onnx_encoder_equals_torch_encoder(tiny_registry):
    from trainer.serving.export import TorchEncoder

    texts = random_sentences(30, seed=7) + ["Der Hund läuft.", "hello world!"]
    encoder = load_encoder("tiny", paths=tiny_registry, variant="fp32")
    reference = TorchEncoder(tiny_registry.home / "src-tiny", pooling="mean", max_length=64,
                             prefixes={"query": "query: ", "passage": "passage: "})
    for kind in ("query", "passage"):
        cos = (encoder.encode(texts, kind=kind) * reference.encode(texts, kind=kind)).sum(1)
        assert cos.min() >= 0.9999


def test_int8_and_fp16_variants_stay_close_to_fp32(tiny_registry):
    """fp16 always; int8 only when its export check let it be made (the tiny random model's
    int8 is usually refused: its manifest then says why)."""
    texts = random_sentences(30, seed=11)
    manifest = get_manifest("tiny", tiny_registry)
    fp32 = load_encoder("tiny", paths=tiny_registry, variant="fp32").encode(texts)
    made = [v for v in ("int8", "fp16") if manifest.variant_file(v)]
    assert "fp16" in made
    if "int8" not in made:
        assert "cosine" in manifest.variants["int8"]["reason"]
    for variant in made:
        vectors = load_encoder("tiny", paths=tiny_registry, variant=variant).encode(texts)
        assert (fp32 * vectors).sum(1).mean() >= 0.99, variant


def test_cpu_default_variant_follows_the_int8_gate(tiny_registry):
    from engine.models import int8_not_default_reason

    manifest = get_manifest("tiny", tiny_registry)
    # no benchmark data when the tiny model was exported: its int8 has no passed gate
    assert int8_not_default_reason(manifest) is not None
    assert load_encoder("tiny", paths=tiny_registry, device="cpu").variant == "fp32"


def test_io_binding_path_gives_the_plain_run_vectors(tiny_registry):
    # The CUDA path binds inputs and output; run the same binding code with a CPU output.
    encoder = load_encoder("tiny", paths=tiny_registry, variant="fp32")
    ids = encoder.tokenize(random_sentences(5, seed=2))
    width = max(len(r) for r in ids)
    input_ids = np.full((len(ids), width), encoder.pad_id, dtype=np.int64)
    mask = np.zeros_like(input_ids)
    for i, row in enumerate(ids):
        input_ids[i, :len(row)], mask[i, :len(row)] = row, 1
    bound = encoder._run_bound(input_ids, mask, "cpu")
    assert bound.dtype == np.float32 and bound.shape == (5, encoder.dim)
    np.testing.assert_allclose(bound, encoder._run(ids), atol=1e-6)
