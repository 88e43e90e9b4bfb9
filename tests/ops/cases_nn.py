"""Single-operator cases of the nn family (conv, pooling, normalisation, softmax, matmul)."""
import itertools

import numpy as np

from op_case import Case, rand



class _Seeds:
    """Distinct, deterministic seeds for the arrays of successive cases."""

    def __init__(self):
        self.n = 0

    def __call__(self):
        self.n += 1
        return self.n


_seed = _Seeds()


def _rand(*shape, lo=-1.0, hi=1.0):
    return rand(*shape, lo=lo, hi=hi, seed=_seed())


def _grid(*shape):
    """Random values on a 1/8 grid in [-1, 1], for Conv, ConvTranspose, MatMul and Gemm.

    Every product is a multiple of 1/64 and every partial sum of these small cases is exact in
    float32, so results do not depend on the summation order: outputs that land near zero
    (where a relative comparison is harsh) match ONNX Runtime exactly.
    """
    rng = np.random.default_rng(_seed())
    return np.asarray(rng.integers(-8, 9, size=shape) / 8.0, dtype=np.float32)


def _conv(name, op, x_shape, w_shape, bias=True, weights_const=True, **attrs):
    x = _grid(*x_shape)
    w = _grid(*w_shape)
    params = {"W": w}
    if bias:
        channels = w_shape[0] if op == "Conv" else w_shape[1] * attrs.get("group", 1)
        params["B"] = _grid(channels)
    if weights_const:
        return Case(name, op, {"X": x}, attrs, initializers=params)
    return Case(name, op, {"X": x, **params}, attrs)


