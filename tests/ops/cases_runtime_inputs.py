"""Single-operator cases whose shape-like inputs are fed at run time (graph inputs, not
initializers): Pad's pads, constant_value and axes, Resize's roi, scales and sizes with the
`axes` attribute and keep_aspect_ratio_policy, Split's split. The importer keeps them as inputs
of the node, and the reference executor reads their values when it runs.
"""
import numpy as np

from op_case import Case, rand


def i64(*v):
    return np.array(v, dtype=np.int64)


def f32(*v):
    return np.array(v, dtype=np.float32)


def pad_cases():
    x = rand(3, 4, 5)
    yield Case("rt_pad_pads", "Pad", {"x": x, "pads": i64(1, 0, 2, 0, 3, 1)},
               {"mode": "constant"}, opset=18)
    yield Case("rt_pad_pads_axes_const", "Pad", {"x": x, "pads": i64(2, -1, 1, 3)},
               {"mode": "constant"}, {"axes": i64(0, -1)},
               node_inputs=["x", "pads", "", "axes"], opset=18)
    yield Case("rt_pad_pads_axes_value", "Pad",
               {"x": x, "pads": i64(1, 2, 0, 1), "value": f32(2.5), "axes": i64(2, 1)},
               {"mode": "constant"}, node_inputs=["x", "pads", "value", "axes"], opset=18)
    for mode in ("reflect", "edge"):
        yield Case(f"rt_pad_{mode}_axes", "Pad", {"x": x, "pads": i64(2, 3, 1, 2)},
                   {"mode": mode}, {"axes": i64(1, 2)}, node_inputs=["x", "pads", "", "axes"],
                   opset=18)
    yield Case("rt_pad_wrap_axes", "Pad", {"x": x, "pads": i64(3, -1, 2, 4)}, {"mode": "wrap"},
               {"axes": i64(2, 1)}, node_inputs=["x", "pads", "", "axes"], opset=19)
    yield Case("rt_pad_i64_value", "Pad", {"x": np.arange(12, dtype=np.int64).reshape(3, 4),
                                           "pads": i64(0, 1, 1, 0), "value": i64(-7)},
               {"mode": "constant"}, opset=18)


def resize_cases():
    x = rand(1, 2, 5, 7)
    yield Case("rt_resize_scales_axes", "Resize", {"x": x, "scales": f32(2.0, 0.6)},
               {"mode": "linear", "axes": [2, 3]}, node_inputs=["x", "", "scales"], opset=18)
    yield Case("rt_resize_scales_axes_reversed", "Resize", {"x": x, "scales": f32(1.5, 1.8)},
               {"mode": "nearest", "axes": [3, 2]}, node_inputs=["x", "", "scales"], opset=18)
    yield Case("rt_resize_sizes_axes", "Resize", {"x": x, "sizes": i64(9, 4)},
               {"mode": "cubic", "axes": [-1, 2]}, node_inputs=["x", "", "", "sizes"],
               opset=18)
    for policy in ("not_larger", "not_smaller"):
        yield Case(f"rt_resize_sizes_{policy}", "Resize", {"x": x, "sizes": i64(8, 8)},
                   {"mode": "nearest", "axes": [2, 3], "keep_aspect_ratio_policy": policy},
                   node_inputs=["x", "", "", "sizes"], opset=18)
    yield Case("rt_resize_crop_roi_axes", "Resize",
               {"x": x, "roi": f32(0.2, 0.1, 0.9, 0.8), "sizes": i64(4, 6)},
               {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize",
                "axes": [2, 3], "extrapolation_value": 1.5},
               node_inputs=["x", "roi", "", "sizes"], opset=18)
    yield Case("rt_resize_scales_all", "Resize", {"x": x, "scales": f32(1, 1, 0.8, 1.4)},
               {"mode": "linear"}, node_inputs=["x", "", "scales"], opset=13)


def split_cases():
    x = rand(4, 7, 3)
    yield Case("rt_split_sizes", "Split", {"x": x, "split": i64(2, 4, 1)}, {"axis": 1},
               num_outputs=3, opset=18)
    yield Case("rt_split_zero_piece", "Split", {"x": x, "split": i64(0, 3, 1)}, {"axis": 0},
               num_outputs=3, opset=13)


def cases():
    yield from pad_cases()
    yield from resize_cases()
    yield from split_cases()
