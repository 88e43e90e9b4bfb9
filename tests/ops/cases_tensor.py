"""Single-operator cases for the tensor operators (shape manipulation and data movement).

Shape-like parameters that opset 13+ passes as inputs (Reshape's shape, Slice's starts/ends/axes/
steps, Split's split, Squeeze/Unsqueeze axes, Pad's pads and constant_value, Expand's shape, Tile's
repeats, Resize's roi/scales/sizes, ConstantOfShape's shape) are initializers, so the importer can
turn them into attributes.
"""
import itertools

import numpy as np
from onnx import TensorProto, helper

from op_case import Case, rand

I64_MAX = np.iinfo(np.int64).max
I64_MIN = np.iinfo(np.int64).min


def i64(*v):
    return np.array(v, dtype=np.int64)


def ints(*shape, lo=-50, hi=50, seed=0, dtype=np.int64):
    return np.random.default_rng(seed).integers(lo, hi, size=shape).astype(dtype)


def concat_cases():
    yield Case("concat_axis0", "Concat", {"a": rand(2, 3), "b": rand(1, 3, seed=1),
                                         "c": rand(4, 3, seed=2)}, {"axis": 0})
    yield Case("concat_axis1_4d", "Concat", {"a": rand(2, 3, 5, 7), "b": rand(2, 1, 5, 7, seed=1)},
               {"axis": 1})
    yield Case("concat_neg_axis", "Concat", {"a": rand(2, 3, 5), "b": rand(2, 3, 2, seed=1),
                                            "c": rand(2, 3, 1, seed=2)}, {"axis": -1})
    yield Case("concat_single", "Concat", {"a": rand(3, 4)}, {"axis": 1})
    yield Case("concat_i64", "Concat", {"a": ints(3, 2), "b": ints(3, 5, seed=1)}, {"axis": 1})
    yield Case("concat_bool", "Concat", {"a": ints(2, 3, lo=0, hi=2, dtype=bool),
                                        "b": ints(2, 3, lo=0, hi=2, seed=1, dtype=bool)},
               {"axis": -2})
    yield Case("concat_f16", "Concat", {"a": rand(2, 3, dtype=np.float16),
                                       "b": rand(2, 2, seed=1, dtype=np.float16)}, {"axis": 1})
    yield Case("concat_empty_input", "Concat", {"a": rand(2, 0, 3), "b": rand(2, 4, 3, seed=1)},
               {"axis": 1})


def split_cases():
    x = rand(6, 9, 4)
    yield Case("split_equal_axis0", "Split", {"x": x}, {"axis": 0}, num_outputs=3)
    yield Case("split_equal_neg_axis", "Split", {"x": x}, {"axis": -2}, num_outputs=3)
    yield Case("split_explicit", "Split", {"x": x}, {"axis": 1}, {"split": i64(2, 6, 1)},
               num_outputs=3)
    yield Case("split_explicit_zero", "Split", {"x": x}, {"axis": 2}, {"split": i64(1, 0, 3)},
               num_outputs=3)
    yield Case("split_i32", "Split", {"x": ints(4, 10, dtype=np.int32)}, {"axis": 1},
               {"split": i64(3, 7)}, num_outputs=2)


