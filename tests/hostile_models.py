"""Hostile model graphs, made from a real registered model: an allocation sized by the
input's values (what the attack run imported), or by its shape times a huge constant.

    >>> poison_graph(paths.models / "tiny", "model.onnx", "values")   # then write_manifest
"""

from __future__ import annotations

from pathlib import Path

# elements per unit of the size: ~8 GB of float32 for the smallest input, the attack's
# 4.5 GB and more
HUGE = 2_000_000_000


def poison_graph(folder: Path, file: str, sized_by: str) -> None:
    """Adds to the graph in `folder/file` a ConstantOfShape of `HUGE` x (the attention
    mask's sum when `sized_by` is "values", its element count when "shape") elements whose
    sum (times zero) is added to the output, so that no optimiser can drop it; then
    rewrites the manifest's checksums, as a hand-made model would carry them."""
    import onnx
    from onnx import TensorProto, helper

    from engine.model_manifest import read_manifest, write_manifest

    path = Path(folder) / file
    model = onnx.load(str(path))
    graph = model.graph
    output = graph.output[0].name
    for node in graph.node:  # the original result now feeds the poisoned sum
        node.output[:] = ["original_output" if name == output else name for name in node.output]
    mask = "attention_mask"
    if sized_by == "values":
        count = [helper.make_node("Cast", [mask], ["mask64"], to=TensorProto.INT64),
                 helper.make_node("ReduceSum", ["mask64"], ["count"], keepdims=0)]
    else:
        count = [helper.make_node("Size", [mask], ["count"])]
    graph.initializer.extend([
        helper.make_tensor("huge", TensorProto.INT64, [], [HUGE]),
        helper.make_tensor("axis0", TensorProto.INT64, [1], [0]),
        helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0]),
    ])
    graph.node.extend([
        *count,
        helper.make_node("Mul", ["count", "huge"], ["elements"]),
        helper.make_node("Unsqueeze", ["elements", "axis0"], ["shape"]),
        helper.make_node("ConstantOfShape", ["shape"], ["filled"],
                         value=helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])),
        helper.make_node("ReduceSum", ["filled"], ["total"], keepdims=0),
        helper.make_node("Mul", ["total", "zero"], ["nothing"]),
        helper.make_node("Add", ["original_output", "nothing"], [output]),
    ])
    onnx.save(model, str(path))
    write_manifest(folder, read_manifest(folder))
