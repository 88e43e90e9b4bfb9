"""Single-operator cases for Scan version 8 (a leading batch axis on every input): batches of
several rows, with and without sequence_lens, rows shorter than the sequence scanned forwards
and backwards (ONNX Runtime fills a short row's scan outputs with zeros after its last step).
"""
import numpy as np
from onnx import TensorProto, helper

from op_case import Case, rand


def running_sum_body():
    """State s [2] plus step x [2]; scan output 2 * s_out - x."""
    vi = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [2])
    two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
    nodes = [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
             helper.make_node("Mul", ["s_out", "two"], ["twice"]),
             helper.make_node("Sub", ["twice", "x_t"], ["y_t"])]
    return helper.make_graph(nodes, "body", [vi("s_in"), vi("x_t")], [vi("s_out"), vi("y_t")],
                             [two])


def cases():
    batch, length = 3, 5
    inputs = {"s0": rand(batch, 2), "xs": rand(batch, length, 2, seed=1)}
    for lens in (None, [5, 2, 1], [3, 5, 4]):
        for reverse in (False, True):
            attrs = {"num_scan_inputs": 1, "body": running_sum_body()}
            if reverse:
                attrs["directions"] = [1]
            name = "scan8_batch3" + ("" if lens is None else "_lens" + "".join(map(str, lens)))
            inits = {} if lens is None else {"lens": np.array(lens, np.int64)}
            yield Case(name + ("_reverse" if reverse else ""), "Scan", dict(inputs), attrs,
                       initializers=inits, node_inputs=["" if lens is None else "lens", "s0", "xs"],
                       num_outputs=2, opset=8)