def slice_cases():
    x = rand(5, 7, 9)
    forms = {
        "basic": (i64(1, 2), i64(4, 6), i64(0, 1), None),
        "neg_starts_ends": (i64(-4, -3), i64(-1, 9), i64(1, 2), None),
        "steps": (i64(0, 1), i64(5, 9), i64(0, 2), i64(2, 3)),
        "neg_step": (i64(-1), i64(I64_MIN), i64(1), i64(-1)),
        "neg_step2": (i64(8, 4), i64(0, -6), i64(2, 0), i64(-2, -3)),
        "huge_ends": (i64(2), i64(I64_MAX), i64(-1), None),
        "huge_neg_start": (i64(I64_MIN, 1), i64(3, I64_MAX), i64(0, 2), i64(1, 4)),
        "empty": (i64(3), i64(2), i64(0), None),
        "empty_neg_step": (i64(1), i64(4), i64(1), i64(-1)),
        "neg_axes": (i64(1, 0), i64(3, 4), i64(-1, -3), None),
        "unsorted_axes": (i64(0, 2), i64(7, 4), i64(2, 0), i64(1, 1)),
        "step_past_end": (i64(3), i64(100), i64(1), i64(10)),
        "neg_step_clamped_start": (i64(100), i64(-100), i64(2), i64(-4)),
    }
    for name, (starts, ends, axes, steps) in forms.items():
        inits = {"starts": starts, "ends": ends, "axes": axes}
        if steps is not None:
            inits["steps"] = steps
        yield Case(f"slice_{name}", "Slice", {"x": x}, initializers=inits)
    # Without axes: leading axes; steps given with axes absent.
    yield Case("slice_no_axes", "Slice", {"x": x}, initializers={"starts": i64(1, 2),
                                                               "ends": i64(3, -1)})
    yield Case("slice_no_axes_steps", "Slice", {"x": x},
               initializers={"starts": i64(4, 0), "ends": i64(0, 7), "steps": i64(-1, 2)},
               node_inputs=["x", "starts", "ends", "", "steps"])
    yield Case("slice_i64_data", "Slice", {"x": ints(6, 5)},
               initializers={"starts": i64(1), "ends": i64(5), "axes": i64(0), "steps": i64(3)})
    yield Case("slice_bool_4d", "Slice", {"x": ints(2, 3, 4, 5, lo=0, hi=2, dtype=bool)},
               initializers={"starts": i64(1, -2), "ends": i64(3, 0), "axes": i64(1, 3),
                             "steps": i64(1, -1)})


def gather_cases():
    data = rand(5, 6, 7)
    for axis in (0, 1, 2, -1, -3):
        dim = data.shape[axis]
        idx = np.array([0, dim - 1, -1, -dim, 2], dtype=np.int64)
        name = f"m{-axis}" if axis < 0 else str(axis)
        yield Case(f"gather_axis{name}", "Gather", {"data": data, "indices": idx}, {"axis": axis})
        idx2 = np.array([[1, -2], [0, dim - 1], [-1, 3]], dtype=np.int64)
        yield Case(f"gather_2d_axis{name}", "Gather", {"data": data, "indices": idx2},
                   {"axis": axis})
    yield Case("gather_scalar_index", "Gather", {"data": data, "indices": np.array(-2, np.int64)},
               {"axis": 1})
    yield Case("gather_i32_indices", "Gather",
               {"data": data, "indices": np.array([[3], [-5]], dtype=np.int32)}, {"axis": 0})
    yield Case("gather_i64_data_1d", "Gather",
               {"data": ints(9), "indices": np.array([8, 0, -9, 4], dtype=np.int64)})
    yield Case("gather_embedding", "Gather",
               {"data": rand(50, 16), "indices": ints(2, 7, lo=0, hi=50)}, {"axis": 0})
    yield Case("gather_empty_indices", "Gather",
               {"data": data, "indices": np.zeros((0,), np.int64)}, {"axis": 1})


def reshape_cases():
    x = rand(2, 3, 4)
    yield Case("reshape_basic", "Reshape", {"x": x}, initializers={"shape": i64(4, 6)})
    yield Case("reshape_minus1", "Reshape", {"x": x}, initializers={"shape": i64(-1, 2)})
    yield Case("reshape_zero_copies", "Reshape", {"x": x}, initializers={"shape": i64(0, -1)})
    yield Case("reshape_zero_middle", "Reshape", {"x": x}, initializers={"shape": i64(2, 0, 2, 2)})
    yield Case("reshape_to_1d", "Reshape", {"x": x}, initializers={"shape": i64(-1)})
    yield Case("reshape_to_scalar", "Reshape", {"x": rand(1, 1)},
               initializers={"shape": np.zeros((0,), np.int64)})
    yield Case("reshape_allowzero", "Reshape", {"x": rand(0, 3)}, {"allowzero": 1},
               initializers={"shape": i64(3, 0)})
    yield Case("reshape_i64", "Reshape", {"x": ints(6, 2)}, initializers={"shape": i64(3, -1, 2)})


def flatten_cases():
    x = rand(2, 3, 4, 5)
    for axis in (0, 1, 2, 4, -1, -4):
        name = f"m{-axis}" if axis < 0 else str(axis)
        yield Case(f"flatten_axis{name}", "Flatten", {"x": x}, {"axis": axis})
    yield Case("flatten_default_bool", "Flatten", {"x": ints(3, 2, 2, lo=0, hi=2, dtype=bool)})


