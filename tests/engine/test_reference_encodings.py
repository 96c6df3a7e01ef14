"""engine.index.reference_encodings: one model file encodes the reference sentences once
per process; another file, variant or changed file encodes them again; test doubles
without a file are never memoised."""

from __future__ import annotations

import os

import numpy as np

from engine.index.reference_encodings import encode_reference


class FileEncoder:
    """Counts its encodes; `model_path` is a real file, as an ONNX encoder's is."""

    def __init__(self, path, variant="fp32"):
        self.model_path, self.variant, self.device, self.calls = path, variant, "cpu", 0

    def encode(self, texts, kind="passage"):
        self.calls += 1
        return np.array([[len(t), 1.0 if kind == "query" else 0.0] for t in texts], np.float32)


def test_the_same_file_encodes_the_same_sentences_once(tmp_path):
    model = tmp_path / "model.onnx"
    model.write_bytes(b"weights")
    first, second = FileEncoder(model), FileEncoder(model)  # two libraries, one model file
    vectors = encode_reference(first, ["a", "bb"], "query")
    again = encode_reference(second, ["a", "bb"], "query")
    np.testing.assert_array_equal(vectors, again)
    assert (first.calls, second.calls) == (1, 0)
    again[0, 0] = 99  # callers get their own copy
    assert encode_reference(second, ["a", "bb"], "query")[0, 0] == 1
    encode_reference(second, ["a", "bb"], "passage")  # the other side is encoded apart
    encode_reference(FileEncoder(model, variant="int8"), ["a", "bb"], "query")
    assert second.calls == 1


def test_a_changed_file_or_other_sentences_are_encoded_again(tmp_path):
    model = tmp_path / "model.onnx"
    model.write_bytes(b"weights")
    encoder = FileEncoder(model)
    encode_reference(encoder, ["x"], "query")
    encode_reference(encoder, ["y"], "query")
    model.write_bytes(b"retrained weights")
    os.utime(model, ns=(1, 1))
    encode_reference(encoder, ["x"], "query")
    assert encoder.calls == 3


def test_an_encoder_without_a_model_file_is_not_memoised(tmp_path):
    class Double:
        calls = 0

        def encode(self, texts, kind="passage"):
            self.calls += 1
            return np.ones((len(texts), 2), np.float32)

    double = Double()
    encode_reference(double, ["a"], "query")
    encode_reference(double, ["a"], "query")
    assert double.calls == 2
