"""Take the word-embedding table out of a transformer graph (the body + table format).

    >>> body, table = split_embedding_table(onnx.load("model.onnx"))
    >>> # body: inputs token_embeddings [batch, seq, dim] + attention_mask; table: [vocab, dim]

The exported graph starts `input_ids -> Gather(word_embeddings) -> + positions -> ...`.
Removing that Gather and making its output a graph input leaves the transformer body,
which ONNX Runtime loads in a fraction of the time and memory; the table is stored
beside it (`engine.encoders.embedding_table`) and looked up per batch by the encoder.
`input_ids` stays a graph input only when something other than shape arithmetic still
reads it (XLM-R's position ids count the non-padding tokens); `Shape(input_ids)` reads
`attention_mask` instead, which has the same [batch, seq] shape.
"""

from __future__ import annotations

import numpy as np

from engine.encoders.embedding_table import GRAPH_INPUT
from engine.errors import ModelError

IDS_INPUT = "input_ids"
MASK_INPUT = "attention_mask"


def split_embedding_table(model, path=None):
    """(body graph, float32 table [V, D]) from a graph that looks tokens up itself.

    Args:
        model: an `onnx.ModelProto` with inputs input_ids and attention_mask.
        path: the file it came from, named in errors.
    Raises:
        ModelError when the graph has no Gather of a [V, D] initializer by input_ids.
    """
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    gather, table_init = _word_embedding_gather(graph, path)
    table = numpy_helper.to_array(table_init).astype(np.float32, copy=False)
    graph.node.remove(gather)
    # the looked-up rows come in as an input; an Identity keeps the old tensor name
    graph.node.insert(0, helper.make_node("Identity", [GRAPH_INPUT], [gather.output[0]],
                                          name="token_embeddings_in"))
    graph.input.append(helper.make_tensor_value_info(
        GRAPH_INPUT, TensorProto.FLOAT, ["batch", "seq", int(table.shape[1])]))
    _read_shape_from_mask(graph)
    if not any(IDS_INPUT in node.input for node in graph.node):
        _remove_input(graph, IDS_INPUT)
    if not any(table_init.name in node.input for node in graph.node):
        graph.initializer.remove(table_init)
    return model, table


def _word_embedding_gather(graph, path):
    inits = {init.name: init for init in graph.initializer}
    found = [node for node in graph.node
             if node.op_type == "Gather" and len(node.input) == 2 and node.input[1] == IDS_INPUT
             and node.input[0] in inits and len(inits[node.input[0]].dims) == 2]
    if len(found) != 1:
        raise ModelError(f"{path or 'graph'}: expected one word-embedding lookup "
                         f"(Gather of a table by {IDS_INPUT}), found {len(found)}", path)
    return found[0], inits[found[0].input[0]]


def _read_shape_from_mask(graph) -> None:
    names = {i.name for i in graph.input}
    if MASK_INPUT not in names:
        return
    for node in graph.node:
        if node.op_type == "Shape" and list(node.input) == [IDS_INPUT]:
            node.input[0] = MASK_INPUT


def _remove_input(graph, name: str) -> None:
    for value in list(graph.input):
        if value.name == name:
            graph.input.remove(value)

