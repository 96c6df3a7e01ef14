"""A compact, quick-loading form of an XLM-R-style (SentencePiece unigram) tokenizer.json.

    >>> compile_compact(folder / "tokenizer.json", folder / COMPACT_FILE)   # at install
    >>> tok = CompactUnigram.load(folder / COMPACT_FILE)                    # ~0.1 s
    >>> tok.encode("query: Wo ist der Bahnhof?", max_length=512)            # same ids

`tokenizers.Tokenizer.from_file` spends about a second and 290 MB on multilingual-e5's
tokenizer.json, nearly all of it building its unigram model (a byte trie over 250k
pieces); the JSON itself parses in a tenth of that. A one-shot search tokenises one
short query, so this module keeps the pieces, their scores and the normaliser's
single-codepoint rules in one .npz (8 MB) and runs the same Viterbi search in Python.

It reproduces tokenizers' pipeline exactly (normaliser: charsmap rules per grapheme,
strip, collapse and escape spaces; Metaspace; unigram Viterbi with fused unknowns;
`<s> ... </s>`; truncation) for texts whose every grapheme is one codepoint. Texts that
may hold longer graphemes (combining marks, joiners, jamo, regional indicators, a
literal special token...) return None and the caller uses tokenizers itself; so do
large batches, where tokenizers' Rust code is faster. `compile_compact` refuses
tokenizer.json files of any other shape.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import unicodedata
from pathlib import Path

import numpy as np

from engine.errors import ModelError

log = logging.getLogger(__name__)

COMPACT_FILE = "tokenizer.unigram.npz"
# 2: pieces in sorted arrays by length (1-4, 5-8, 9-16 characters), int32 ids, float32 scores where exact (8 MB
# for XLM-R's 250k pieces); files without it hold one array padded to the longest piece
# (20 MB) and still load.
LAYOUT = 2
METASPACE = "\u2581"
UNK_PENALTY = 10.0  # tokenizers' K_UNK_PENALTY: an unknown character scores min_score - 10
# Categories whose characters can extend a grapheme (marks, format characters such as
# ZWJ) or whose grapheme rules this Python may not know (unassigned, surrogates).
_JOINING_CATEGORIES = frozenset(("Mn", "Mc", "Me", "Cf", "Cn", "Cs"))
# Characters outside those categories that still join a grapheme cluster (UAX #29):
# CR (CR LF), Hangul jamo, regional indicators, emoji modifiers, Prepend and SpacingMark
# letters, halfwidth katakana sound marks.
_JOINING_CHARS = re.compile(
    "[\r\u1100-\u11ff\ua960-\ua97f\ud7b0-\ud7ff\U0001f1e6-\U0001f1ff\U0001f3fb-\U0001f3ff"
    "\u0d4e\u0e33\u0eb3\uff9e\uff9f\U000111c2\U000111c3\U0001193f\U00011941\U00011a3a"
    "\U00011a84-\U00011a89\U00011d46\U00011f02]")
_SPACES = re.compile(" {2,}")
_EXPECTED_NORMALISERS = [
    {"type": "Replace", "pattern": {"Regex": r"\A +| +\z"}, "content": ""},
    {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
    {"type": "Replace", "pattern": {"String": " "}, "content": METASPACE},
    {"type": "Replace", "pattern": {"Regex": rf"\A{METASPACE}"}, "content": METASPACE * 2},
]
_EXPECTED_PRE_TOKENIZER = {"type": "Metaspace", "replacement": METASPACE,
                           "prepend_scheme": "always", "split": False}


class CompactUnigram:
    """Unigram tokenizer from a COMPACT_FILE; `encode` gives tokenizers' ids or None.

    The pieces are sorted fixed-width string arrays, a few by piece length: a text's
    candidate substrings are looked up at once per array with `np.searchsorted`, so
    loading builds no Python dict, and short pieces are not padded to the longest's width.
    """

    def __init__(self, buckets: list[tuple[int, int, np.ndarray, np.ndarray]],
                 scores: np.ndarray, rules: dict[int, str], meta: dict):
        # (shortest, longest span, sorted <U{longest} pieces, vocabulary id of each)
        self.buckets = buckets
        self.scores = scores  # float32 or float64 [V] by id; summed in float64 as tokenizers does
        self.rules = rules  # codepoint -> replacement, for str.translate
        self.vocab_size = int(meta["vocab_size"])
        self.unk_id, self.bos_id, self.eos_id = meta["unk_id"], meta["bos_id"], meta["eos_id"]
        self.unk_score = float(meta["min_score"]) - UNK_PENALTY
        self.specials = tuple(meta["specials"])

    @classmethod
    def load(cls, path: Path) -> CompactUnigram:
        """Reads a COMPACT_FILE (either layout); ModelError naming it when it is damaged."""
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(bytes(data["meta"]).decode("utf-8"))
                buckets = _read_buckets(data)
                scores = data["scores"]
                sources, targets = data["rule_sources"], data["rule_targets"].tolist()
        except (OSError, ValueError, KeyError, EOFError, TypeError) as e:
            raise ModelError(f"compact tokenizer file is damaged: {path} ({e})", path) from e
        count = sum(len(pieces) for _, _, pieces, _ in buckets)
        if (any(len(pieces) != len(ids) for _, _, pieces, ids in buckets) or count != len(scores)
                or len(sources) != len(targets)):
            raise ModelError(f"compact tokenizer file is damaged: {path} (sizes differ)", path)
        return cls(buckets, scores, dict(zip(sources.tolist(), targets)), meta)

    def handles(self, text: str) -> bool:
        """True when every grapheme of `text` is one codepoint and no special token is in it."""
        if ("\0" in text or any(special in text for special in self.specials)
                or _JOINING_CHARS.search(text)):
            return False
        category = unicodedata.category
        return not any(category(c) in _JOINING_CATEGORIES for c in set(text))

    def encode(self, text: str, max_length: int) -> list[int] | None:
        """`<s>` ids `</s>` as tokenizers gives them (truncated to max_length), or None."""
        if not self.handles(text):
            return None
        normalised = _SPACES.sub(" ", text.translate(self.rules).strip(" "))
        ids = self._viterbi(METASPACE + normalised.replace(" ", METASPACE)) if normalised else []
        return [self.bos_id, *ids[:max(0, max_length - 2)], self.eos_id]

    def _matches(self, text: str) -> list[tuple[int, int, int]]:
        """(start, end, id) of every vocabulary piece in `text`, by start then length."""
        size = len(text)
        found = []
        for shortest, longest, pieces, ids in self.buckets:
            spans = [(i, j) for i in range(size)
                     for j in range(i + shortest, min(size, i + longest) + 1)]
            if not spans:
                continue
            candidates = np.array([text[i:j] for i, j in spans], dtype=pieces.dtype)
            where = np.minimum(np.searchsorted(pieces, candidates), len(pieces) - 1)
            hits = np.flatnonzero(pieces[where] == candidates)
            found += [(*spans[h], pid) for h, pid in zip(hits.tolist(), ids[where[hits]].tolist())]
        if len(self.buckets) > 1:
            found.sort()
        return found

    def _viterbi(self, text: str) -> list[int]:
        """Best-scoring pieces, as tokenizers' Unigram.encode_optimized finds them (ties
        keep the earlier start; consecutive unknown characters fuse into one <unk>)."""
        size = len(text)
        score = [0.0] * (size + 1)
        start_of = [-1] * (size + 1)
        piece_of = [0] * (size + 1)
        matches = self._matches(text)
        scores = self.scores[[pid for _, _, pid in matches]].tolist()
        m = 0
        for start in range(size):
            base, single = score[start], False
            while m < len(matches) and matches[m][0] == start:
                _, end, pid = matches[m]
                candidate = scores[m] + base
                if start_of[end] < 0 or candidate > score[end]:
                    score[end], start_of[end], piece_of[end] = candidate, start, pid
                single = single or end == start + 1
                m += 1
            if not single:
                candidate = self.unk_score + base
                if start_of[start + 1] < 0 or candidate > score[start + 1]:
                    score[start + 1], start_of[start + 1], piece_of[start + 1] = (
                        candidate, start, self.unk_id)
        ids, end = [], size
        while end > 0:
            pid = piece_of[end]
            if not (pid == self.unk_id and ids and ids[-1] == self.unk_id):
                ids.append(pid)
            end = start_of[end]
        return ids[::-1]


def compile_compact(tokenizer_json: Path, dest: Path) -> bool:
    """Writes the compact form of `tokenizer_json` to `dest` when it has the supported
    shape and gives identical ids on a check sample; returns whether it did."""
    from engine.encoders.charsmap import decompile_charsmap

    data = json.loads(Path(tokenizer_json).read_text(encoding="utf-8"))
    problem = _unsupported(data)
    if problem:
        log.info("no compact tokenizer for %s: %s", tokenizer_json, problem)
        return False
    model = data["model"]
    pieces = [piece for piece, _ in model["vocab"]]
    rules = decompile_charsmap(base64.b64decode(data["normalizer"]["normalizers"][0]
                                                ["precompiled_charsmap"]))
    single = {ord(src): dst for src, dst in rules.items() if len(src) == 1}
    specials = [token["content"] for token in data["added_tokens"]]
    template = data["post_processor"]["single"]
    meta = {"vocab_size": len(pieces), "unk_id": model["unk_id"],
            "bos_id": data["post_processor"]["special_tokens"][_special(template[0])]["ids"][0],
            "eos_id": data["post_processor"]["special_tokens"][_special(template[2])]["ids"][0],
            "min_score": min(score for _, score in model["vocab"]), "specials": specials}
    tmp = dest.with_name(dest.name + ".tmp.npz")
    np.savez(tmp, **_bucket_arrays(pieces), scores=_compact_scores([s for _, s in model["vocab"]]),
             rule_sources=np.array(list(single), dtype=np.int32),
             rule_targets=np.array(list(single.values()), dtype=f"U{max(map(len, single.values()), default=1)}"),
             meta=np.frombuffer(json.dumps(meta | {"layout": LAYOUT}).encode("utf-8"), dtype=np.uint8))
    if not _agrees(CompactUnigram.load(tmp), tokenizer_json):
        tmp.unlink()
        return False
    tmp.replace(dest)
    return True


def _bucket_arrays(pieces: list[str]) -> dict[str, np.ndarray]:
    """pieces_A_B (sorted <UB) and ids_A_B (int32) for the pieces of A to B characters,
    in buckets 1-4, 5-8, 9-16, ...: little padding, and few lookups per text."""
    lengths = np.array([len(piece) for piece in pieces])
    arrays, shortest = {}, 1
    while shortest <= lengths.max(initial=0):
        longest = max(4, 2 * (shortest - 1))
        ids = np.flatnonzero((lengths >= shortest) & (lengths <= longest))
        if len(ids):
            group = np.array([pieces[i] for i in ids.tolist()], dtype=f"U{longest}")
            order = np.argsort(group, kind="stable")
            arrays[f"pieces_{shortest}_{longest}"] = group[order]
            arrays[f"ids_{shortest}_{longest}"] = ids[order].astype(np.int32)
        shortest = longest + 1
    return arrays


def _compact_scores(scores: list[float]) -> np.ndarray:
    """The scores as float32 when that keeps every value exactly (XLM-R's do), else float64."""
    exact = np.array(scores, dtype=np.float64)
    small = exact.astype(np.float32)
    return small if np.array_equal(small.astype(np.float64), exact) else exact


def _read_buckets(data) -> list[tuple[int, int, np.ndarray, np.ndarray]]:
    """The piece buckets of either layout: one per length, or (files made before the
    layout was recorded) one array of all pieces padded to the longest."""
    if "pieces" in data.files:
        pieces = data["pieces"]
        return [(1, pieces.dtype.itemsize // 4, pieces, data["ids"])]
    spans = sorted(tuple(map(int, name.split("_")[1:])) for name in data.files
                   if name.startswith("pieces_"))
    return [(a, b, data[f"pieces_{a}_{b}"], data[f"ids_{a}_{b}"]) for a, b in spans]


def _special(item: dict) -> str:
    return item["SpecialToken"]["id"]


def _unsupported(data: dict) -> str | None:
    """Why this tokenizer.json is not the pipeline CompactUnigram reproduces, or None."""
    model, normaliser = data.get("model") or {}, data.get("normalizer") or {}
    steps = normaliser.get("normalizers") or []
    template = (data.get("post_processor") or {}).get("single") or []
    if model.get("type") != "Unigram" or model.get("byte_fallback"):
        return "not a unigram model without byte fallback"
    pieces = [piece for piece, _ in model["vocab"]]
    if any("\0" in piece or not piece for piece in pieces) or len(set(pieces)) != len(pieces):
        return "a piece is empty, repeated or holds a NUL"
    if (normaliser.get("type") != "Sequence" or not steps or steps[0].get("type") != "Precompiled"
            or steps[1:] != _EXPECTED_NORMALISERS):
        return "another normaliser"
    if data.get("pre_tokenizer") != _EXPECTED_PRE_TOKENIZER:
        return "another pre-tokenizer"
    shape = [next(iter(item)) for item in template]
    if shape != ["SpecialToken", "Sequence", "SpecialToken"]:
        return "another post-processor"
    if any(not token.get("special") or token.get("normalized") for token in data["added_tokens"]):
        return "added tokens that are not special"
    return None


CHECK_TEXTS = (
    "query: Wo ist der Bahnhof?", "passage:   two  spaces   and trailing   ", "", "   ",
    "ＦＵＬＬＷＩＤＴＨ ｔｅｘｔ and ﬁ ligature", "东京は日本の首都です。", "Мы встретимся завтра.",
    "\u2581leading metaspace", "tabs\tand\nnew lines", "\U0001d11e\U0001d11e unknown music",
    "e-mail: someone@example.org 42 — 3,14 %", "emoji 😀😀 ok",
)


def _agrees(compact: CompactUnigram, tokenizer_json: Path) -> bool:
    from tokenizers import Tokenizer

    from engine.encoders.parity import PARITY_SENTENCES

    reference = Tokenizer.from_file(str(tokenizer_json))
    reference.no_padding()
    reference.enable_truncation(512)
    texts = [t for t in (*CHECK_TEXTS, *PARITY_SENTENCES) if compact.handles(t)]
    for text, encoding in zip(texts, reference.encode_batch(texts)):
        if compact.encode(text, 512) != encoding.ids:
            log.warning("compact tokenizer differs from %s on %r; not used", tokenizer_json, text)
            return False
    return True
