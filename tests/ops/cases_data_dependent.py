"""Single-operator cases for the operators whose output shapes depend on their input values:
NonZero, Unique, NonMaxSuppression. Their data are graph inputs (known only at run time), so the
imported graph has outputs of dynamic shape and the reference executor sizes them as it runs.
Boxes and scores avoid equal scores: ONNX Runtime orders ties by its heap, not by index.
"""
import numpy as np

from op_case import Case, rand


def i64(*v):
    return np.array(v, dtype=np.int64)


def f32(*v):
    return np.array(v, dtype=np.float32)


def nonzero_cases():
    x = rand(3, 4, 5)
    x[x < 0.2] = 0
    yield Case("nonzero_f32_3d", "NonZero", {"x": x})
    yield Case("nonzero_i64", "NonZero", {"x": i64(0, 3, 0, -1, 0, 0, 7)})
    b = np.random.default_rng(3).integers(0, 2, (4, 6)).astype(bool)
    yield Case("nonzero_bool", "NonZero", {"x": b})
    yield Case("nonzero_all_zero", "NonZero", {"x": np.zeros((2, 3), np.float32)})
    yield Case("nonzero_i32_opset9", "NonZero",
               {"x": np.array([[1, 0], [0, 5]], np.int32)}, opset=11)


def unique_cases():
    v = f32(2.0, 1.0, 1.0, 3.0, 4.0, 3.0, -1.0, 2.0)
    yield Case("unique_sorted", "Unique", {"x": v}, num_outputs=4)
    yield Case("unique_unsorted", "Unique", {"x": v}, {"sorted": 0}, num_outputs=4)
    yield Case("unique_values_only", "Unique", {"x": i64(5, 5, -2, 9, -2, 0)})
    m = np.array([[1, 0, 0], [1, 0, 0], [2, 3, 4], [1, 0, 0]], np.float32)
    yield Case("unique_axis0", "Unique", {"x": m}, {"axis": 0}, num_outputs=4)
    yield Case("unique_axis_neg1", "Unique", {"x": np.array([[1, 2, 1, 2], [3, 4, 3, 5]],
                                                            np.int64)},
               {"axis": -1, "sorted": 1}, num_outputs=4)
    t = np.array([[[1, 1], [0, 1]], [[1, 1], [0, 1]], [[0, 0], [2, 2]]], np.float32)
    yield Case("unique_axis0_3d_unsorted", "Unique", {"x": t}, {"axis": 0, "sorted": 0},
               num_outputs=4)


def corner_boxes(n, seed):
    rng = np.random.default_rng(seed)
    y, x = rng.uniform(0, 10, (2, n))
    h, w = rng.uniform(1, 4, (2, n))
    return np.stack([y, x, y + h, x + w], axis=-1).astype(np.float32)


def distinct_scores(shape, seed):
    n = int(np.prod(shape))
    return (np.random.default_rng(seed).permutation(n).reshape(shape) / n).astype(np.float32)


def nms_cases():
    boxes = corner_boxes(12, 1)[None]
    scores = distinct_scores((1, 1, 12), 2)
    limits = {"max_out": i64(5), "iou": f32(0.3)}
    yield Case("nms_basic", "NonMaxSuppression", {"boxes": boxes, "scores": scores},
               initializers=limits)
    yield Case("nms_score_threshold", "NonMaxSuppression", {"boxes": boxes, "scores": scores},
               initializers={**limits, "score": f32(0.4)})
    # Opposite corners first on some boxes; two batches and three classes.
    b2 = np.stack([corner_boxes(10, 3), corner_boxes(10, 4)])
    b2[:, ::3] = b2[:, ::3][..., [2, 3, 0, 1]]
    yield Case("nms_batches_classes_flipped", "NonMaxSuppression",
               {"boxes": b2, "scores": distinct_scores((2, 3, 10), 5)},
               initializers={"max_out": i64(3), "iou": f32(0.1), "score": f32(0.2)})
    centers = corner_boxes(8, 6)
    centers[:, 2:] -= centers[:, :2]  # [x, y, w, h] from the corners' sizes
    yield Case("nms_center_point_box", "NonMaxSuppression",
               {"boxes": centers[None], "scores": distinct_scores((1, 2, 8), 7)},
               {"center_point_box": 1}, initializers={"max_out": i64(4), "iou": f32(0.2)})
    yield Case("nms_limits_as_inputs", "NonMaxSuppression",
               {"boxes": boxes, "scores": scores, "max_out": i64(2), "iou": f32(0.5)})
    yield Case("nms_no_limit_given", "NonMaxSuppression", {"boxes": boxes, "scores": scores})
    yield Case("nms_zero_boxes_per_class", "NonMaxSuppression",
               {"boxes": boxes, "scores": scores}, initializers={"max_out": i64(0)})


def cases():
    yield from nonzero_cases()
    yield from unique_cases()
    yield from nms_cases()