def conv_cases():
    c = lambda name, x, w, **kw: _conv("conv_" + name, "Conv", x, w, **kw)
    yield c("2d_basic", (1, 3, 7, 9), (4, 3, 3, 3))
    yield c("2d_no_bias", (1, 3, 7, 9), (4, 3, 3, 3), bias=False)
    yield c("2d_runtime_weights", (2, 3, 6, 5), (5, 3, 2, 2), weights_const=False)
    yield c("2d_pads", (1, 3, 7, 9), (4, 3, 3, 3), pads=[1, 1, 1, 1])
    yield c("2d_pads_asym", (1, 2, 7, 9), (3, 2, 3, 3), pads=[1, 0, 2, 1])
    yield c("2d_pads_asym_big", (1, 2, 5, 4), (3, 2, 3, 2), pads=[2, 0, 0, 1])
    yield c("2d_stride2", (1, 3, 9, 7), (4, 3, 3, 3), strides=[2, 2], pads=[1, 1, 1, 1])
    yield c("2d_stride_mixed", (1, 3, 11, 10), (2, 3, 3, 2), strides=[3, 2], pads=[0, 1, 2, 0])
    yield c("2d_dilation2", (1, 2, 9, 11), (3, 2, 3, 3), dilations=[2, 2])
    yield c("2d_dilation_stride_pads", (1, 2, 12, 13), (3, 2, 3, 2), dilations=[2, 3],
            strides=[2, 1], pads=[2, 1, 1, 3])
    for mode in ["SAME_UPPER", "SAME_LOWER"]:
        tag = mode.lower()
        yield c(f"2d_{tag}", (1, 3, 7, 9), (4, 3, 3, 3), auto_pad=mode)
        yield c(f"2d_{tag}_stride2", (1, 3, 7, 9), (4, 3, 3, 3), auto_pad=mode, strides=[2, 2])
        yield c(f"2d_{tag}_even_kernel", (1, 2, 7, 8), (3, 2, 4, 2), auto_pad=mode)
        yield c(f"1d_{tag}_stride3", (1, 2, 10), (3, 2, 4), auto_pad=mode, strides=[3])
    yield c("2d_valid", (1, 3, 7, 9), (4, 3, 3, 3), auto_pad="VALID")
    yield c("2d_valid_stride2", (1, 3, 8, 9), (4, 3, 2, 3), auto_pad="VALID", strides=[2, 2])
    yield c("2d_notset_explicit", (1, 3, 7, 9), (4, 3, 3, 3), auto_pad="NOTSET", pads=[0, 1, 0, 1])
    yield c("2d_kernel_shape_attr", (1, 3, 6, 6), (4, 3, 3, 3), kernel_shape=[3, 3])
    yield c("2d_groups2", (1, 4, 7, 9), (6, 2, 3, 3), group=2, pads=[1, 1, 1, 1])
    yield c("2d_groups3_stride", (2, 6, 8, 7), (9, 2, 3, 3), group=3, strides=[2, 2])
    yield c("2d_depthwise", (1, 8, 9, 7), (8, 1, 3, 3), group=8, pads=[1, 1, 1, 1])
    yield c("2d_depthwise_mult2", (1, 4, 7, 7), (8, 1, 3, 3), group=4, strides=[2, 2],
            pads=[1, 1, 1, 1])
    yield c("2d_depthwise_same", (1, 5, 10, 9), (5, 1, 5, 5), group=5, auto_pad="SAME_UPPER",
            strides=[2, 2])
    yield c("2d_1x1", (1, 16, 7, 9), (12, 16, 1, 1))
    yield c("2d_1x1_batch", (3, 8, 5, 4), (6, 8, 1, 1), bias=False)
    yield c("2d_1x1_stride2", (1, 8, 7, 9), (6, 8, 1, 1), strides=[2, 2])
    yield c("2d_1x1_pads", (1, 4, 5, 5), (3, 4, 1, 1), pads=[1, 0, 0, 1])
    yield c("2d_1x1_groups", (1, 8, 5, 6), (4, 4, 1, 1), group=2)
    yield c("2d_batch2", (2, 3, 8, 8), (5, 3, 3, 3), pads=[1, 1, 1, 1])
    yield c("2d_kernel_equals_input", (1, 2, 5, 4), (3, 2, 5, 4))
    yield c("2d_kernel_fills_padded", (1, 2, 3, 3), (3, 2, 5, 4), pads=[1, 1, 1, 0])
    yield c("2d_7x7_stride2_resnet_stem", (1, 3, 31, 29), (8, 3, 7, 7), strides=[2, 2],
            pads=[3, 3, 3, 3])
    yield c("2d_large_k", (1, 32, 12, 11), (40, 32, 3, 3), pads=[1, 1, 1, 1])
    yield c("2d_1x1_large", (2, 70, 9, 13), (37, 70, 1, 1))
    yield c("1d_basic", (2, 3, 11), (4, 3, 3))
    yield c("1d_pads_stride_dilation", (1, 3, 17), (5, 3, 3), pads=[2, 1], strides=[2],
            dilations=[3])
    yield c("1d_groups", (1, 6, 9), (4, 3, 2), group=2, pads=[1, 0])
    yield c("1d_valid", (1, 2, 8), (2, 2, 5), auto_pad="VALID", bias=False)
    yield c("3d_basic", (1, 2, 5, 6, 7), (3, 2, 3, 3, 3))
    yield c("3d_pads_strides", (1, 2, 6, 7, 5), (4, 2, 3, 2, 3), pads=[1, 0, 1, 1, 1, 0],
            strides=[2, 1, 2])
    yield c("3d_groups_dilation", (2, 4, 7, 6, 6), (4, 2, 2, 3, 2), group=2, dilations=[2, 1, 2])
    yield c("3d_same_upper", (1, 2, 5, 5, 4), (2, 2, 3, 3, 2), auto_pad="SAME_UPPER",
            strides=[2, 2, 1])