def transpose_cases():
    yield Case("transpose_default", "Transpose", {"x": rand(2, 3, 5)})
    yield Case("transpose_2d", "Transpose", {"x": rand(7, 13)}, {"perm": [1, 0]})
    for perm in ([0, 2, 1, 3], [0, 2, 3, 1], [0, 3, 1, 2], [3, 1, 0, 2], [1, 0, 2, 3]):
        name = "".join(map(str, perm))
        yield Case(f"transpose_4d_{name}", "Transpose", {"x": rand(2, 3, 5, 7)}, {"perm": perm})
    yield Case("transpose_5d", "Transpose", {"x": rand(2, 1, 3, 4, 5)}, {"perm": [4, 2, 0, 3, 1]})
    yield Case("transpose_i64", "Transpose", {"x": ints(3, 4, 2)}, {"perm": [2, 0, 1]})
    yield Case("transpose_f16", "Transpose", {"x": rand(4, 6, dtype=np.float16)})
    yield Case("transpose_identity", "Transpose", {"x": rand(3, 4)}, {"perm": [0, 1]})


def squeeze_unsqueeze_cases():
    x = rand(1, 3, 1, 4, 1)
    yield Case("squeeze_all", "Squeeze", {"x": x})
    yield Case("squeeze_axes", "Squeeze", {"x": x}, initializers={"axes": i64(0, 2)})
    yield Case("squeeze_neg_axes", "Squeeze", {"x": x}, initializers={"axes": i64(-1, -5)})
    yield Case("squeeze_to_scalar", "Squeeze", {"x": rand(1, 1)})
    y = rand(3, 4)
    yield Case("unsqueeze_front", "Unsqueeze", {"x": y}, initializers={"axes": i64(0)})
    yield Case("unsqueeze_back", "Unsqueeze", {"x": y}, initializers={"axes": i64(-1)})
    yield Case("unsqueeze_many", "Unsqueeze", {"x": y}, initializers={"axes": i64(1, 3)})
    yield Case("unsqueeze_unsorted", "Unsqueeze", {"x": y}, initializers={"axes": i64(3, 0)})
    yield Case("unsqueeze_neg_mix", "Unsqueeze", {"x": y}, initializers={"axes": i64(-1, 0, -3)})
    yield Case("unsqueeze_scalar", "Unsqueeze", {"x": np.array(2.5, np.float32)},
               initializers={"axes": i64(0)})


def pad_cases():
    x = rand(3, 4, 5)
    pad_sets = {
        "pos": i64(1, 0, 2, 2, 3, 1),
        "crop": i64(-1, 0, -2, 0, -1, -1),
        "mixed": i64(1, -1, 0, -1, 2, 2),
    }
    for mode in ("constant", "reflect", "edge"):
        for pname, pads in pad_sets.items():
            yield Case(f"pad_{mode}_{pname}", "Pad", {"x": x}, {"mode": mode},
                       initializers={"pads": pads})
    yield Case("pad_constant_value", "Pad", {"x": x}, {"mode": "constant"},
               initializers={"pads": i64(0, 1, 1, 2, 0, 1),
                             "constant_value": np.array(-3.5, np.float32)})
    yield Case("pad_constant_i64_value", "Pad", {"x": ints(3, 4)},
               initializers={"pads": i64(1, 2, 0, 1), "constant_value": np.array(7, np.int64)})
    yield Case("pad_reflect_4d_nchw", "Pad", {"x": rand(1, 2, 5, 6)}, {"mode": "reflect"},
               initializers={"pads": i64(0, 0, 2, 3, 0, 0, 3, 2)})
    yield Case("pad_edge_i32", "Pad", {"x": ints(4, 3, dtype=np.int32)}, {"mode": "edge"},
               initializers={"pads": i64(3, 2, 1, 4)})
    yield Case("pad_reflect_full_period", "Pad", {"x": rand(2, 4)}, {"mode": "reflect"},
               initializers={"pads": i64(1, 3, 1, 3)})


def shape_cases():
    x = rand(2, 3, 5, 7)
    yield Case("shape_default", "Shape", {"x": x})
    yield Case("shape_start_end", "Shape", {"x": x}, {"start": 1, "end": 3})
    yield Case("shape_negative", "Shape", {"x": x}, {"start": -3, "end": -1})
    yield Case("shape_clamped", "Shape", {"x": x}, {"start": -10, "end": 10})
    yield Case("shape_empty_range", "Shape", {"x": x}, {"start": 3, "end": 1})
    yield Case("shape_scalar", "Shape", {"x": np.array(1.0, np.float32)})


