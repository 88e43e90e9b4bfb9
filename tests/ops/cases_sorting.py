"""Single-operator cases for TopK with k fed at run time (input K is a graph input, so the
output's axis is sized when the model runs): largest and smallest, negative axis, ties (ONNX
orders equal values by index), k = 0 and k = the whole axis, integer data, opset 10 and 11.
"""
import numpy as np

from op_case import Case, rand


def k(v):
    return np.array([v], dtype=np.int64)


def cases():
    x = rand(3, 7, 4, seed=5)
    yield Case("topk_runtime_k_axis1", "TopK", {"x": x, "k": k(3)}, {"axis": 1}, num_outputs=2,
               opset=11)
    yield Case("topk_runtime_k_smallest_last_axis", "TopK", {"x": x, "k": k(2)},
               {"largest": 0}, num_outputs=2, opset=11)
    yield Case("topk_runtime_k_negative_axis", "TopK", {"x": x, "k": k(5)}, {"axis": -2},
               num_outputs=2, opset=11)
    ties = np.array([[1, 3, 3, 0, 3, 1], [2, 2, 2, 2, 2, 2]], dtype=np.float32)
    yield Case("topk_runtime_k_ties", "TopK", {"x": ties, "k": k(4)}, num_outputs=2, opset=11)
    yield Case("topk_runtime_k_ties_smallest", "TopK", {"x": ties, "k": k(3)}, {"largest": 0},
               num_outputs=2, opset=11)
    yield Case("topk_runtime_k_zero", "TopK", {"x": x, "k": k(0)}, num_outputs=2, opset=11)
    yield Case("topk_runtime_k_whole_axis", "TopK", {"x": x, "k": k(4)}, num_outputs=2, opset=11)
    ints = np.random.default_rng(2).integers(-50, 50, (5, 9)).astype(np.int64)
    yield Case("topk_runtime_k_i64", "TopK", {"x": ints, "k": k(4)}, num_outputs=2, opset=11)
    yield Case("topk_runtime_k_opset10", "TopK", {"x": x, "k": k(2)}, {"axis": 0},
               num_outputs=2, opset=10)
