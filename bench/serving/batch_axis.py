"""Writes a copy of an ONNX model whose graph inputs and outputs have a symbolic first dimension
("batch"), so that it can be compiled for a batch range and run by ONNX Runtime at any batch:
the serving bench's dynamic-batching variant of a model exported at a fixed batch. The shapes
inferred inside the graph (value_info) are dropped, as they hold the old batch; a model whose
nodes hard-code it (a Reshape to it) fails later, when compiled or run at another batch.

    .venv/bin/python bench/serving/batch_axis.py IN.onnx OUT.onnx     (needs onnx: .venv)
"""
import sys

import onnx


def main():
    source, target = sys.argv[1:3]
    model = onnx.load(source)
    constants = {i.name for i in model.graph.initializer}
    for value in list(model.graph.input) + list(model.graph.output):
        if value.name in constants:
            continue
        dims = value.type.tensor_type.shape.dim
        if not dims:
            sys.exit(f"{source}: {value.name} has no dimensions to batch")
        dims[0].dim_param = "batch"  # replaces its dim_value
    del model.graph.value_info[:]
    onnx.checker.check_model(model)
    onnx.save(model, target)


if __name__ == "__main__":
    main()
