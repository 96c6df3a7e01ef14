"""Sentences and the cosine measure every model conversion is checked with.

    >>> cosine_rows(before, after).min() >= 0.9999   # export, table split, migration

Shared by the export (trainer.serving.export: ONNX vs torch) and the engine's own conversions
(engine.encoders.migrate: a folder before vs after its table moves out of the graph).
"""

from __future__ import annotations

import numpy as np

# Fixed multilingual parity set: scripts, lengths and punctuation a model meets.
PARITY_SENTENCES = (
    "The cat sits on the mat.",
    "Where is the nearest train station?",
    "Der schnelle braune Fuchs springt über den faulen Hund.",
    "Je voudrais réserver une table pour deux personnes ce soir.",
    "¿Dónde está la biblioteca municipal?",
    "O relatório anual foi publicado ontem à noite.",
    "Il treno per Milano parte alle otto e mezza.",
    "Мы встретимся завтра утром у входа в музей.",
    "東京は日本の首都です。",
    "我明天要去北京出差。",
    "서울의 날씨는 오늘 맑습니다.",
    "القراءة غذاء العقل والروح.",
    "यह किताब बहुत दिलचस्प है।",
    "Η θάλασσα είναι ήρεμη σήμερα.",
    "Bu akşam sinemaya gitmek ister misin?",
    "Kiedy zaczyna się koncert?",
    "ข้าพเจ้าชอบกินข้าวผัด",
    "Tom",
    "A much longer sentence that goes on and on, listing apples, pears, plums, cherries, "
    "grapes and many other fruits, so that the sequence is far longer than the others.",
    "42 — 3,14 % ; e-mail: someone@example.org",
)


def cosine_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine of two [n, d] arrays."""
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    return (a * b).sum(1)