def conv_transpose_cases():
    c = lambda name, x, w, **kw: _conv("convt_" + name, "ConvTranspose", x, w, **kw)
    yield c("2d_basic", (1, 3, 5, 6), (3, 2, 3, 3))
    yield c("2d_no_bias", (1, 3, 5, 6), (3, 2, 3, 3), bias=False)
    yield c("2d_runtime_weights", (1, 2, 4, 5), (2, 3, 2, 3), weights_const=False)
    yield c("2d_stride2", (1, 3, 5, 6), (3, 2, 3, 3), strides=[2, 2])
    yield c("2d_stride2_pads", (1, 3, 5, 6), (3, 2, 3, 3), strides=[2, 2], pads=[1, 1, 1, 1])
    yield c("2d_pads_asym", (1, 2, 5, 4), (2, 3, 3, 3), strides=[2, 3], pads=[0, 2, 1, 1])
    yield c("2d_output_padding", (1, 3, 5, 6), (3, 2, 3, 3), strides=[2, 2], pads=[1, 1, 1, 1],
            output_padding=[1, 1])
    yield c("2d_output_padding_mixed", (1, 2, 4, 5), (2, 2, 3, 3), strides=[3, 2],
            output_padding=[2, 0])
    yield c("2d_output_shape", (1, 3, 5, 6), (3, 2, 3, 3), strides=[2, 2], output_shape=[10, 12])
    yield c("2d_output_shape_odd", (1, 2, 4, 4), (2, 3, 3, 3), strides=[2, 2], output_shape=[7, 8])
    yield c("2d_output_shape_past_full", (1, 2, 4, 4), (2, 2, 3, 3), strides=[2, 2],
            output_shape=[10, 9])
    yield c("2d_output_shape_and_padding", (1, 2, 4, 4), (2, 2, 3, 3), strides=[2, 2],
            output_padding=[1, 1], output_shape=[8, 7])
    for mode in ["SAME_UPPER", "SAME_LOWER"]:
        tag = mode.lower()
        yield c(f"2d_{tag}", (1, 2, 4, 5), (2, 3, 3, 3), auto_pad=mode, strides=[2, 2])
        yield c(f"2d_{tag}_stride1", (1, 2, 4, 5), (2, 3, 4, 3), auto_pad=mode)
        yield c(f"1d_{tag}", (1, 2, 5), (2, 2, 4), auto_pad=mode, strides=[3])
    yield c("2d_valid", (1, 2, 4, 5), (2, 3, 3, 3), auto_pad="VALID", strides=[2, 1])
    yield c("2d_groups2", (1, 4, 5, 5), (4, 3, 3, 3), group=2, strides=[2, 2])
    yield c("2d_depthwise", (1, 4, 5, 6), (4, 1, 3, 3), group=4, strides=[2, 2],
            pads=[1, 1, 1, 1], output_padding=[1, 1])
    yield c("2d_dilation2", (1, 2, 5, 5), (2, 3, 3, 3), dilations=[2, 2])
    yield c("2d_dilation_stride", (1, 2, 4, 5), (2, 2, 2, 3), dilations=[2, 3], strides=[3, 2],
            pads=[1, 0, 0, 2])
    yield c("2d_batch2", (2, 3, 4, 4), (3, 4, 4, 4), strides=[2, 2], pads=[1, 1, 1, 1])
    yield c("2d_kernel_shape_attr", (1, 2, 3, 3), (2, 2, 3, 3), kernel_shape=[3, 3])
    yield c("2d_large", (1, 32, 7, 6), (32, 16, 4, 4), strides=[2, 2], pads=[1, 1, 1, 1])
    yield c("1d_basic", (2, 3, 7), (3, 4, 3))
    yield c("1d_stride_pads", (1, 3, 6), (3, 2, 5), strides=[2], pads=[2, 1], output_padding=[1])
    yield c("3d_basic", (1, 2, 3, 4, 3), (2, 2, 2, 3, 2), strides=[2, 1, 2], pads=[0, 1, 1, 0, 0, 0])


def _pool(name, op, x_shape, **attrs):
    return Case(name, op, {"X": _rand(*x_shape)}, attrs)


