"""Sentence encoders: one interface, several back ends (ONNX Runtime for serving)."""

from engine.encoders.base import Encoder, TextKind

__all__ = ["Encoder", "TextKind"]