def constant_of_shape_cases():
    # No graph inputs: the shape is an initializer.
    yield Case("constant_of_shape_default", "ConstantOfShape", {},
               initializers={"shape": i64(2, 3)})
    yield Case("constant_of_shape_i64", "ConstantOfShape", {},
               {"value": helper.make_tensor("value", TensorProto.INT64, [1], [7])},
               initializers={"shape": i64(4, 1, 2)})
    yield Case("constant_of_shape_f32", "ConstantOfShape", {},
               {"value": helper.make_tensor("value", TensorProto.FLOAT, [1], [-1.25])},
               initializers={"shape": i64(3)})
    yield Case("constant_of_shape_bool_empty", "ConstantOfShape", {},
               {"value": helper.make_tensor("value", TensorProto.BOOL, [1], [True])},
               initializers={"shape": i64(2, 0)})


def expand_tile_cases():
    yield Case("expand_rank_up", "Expand", {"x": rand(3, 1)}, initializers={"shape": i64(2, 3, 4)})
    yield Case("expand_bidirectional", "Expand", {"x": rand(2, 1, 6)},
               initializers={"shape": i64(1, 4, 1)})
    yield Case("expand_scalar", "Expand", {"x": np.array(3.0, np.float32)},
               initializers={"shape": i64(2, 3)})
    yield Case("expand_same", "Expand", {"x": rand(2, 3)}, initializers={"shape": i64(2, 3)})
    yield Case("expand_ones_shape", "Expand", {"x": rand(3, 5)}, initializers={"shape": i64(1)})
    yield Case("expand_i64_middle", "Expand", {"x": ints(2, 1, 3)},
               initializers={"shape": i64(5, 2, 4, 3)})
    yield Case("expand_bool", "Expand", {"x": ints(1, 3, lo=0, hi=2, dtype=bool)},
               initializers={"shape": i64(4, 3)})
    yield Case("tile_basic", "Tile", {"x": rand(2, 3, 4)}, initializers={"repeats": i64(2, 1, 3)})
    yield Case("tile_1d", "Tile", {"x": rand(5)}, initializers={"repeats": i64(4)})
    yield Case("tile_zero", "Tile", {"x": rand(2, 3)}, initializers={"repeats": i64(0, 2)})
    yield Case("tile_ones", "Tile", {"x": rand(2, 3)}, initializers={"repeats": i64(1, 1)})
    yield Case("tile_bool", "Tile", {"x": ints(2, 2, lo=0, hi=2, dtype=bool)},
               initializers={"repeats": i64(3, 2)})
    yield Case("tile_i32_4d", "Tile", {"x": ints(1, 2, 1, 3, dtype=np.int32)},
               initializers={"repeats": i64(2, 1, 3, 2)})


def range_cases():
    def scalars(dtype, *v):
        return {n: np.array(x, dtype=dtype) for n, x in zip(("start", "limit", "delta"), v)}
    yield Case("range_i64", "Range", {}, initializers=scalars(np.int64, 2, 17, 3))
    yield Case("range_i64_negative", "Range", {}, initializers=scalars(np.int64, 10, -3, -4))
    yield Case("range_i32", "Range", {}, initializers=scalars(np.int32, -5, 5, 1))
    yield Case("range_i64_empty", "Range", {}, initializers=scalars(np.int64, 5, 5, 1))
    yield Case("range_f32", "Range", {}, initializers=scalars(np.float32, 0.5, 3.1, 0.3))
    yield Case("range_f32_negative", "Range", {}, initializers=scalars(np.float32, 1.0, -2.0, -0.75))


RESIZE_COORDS = ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
                 "tf_half_pixel_for_nn")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def resize_case(name, x, attrs, scales=None, sizes=None, roi=None, rtol=1e-4):
    inits = {}
    node_inputs = ["x", "roi" if roi is not None else ""]
    if roi is not None:
        inits["roi"] = np.array(roi, np.float32)
    if scales is not None:
        inits["scales"] = np.array(scales, np.float32)
        node_inputs.append("scales")
    else:
        inits["sizes"] = np.array(sizes, np.int64)
        node_inputs += ["", "sizes"]
    return Case(name, "Resize", {"x": x}, attrs, inits, node_inputs=node_inputs, rtol=rtol)


def integral_lengths(x, scales):
    """Whether every scale x input length is a whole number (or sizes are given)."""
    return scales is None or all(float(s * n).is_integer() for s, n in zip(scales, x.shape))


