"""Single-operator test cases checked against ONNX Runtime.

A cases module (cases_*.py next to this file) defines `cases()`, yielding `Case` objects. The
driver make_op_cases.py turns each into `<name>.onnx`, `<name>.inputs.npz` and
`<name>.outputs.npz` (ONNX Runtime's outputs), which tests/ops/test_ops_vs_ort.cpp replays
through the collage importer and the reference executor.
"""
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np
import onnx
from onnx import helper, numpy_helper


@dataclass
class Case:
    name: str                      # unique, file-name safe: "conv2d_pads_groups"
    op: str                        # ONNX op type
    inputs: Dict[str, np.ndarray]  # graph inputs, in order (fed at run time)
    attrs: Dict = field(default_factory=dict)
    initializers: Dict[str, np.ndarray] = field(default_factory=dict)  # constant inputs
    # Node input order: names from inputs/initializers; "" for an absent optional input.
    # Default: inputs then initializers, in insertion order.
    node_inputs: Optional[List[str]] = None
    num_outputs: int = 1
    opset: int = 17
    # Relative tolerance for the comparison (documented when looser than 1e-4).
    rtol: float = 1e-4

    def model(self) -> onnx.ModelProto:
        node_inputs = self.node_inputs
        if node_inputs is None:
            node_inputs = list(self.inputs) + list(self.initializers)
        outputs = [f"y{i}" for i in range(self.num_outputs)]
        node = helper.make_node(self.op, node_inputs, outputs, name=self.name, **self.attrs)
        graph_inputs = [
            helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for n, a in self.inputs.items()
        ]
        graph_outputs = [helper.make_tensor_value_info(o, onnx.TensorProto.UNDEFINED, None)
                         for o in outputs]
        inits = [numpy_helper.from_array(a, n) for n, a in self.initializers.items()]
        graph = helper.make_graph([node], self.name, graph_inputs, graph_outputs, inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)])
        model.ir_version = 8
        # The checker requires typed graph outputs: take them from ONNX shape inference.
        inferred = onnx.shape_inference.infer_shapes(model)
        del model.graph.output[:]
        model.graph.output.extend(inferred.graph.output)
        # An output inference cannot shape (its shape follows inputs fed at run time) takes the
        # first input's element type and rank, every dimension unknown.
        first = next(iter(self.inputs.values()), None)
        for o in model.graph.output:
            t = o.type.tensor_type
            if first is not None and not t.HasField("shape"):
                t.elem_type = t.elem_type or helper.np_dtype_to_tensor_dtype(first.dtype)
                for _ in first.shape:
                    t.shape.dim.add()
        return model


def rand(*shape, lo=-1.0, hi=1.0, seed=0, dtype=np.float32):
    """Uniform random array with a fixed seed."""
    rng = np.random.default_rng(seed)
    return rng.uniform(lo, hi, size=shape).astype(dtype)
