"""Read SentencePiece's precompiled charsmap (its normalisation rules) without SentencePiece.

    >>> rules = decompile_charsmap(charsmap_bytes)   # {"Ａ": "A", "e\u0301": "é", ...}

Used to build the compact tokenizer (engine.encoders.unigram) and, by the trainer, to
check the rules it compiles.
"""

from __future__ import annotations

import struct

import numpy as np


def decompile_charsmap(charsmap: bytes) -> dict[str, str]:
    """Precompiled charsmap -> {source text: replacement}, by walking its darts-clone trie.

    Layout: u32 trie_bytes, trie units (u32 each), then NUL-terminated replacements;
    a leaf's value is the byte offset of its replacement.
    """
    (trie_bytes,) = struct.unpack_from("<I", charsmap, 0)
    units = np.frombuffer(charsmap, dtype="<u4", count=trie_bytes // 4, offset=4).astype(np.int64)
    replacements = charsmap[4 + trie_bytes :]
    rules: dict[str, str] = {}
    # breadth first, one trie level (one key byte) at a time
    nodes, keys = np.array([_unit_offset(units[0])]), [b""]
    while len(nodes):
        parents, labels, children = _child_edges(units, nodes)
        child_nodes = children ^ _unit_offset(units[children])
        keys = [keys[p] + bytes([b]) for p, b in zip(parents.tolist(), labels.tolist())]
        has_leaf = ((units[children] >> 8) & 1).astype(bool)
        values = units[child_nodes[has_leaf]] & 0x7FFFFFFF  # byte offsets of the replacements
        for key_index, start in zip(np.flatnonzero(has_leaf).tolist(), values.tolist()):
            end = replacements.index(b"\0", start)
            rules[keys[key_index].decode("utf-8")] = replacements[start:end].decode("utf-8")
        nodes = child_nodes
    return rules


def _child_edges(units: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All (parent index, byte, child unit position) edges out of `nodes`, in chunks to bound memory."""
    found = []
    labels = np.arange(1, 256)
    for start in range(0, len(nodes), 4096):
        block = nodes[start : start + 4096]
        candidates = block[:, None] ^ labels[None, :]  # [b, 255] unit positions
        inside = candidates < len(units)
        is_child = np.zeros_like(inside)
        is_child[inside] = _unit_label(units[candidates[inside]]) == np.broadcast_to(labels, inside.shape)[inside]
        parent, byte = np.nonzero(is_child)
        found.append((parent + start, labels[byte], candidates[parent, byte]))
    return tuple(np.concatenate(parts) for parts in zip(*found))


def _unit_offset(unit):
    """Darts-clone unit -> XOR offset to its children (works on ints and int64 arrays)."""
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


def _unit_label(unit):
    """Darts-clone unit -> its byte label; leaf units carry bit 31 so they never match a byte."""
    return unit & ((1 << 31) | 0xFF)