def pool_cases():
    mp = lambda name, x, **kw: _pool("maxpool_" + name, "MaxPool", x, **kw)
    yield mp("2d_basic", (1, 3, 8, 8), kernel_shape=[2, 2], strides=[2, 2])
    yield mp("2d_resnet", (1, 4, 11, 12), kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    yield mp("2d_no_stride", (2, 2, 6, 7), kernel_shape=[3, 2])
    yield mp("2d_pads_asym", (1, 2, 7, 9), kernel_shape=[3, 3], pads=[0, 2, 1, 0], strides=[2, 2])
    yield mp("2d_ceil", (1, 2, 7, 9), kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    yield mp("2d_ceil_pads", (1, 2, 6, 8), kernel_shape=[3, 2], strides=[2, 3], pads=[1, 1, 1, 1],
             ceil_mode=1)
    yield mp("2d_ceil_last_window_dropped", (1, 1, 5, 5), kernel_shape=[2, 2], strides=[2, 2],
             pads=[1, 1, 1, 1], ceil_mode=1)
    yield mp("2d_dilation", (1, 2, 9, 10), kernel_shape=[3, 3], dilations=[2, 2])
    yield mp("2d_dilation_stride_pads", (1, 2, 10, 9), kernel_shape=[2, 3], dilations=[3, 2],
             strides=[2, 2], pads=[1, 1, 0, 1])
    yield mp("2d_dilation_ceil", (1, 2, 10, 9), kernel_shape=[2, 2], dilations=[2, 2],
             strides=[3, 2], ceil_mode=1)
    for mode in ["SAME_UPPER", "SAME_LOWER"]:
        tag = mode.lower()
        yield mp(f"2d_{tag}", (1, 2, 7, 9), kernel_shape=[3, 3], strides=[2, 2], auto_pad=mode)
        yield mp(f"2d_{tag}_even", (1, 2, 6, 7), kernel_shape=[2, 4], auto_pad=mode)
    yield mp("2d_valid", (1, 2, 7, 9), kernel_shape=[3, 2], strides=[2, 2], auto_pad="VALID")
    yield mp("2d_negative_inputs", (1, 2, 5, 5), kernel_shape=[2, 2], pads=[1, 1, 1, 1])
    yield mp("1d", (2, 3, 11), kernel_shape=[3], strides=[2], pads=[1, 0])
    yield mp("1d_ceil", (1, 2, 10), kernel_shape=[3], strides=[3], ceil_mode=1)
    yield mp("3d", (1, 2, 5, 6, 7), kernel_shape=[2, 3, 2], strides=[2, 2, 1], pads=[0, 1, 1, 1, 0, 0])

    ap = lambda name, x, **kw: _pool("avgpool_" + name, "AveragePool", x, **kw)
    yield ap("2d_basic", (1, 3, 8, 8), kernel_shape=[2, 2], strides=[2, 2])
    yield ap("2d_no_stride", (2, 2, 6, 7), kernel_shape=[3, 2])
    for inc in [0, 1]:
        yield ap(f"2d_pads_incl{inc}", (1, 2, 7, 9), kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                 count_include_pad=inc)
        yield ap(f"2d_pads_asym_incl{inc}", (1, 2, 7, 8), kernel_shape=[3, 3], strides=[2, 2],
                 pads=[2, 0, 1, 1], count_include_pad=inc)
        yield ap(f"2d_ceil_incl{inc}", (1, 2, 7, 9), kernel_shape=[3, 3], strides=[2, 2],
                 ceil_mode=1, count_include_pad=inc)
        yield ap(f"2d_ceil_pads_incl{inc}", (1, 2, 6, 8), kernel_shape=[3, 3], strides=[2, 2],
                 pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=inc)
        yield ap(f"2d_same_upper_incl{inc}", (1, 2, 7, 9), kernel_shape=[3, 3], strides=[2, 2],
                 auto_pad="SAME_UPPER", count_include_pad=inc)
        yield ap(f"2d_same_lower_incl{inc}", (1, 2, 6, 7), kernel_shape=[2, 4],
                 auto_pad="SAME_LOWER", count_include_pad=inc)
        yield ap(f"1d_incl{inc}", (2, 3, 11), kernel_shape=[4], strides=[3], pads=[2, 1],
                 count_include_pad=inc)
        yield ap(f"3d_incl{inc}", (1, 2, 5, 6, 5), kernel_shape=[2, 3, 3], strides=[1, 2, 2],
                 pads=[1, 1, 0, 0, 1, 1], count_include_pad=inc)
    yield ap("2d_valid", (1, 2, 7, 9), kernel_shape=[3, 2], strides=[2, 2], auto_pad="VALID")

    for name, shape in [("2d", (2, 3, 7, 9)), ("1d", (1, 4, 13)), ("3d", (1, 2, 3, 4, 5)),
                        ("2d_large", (1, 64, 14, 14))]:
        yield Case(f"gap_{name}", "GlobalAveragePool", {"X": _rand(*shape)})


def norm_cases():
    def bn(name, shape, const=True, **attrs):
        ch = shape[1]
        params = {"scale": _rand(ch), "B": _rand(ch), "mean": _rand(ch),
                  "var": _rand(ch, lo=0.1, hi=2.0)}
        x = {"X": _rand(*shape)}
        if const:
            return Case("bn_" + name, "BatchNormalization", x, attrs, initializers=params)
        return Case("bn_" + name, "BatchNormalization", {**x, **params}, attrs)

    yield bn("4d", (2, 3, 5, 6))
    yield bn("2d", (4, 5))
    yield bn("3d_epsilon", (2, 4, 7), epsilon=1e-2)
    yield bn("5d_runtime_params", (1, 3, 2, 3, 4), const=False)
    yield bn("4d_momentum_ignored", (1, 2, 3, 3), momentum=0.5)

    def inorm(name, shape, **attrs):
        ch = shape[1]
        return Case("instnorm_" + name, "InstanceNormalization", {"input": _rand(*shape)}, attrs,
                    initializers={"scale": _rand(ch), "B": _rand(ch)})

    yield inorm("4d", (2, 3, 5, 6))
    yield inorm("3d", (2, 4, 9))
    yield inorm("5d_epsilon", (1, 2, 3, 4, 2), epsilon=1e-3)

    def ln(name, shape, axis, bias=True, norm_shape=None, **attrs):
        norm = tuple(shape[axis:]) if norm_shape is None else norm_shape
        params = {"Scale": _rand(*norm)}
        if bias:
            params["B"] = _rand(*norm)
        return Case("layernorm_" + name, "LayerNormalization", {"X": _rand(*shape)},
                    {"axis": axis, **attrs}, initializers=params)

    yield ln("last", (2, 5, 16), -1)
    yield ln("last_default_axis", (3, 8), -1)
    yield ln("axis1", (2, 3, 4, 5), 1)
    yield ln("axis_neg2", (2, 3, 4, 5), -2)
    yield ln("axis0", (3, 4), 0)
    yield ln("no_bias", (2, 7, 6), -1, bias=False)
    yield ln("epsilon", (4, 10), 1, epsilon=1e-2)
    yield ln("bert", (1, 16, 768), -1)
    yield ln("1d", (9,), 0)


def softmax_cases():
    for op, prefix in [("Softmax", "softmax"), ("LogSoftmax", "logsoftmax")]:
        for name, shape, axis in [("last", (3, 7), -1), ("2d_axis0", (5, 4), 0),
                                  ("3d_axis1", (2, 6, 5), 1), ("3d_neg2", (2, 6, 5), -2),
                                  ("4d_last", (1, 2, 8, 8), -1), ("4d_axis0", (3, 2, 2, 3), 0),
                                  ("1d", (10,), 0), ("attention", (1, 4, 32, 32), 3)]:
            yield Case(f"{prefix}_{name}", op, {"X": _rand(*shape, lo=-4.0, hi=4.0)},
                       {"axis": axis})
        yield Case(f"{prefix}_large_values", op, {"X": _rand(4, 9, lo=-200.0, hi=200.0)},
                   {"axis": -1})
        yield Case(f"{prefix}_default_axis", op, {"X": _rand(2, 3, 4)})


def matmul_cases():
    for name, a, b in [("2d", (3, 4), (4, 5)), ("odd", (17, 33), (33, 19)),
                       ("1d_2d", (4,), (4, 5)), ("2d_1d", (3, 4), (4,)), ("1d_1d", (6,), (6,)),
                       ("1d_3d", (4,), (2, 4, 5)), ("3d_1d", (2, 3, 4), (4,)),
                       ("3d_2d", (2, 3, 4), (4, 5)), ("2d_3d", (3, 4), (2, 4, 5)),
                       ("3d_3d", (2, 3, 4), (2, 4, 5)), ("bcast_batch", (2, 1, 3, 4), (5, 4, 6)),
                       ("bcast_batch_ones", (1, 3, 4), (2, 4, 5)),
                       ("bcast_both", (3, 1, 2, 5), (1, 4, 5, 3)),
                       ("4d_attention", (1, 2, 5, 8), (1, 2, 8, 5)),
                       ("b_unit_batch", (2, 3, 4), (1, 4, 5)), ("k1", (5, 1), (1, 7))]:
        yield Case(f"matmul_{name}", "MatMul", {"A": _grid(*a), "B": _grid(*b)})
    yield Case("matmul_blocked", "MatMul", {"A": _grid(130, 300), "B": _grid(300, 70)})
    yield Case("matmul_weights_const", "MatMul", {"A": _grid(2, 16, 48)},
               initializers={"B": _grid(48, 40)})

    m, k, n = 5, 7, 6
    for ta, tb in itertools.product([0, 1], [0, 1]):
        a = _grid(k, m) if ta else _grid(m, k)
        b = _grid(n, k) if tb else _grid(k, n)
        yield Case(f"gemm_ta{ta}_tb{tb}", "Gemm", {"A": a, "B": b, "C": _grid(m, n)},
                   {"transA": ta, "transB": tb, "alpha": 0.5, "beta": 2.0})
        yield Case(f"gemm_ta{ta}_tb{tb}_no_c", "Gemm", {"A": a, "B": b},
                   {"transA": ta, "transB": tb})
    for name, c_shape in [("scalar", ()), ("row", (n,)), ("row2d", (1, n)), ("col", (m, 1)),
                          ("one", (1, 1)), ("full", (m, n))]:
        yield Case(f"gemm_c_{name}", "Gemm", {"A": _grid(m, k), "B": _grid(k, n)},
                   {"beta": 0.75}, initializers={"C": _grid(*c_shape)})
    yield Case("gemm_beta0", "Gemm", {"A": _grid(m, k), "B": _grid(k, n), "C": _grid(m, n)},
               {"beta": 0.0, "alpha": -1.5})
    yield Case("gemm_alpha0", "Gemm", {"A": _grid(m, k), "B": _grid(k, n), "C": _grid(m, n)},
               {"alpha": 0.0})
    yield Case("gemm_classifier", "Gemm", {"A": _grid(2, 256)},
               {"transB": 1}, initializers={"B": _grid(100, 256), "C": _grid(100)})
    yield Case("gemm_absent_c", "Gemm", {"A": _grid(m, k), "B": _grid(k, n)}, {"beta": 3.0},
               node_inputs=["A", "B", ""])


def cases():
    yield from conv_cases()
    yield from conv_transpose_cases()
    yield from pool_cases()
    yield from norm_cases()
    yield from softmax_cases()
    yield from matmul_cases()