def resize_cases():
    x4 = rand(1, 2, 5, 7)
    x2 = rand(6, 5, seed=3)
    resizes = {  # name: (input, scales, sizes)
        "up4d": (x4, [1, 1, 2.0, 1.5], None),
        "down4d": (x4, [1, 1, 0.6, 0.5], None),
        "sizes_up4d": (x4, None, [1, 2, 8, 11]),
        "sizes_down4d": (x4, None, [1, 2, 3, 4]),
        "mixed2d": (x2, [1.7, 0.8], None),
        "sizes2d": (x2, None, [4, 9]),
    }
    for (rname, (x, scales, sizes)), coord in itertools.product(resizes.items(), RESIZE_COORDS):
        if coord == "align_corners" and not integral_lengths(x, scales):
            # ONNX maps align_corners onto the unrounded scale x length (its reference, and its
            # node tests test_resize_downsample_scales_{linear,cubic}_align_corners, which collage
            # passes); ONNX Runtime maps onto the rounded output length and fails those node
            # tests. The two agree where scale x length is a whole number, checked here.
            continue
        for nmode in NEAREST_MODES:
            yield resize_case(f"resize_nearest_{rname}_{coord}_{nmode}", x,
                              {"mode": "nearest", "coordinate_transformation_mode": coord,
                               "nearest_mode": nmode}, scales, sizes)
        yield resize_case(f"resize_linear_{rname}_{coord}", x,
                          {"mode": "linear", "coordinate_transformation_mode": coord},
                          scales, sizes)
        yield resize_case(f"resize_cubic_{rname}_{coord}", x,
                          {"mode": "cubic", "coordinate_transformation_mode": coord},
                          scales, sizes)
    yield resize_case("resize_nearest_default_2x", x4, {}, [1, 1, 2, 2])
    yield resize_case("resize_nearest_int32", ints(1, 1, 3, 4, dtype=np.int32),
                      {"mode": "nearest"}, [1, 1, 2.5, 1.5])
    yield resize_case("resize_nearest_int8_3d", ints(2, 3, 4, dtype=np.int8),
                      {"mode": "nearest", "nearest_mode": "floor",
                       "coordinate_transformation_mode": "asymmetric"}, [1, 3, 0.5])
    yield resize_case("resize_nearest_5d", rand(1, 2, 3, 4, 2),
                      {"mode": "nearest"}, [1, 1, 2, 1.5, 3])
    yield resize_case("resize_linear_nhwc", rand(1, 4, 5, 3),
                      {"mode": "linear"}, [1, 1.5, 2.0, 1])
    yield resize_case("resize_linear_3d", rand(3, 4, 5),
                      {"mode": "linear", "coordinate_transformation_mode": "align_corners"},
                      [2, 1.5, 0.8])
    yield resize_case("resize_linear_5d", rand(1, 2, 3, 4, 5),
                      {"mode": "linear"}, None, [1, 2, 5, 6, 3])
    yield resize_case("resize_linear_to_one", x4,
                      {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"},
                      None, [1, 2, 1, 3])
    yield resize_case("resize_cubic_a05_exclude", x4,
                      {"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1},
                      [1, 1, 1.8, 2.2])
    yield resize_case("resize_cubic_exclude_down", x2,
                      {"mode": "cubic", "exclude_outside": 1,
                       "coordinate_transformation_mode": "asymmetric"}, None, [3, 8])
    yield resize_case("resize_same_size_scales", x4, {"mode": "linear"}, [1, 1, 1.1, 1.1])
    for mode in ("nearest", "linear", "cubic"):
        yield resize_case(f"resize_crop_{mode}", x4,
                          {"mode": mode, "coordinate_transformation_mode": "tf_crop_and_resize",
                           "extrapolation_value": -9.0},
                          None, [1, 2, 4, 6], roi=[0, 0, 0.2, -0.3, 1, 1, 0.9, 1.2])
    yield resize_case("resize_crop_full_roi", x2,
                      {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize"},
                      [2, 1.5], roi=[0, 0, 1, 1])


def cases():
    yield from concat_cases()
    yield from split_cases()
    yield from slice_cases()
    yield from gather_cases()
    yield from reshape_cases()
    yield from flatten_cases()
    yield from transpose_cases()
    yield from squeeze_unsqueeze_cases()
    yield from pad_cases()
    yield from shape_cases()
    yield from constant_of_shape_cases()
    yield from expand_tile_cases()
    yield from range_cases()
    yield from resize_cases()
