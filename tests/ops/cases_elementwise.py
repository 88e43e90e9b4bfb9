"""Single-operator cases of the elementwise family: arithmetic, activations, comparisons, Where,
Cast, Identity and Dropout."""
import numpy as np
from onnx import TensorProto

from op_case import Case, rand

# float16 results carry 11 significant bits; ORT and collage both compute in float but may round
# intermediate values differently.
F16_RTOL = 1e-3


class _Seeds:
    """Distinct, deterministic seeds for the arrays of successive cases."""

    def __init__(self):
        self.n = 1000

    def __call__(self):
        self.n += 1
        return self.n


_seed = _Seeds()


def _rand(shape, lo=-1.0, hi=1.0, dtype=np.float32):
    return np.asarray(rand(*shape, lo=lo, hi=hi, seed=_seed()), dtype=dtype)


def _ints(shape, lo, hi, dtype):
    rng = np.random.default_rng(_seed())
    return np.asarray(rng.integers(lo, hi, size=shape, endpoint=True), dtype=dtype)


def _away_from_zero(shape, lo=0.5, hi=2.0):
    """Values with |v| in [lo, hi] and random signs (divisors, reciprocals)."""
    rng = np.random.default_rng(_seed())
    mag = rng.uniform(lo, hi, size=shape)
    return np.asarray(mag * rng.choice([-1.0, 1.0], size=shape), dtype=np.float32)


_TAG = {np.float32: "f32", np.float16: "f16", np.int8: "i8", np.int32: "i32", np.int64: "i64",
        np.bool_: "bool"}

# Broadcast shape pairs: same shape, each direction, rank-0 scalars, size-1 axes, odd sizes.
BROADCAST_PAIRS = [
    ("same", (3, 5), (3, 5)),
    ("same_odd_4d", (2, 3, 5, 7), (2, 3, 5, 7)),
    ("row", (4, 7), (7,)),
    ("row_rev", (7,), (4, 7)),
    ("col", (5, 1), (5, 6)),
    ("outer", (5, 1), (1, 6)),
    ("scalar_rhs", (3, 4), ()),
    ("scalar_lhs", (), (3, 4)),
    ("scalars", (), ()),
    ("one_elem", (1,), (2, 3, 5)),
    ("channel", (2, 3, 4, 5), (3, 1, 1)),
    ("channel_rev", (1, 3, 1, 1), (2, 3, 4, 5)),
    ("rank_mix", (4, 1, 3), (2, 1)),
    ("middle", (3, 1, 5), (3, 4, 5)),
    ("zero_size", (0, 3), (3,)),
]


def arithmetic_cases():
    for op in ["Add", "Sub", "Mul", "Div"]:
        for tag, sa, sb in BROADCAST_PAIRS:
            b = _away_from_zero(sb) if op == "Div" else _rand(sb)
            yield Case(f"{op.lower()}_{tag}", op, {"A": _rand(sa, -3, 3), "B": b})
        # Integer forms; Div truncates toward zero on mixed signs.
        for dt in [np.int32, np.int64, np.int8]:
            t = _TAG[dt]
            a = _ints((3, 4), -50, 50, dt)
            b = _ints((4,), 1, 9, dt) * np.array([1, -1, 1, -1], dt)
            yield Case(f"{op.lower()}_{t}_row", op, {"A": a, "B": b})
            yield Case(f"{op.lower()}_{t}_scalar", op, {"A": a, "B": np.array(-3, dt)})
            yield Case(f"{op.lower()}_{t}_rev", op, {"A": b.reshape(4, 1), "B": a[:, :1].T})
        yield Case(f"{op.lower()}_f16", op,
                   {"A": _rand((3, 4), -3, 3, np.float16),
                    "B": _away_from_zero((4,)).astype(np.float16)}, rtol=F16_RTOL)
    # Operands given as constants (weights, biases).
    yield Case("add_const_bias", "Add", {"X": _rand((2, 8, 3, 3))},
               initializers={"bias": _rand((8, 1, 1))})
    yield Case("mul_const_scalar", "Mul", {"X": _rand((5, 7))},
               initializers={"s": np.array(0.125, np.float32)})


def pow_cases():
    pos = lambda shape: _rand(shape, 0.1, 3.0)
    yield Case("pow_f32_f32", "Pow", {"X": pos((3, 5)), "Y": _rand((3, 5), -2, 2)})
    yield Case("pow_f32_broadcast", "Pow", {"X": pos((2, 3, 4)), "Y": _rand((4,), -1, 3)})
    yield Case("pow_f32_scalar_square", "Pow", {"X": _rand((4, 6), -3, 3)},
               initializers={"Y": np.array(2.0, np.float32)})
    yield Case("pow_f32_scalar_cube", "Pow", {"X": _rand((7,), -3, 3)},
               initializers={"Y": np.array([3.0], np.float32)})
    yield Case("pow_f32_scalar_sqrt", "Pow", {"X": pos((5, 3))},
               initializers={"Y": np.array(0.5, np.float32)})
    neg_base = np.array([-3.0, -2.0, -1.5, -1.0, -0.5, 0.5, 2.0, 3.0], np.float32)
    yield Case("pow_negative_base_int_exponent_f32", "Pow",
               {"X": neg_base, "Y": np.array([3, 2, -1, 5, -2, -3, 0, 4], np.float32)})
    for dt in [np.int64, np.int32]:
        yield Case(f"pow_f32_{_TAG[dt]}_exponent", "Pow",
                   {"X": neg_base.reshape(2, 4), "Y": np.array([2, 3, -1, 0], dt)})
    yield Case("pow_i64_i64", "Pow", {"X": np.array([[-3, -2, 2, 5], [1, 7, -1, 3]], np.int64),
                                      "Y": np.array([3, 2, 4, 1], np.int64)})
    yield Case("pow_i32_i32_scalar", "Pow", {"X": np.array([-4, -1, 0, 2, 9], np.int32),
                                             "Y": np.array(3, np.int32)})
    yield Case("pow_i64_negative_exponent", "Pow",
               {"X": np.array([1, -1, 2, -1, 3], np.int64),
                "Y": np.array([-2, -3, -1, -2, 0], np.int64)})
    yield Case("pow_i32_f32_exponent", "Pow", {"X": np.array([4, 9, 2, 10], np.int32),
                                               "Y": np.array([0.5, 0.5, 3.0, 2.0], np.float32)})
    yield Case("pow_f16", "Pow", {"X": pos((3, 4)).astype(np.float16),
                                  "Y": np.array([2, 3, 0.5, -1], np.float16)}, rtol=F16_RTOL)


def unary_cases():
    shapes = [("odd", (3, 7)), ("4d", (2, 3, 4, 5)), ("scalar", ()), ("empty", (2, 0))]
    domains = {"Relu": (-3, 3), "Sigmoid": (-8, 8), "Tanh": (-4, 4), "Erf": (-3, 3),
               "Exp": (-5, 5), "Log": (0.01, 20), "Sqrt": (0, 50), "Neg": (-3, 3),
               "Abs": (-3, 3)}
    for op, (lo, hi) in domains.items():
        for tag, shape in shapes:
            yield Case(f"{op.lower()}_{tag}", op, {"X": _rand(shape, lo, hi)})
        if op not in ("Relu", "Neg", "Abs"):
            yield Case(f"{op.lower()}_f16", op, {"X": _rand((5, 6), lo, hi, np.float16)},
                       rtol=F16_RTOL)
    for tag, shape in shapes[:2]:
        yield Case(f"reciprocal_{tag}", "Reciprocal", {"X": _away_from_zero(shape, 0.1, 10)})
    yield Case("sigmoid_saturates", "Sigmoid",
               {"X": np.array([-120, -90, -20, 0, 20, 90, 120], np.float32)})
    yield Case("exp_large", "Exp", {"X": np.array([-100, -87, 0, 80, 88.5], np.float32)})
    for op in ["Relu", "Neg", "Abs"]:
        for dt in [np.int32, np.int8] + ([np.int64] if op != "Relu" else []):
            yield Case(f"{op.lower()}_{_TAG[dt]}", op, {"X": _ints((4, 5), -100, 100, dt)})
        yield Case(f"{op.lower()}_f16", op, {"X": _rand((5, 6), -3, 3, np.float16)})


def activation_cases():
    x = lambda shape=(3, 11): _rand(shape, -4, 4)
    yield Case("leakyrelu_default", "LeakyRelu", {"X": x()})
    yield Case("leakyrelu_alpha", "LeakyRelu", {"X": x((2, 3, 5))}, {"alpha": 0.2})
    yield Case("leakyrelu_f16", "LeakyRelu", {"X": x().astype(np.float16)}, {"alpha": 0.1},
               rtol=F16_RTOL)
    yield Case("prelu_channel", "PRelu", {"X": x((2, 3, 4, 5))},
               initializers={"slope": _rand((3, 1, 1), 0, 0.5)})
    yield Case("prelu_scalar_slope", "PRelu", {"X": x((4, 5))},
               initializers={"slope": np.array([0.25], np.float32)})
    yield Case("prelu_full_slope", "PRelu", {"X": x((3, 4)), "slope": _rand((3, 4))})
    yield Case("prelu_last_axis", "PRelu", {"X": x((2, 3, 7)), "slope": _rand((7,))})
    for dt in [np.int32, np.int64]:
        yield Case(f"prelu_{_TAG[dt]}", "PRelu", {"X": _ints((3, 4), -20, 20, dt),
                                                   "slope": _ints((4,), -3, 3, dt)})
    yield Case("hardsigmoid_default", "HardSigmoid", {"X": x()})
    yield Case("hardsigmoid_attrs", "HardSigmoid", {"X": x((4, 5))}, {"alpha": 0.5, "beta": 0.3})
    yield Case("hardswish", "HardSwish", {"X": _rand((3, 4, 5), -5, 5)})
    yield Case("hardswish_f16", "HardSwish", {"X": _rand((31,), -5, 5, np.float16)},
               rtol=F16_RTOL)
    for approx in ["none", "tanh"]:
        # ORT's tanh form computes 1 + tanh(z), which cancels for x below about -3 (relative
        # error ~2e-4 there); collage's x / (1 + exp(-2z)) does not.
        yield Case(f"gelu_{approx}", "Gelu", {"X": _rand((4, 33), -5, 5)},
                   {"approximate": approx}, opset=20, rtol=1e-3 if approx == "tanh" else 1e-4)
        yield Case(f"gelu_{approx}_f16", "Gelu", {"X": _rand((3, 8), -4, 4, np.float16)},
                   {"approximate": approx}, opset=20, rtol=F16_RTOL)
    yield Case("gelu_default_attr", "Gelu", {"X": _rand((2, 9), -3, 3)}, opset=20)
    yield from clip_cases()


def clip_cases():
    # Opset 11+ Clip: min and max are optional constant inputs.
    f = lambda v: np.array(v, np.float32)
    x = lambda: _rand((4, 9), -3, 3)
    yield Case("clip_min_max", "Clip", {"X": x()}, initializers={"min": f(-1), "max": f(1.5)})
    yield Case("clip_only_min", "Clip", {"X": x()}, initializers={"min": f(0.25)},
               node_inputs=["X", "min"])
    yield Case("clip_only_max", "Clip", {"X": x()}, initializers={"max": f(-0.5)},
               node_inputs=["X", "", "max"])
    yield Case("clip_no_bounds", "Clip", {"X": x()})
    yield Case("clip_min_above_max", "Clip", {"X": x()}, initializers={"min": f(1), "max": f(0)})
    yield Case("clip_relu6", "Clip", {"X": _rand((1, 8, 5, 5), -8, 8)},
               initializers={"min": f(0), "max": f(6)})
    for dt in [np.int32, np.int64, np.int8]:
        yield Case(f"clip_{_TAG[dt]}", "Clip", {"X": _ints((3, 5), -100, 100, dt)},
                   initializers={"min": np.array(-10, dt), "max": np.array(42, dt)})
    yield Case("clip_f16", "Clip", {"X": x().astype(np.float16)},
               initializers={"min": np.array(-1, np.float16), "max": np.array(2, np.float16)})


def comparison_cases():
    # Integer-valued floats so that Equal has hits.
    fl = lambda shape: _ints(shape, -3, 3, np.float32)
    for op in ["Equal", "Less", "Greater"]:
        for tag, sa, sb in [("same", (3, 5), (3, 5)), ("row", (4, 6), (6,)),
                            ("rev", (6, 1), (2, 1, 5)), ("scalar", (7,), ())]:
            yield Case(f"{op.lower()}_{tag}", op, {"A": fl(sa), "B": fl(sb)})
        for dt in [np.int32, np.int64, np.int8, np.float16]:
            yield Case(f"{op.lower()}_{_TAG[dt]}", op,
                       {"A": _ints((3, 4), -3, 3, dt), "B": _ints((4,), -3, 3, dt)})
    yield Case("equal_bool", "Equal", {"A": _ints((2, 5), 0, 1, np.bool_),
                                       "B": _ints((5,), 0, 1, np.bool_)})
    yield Case("equal_const_scalar", "Equal", {"A": _ints((3, 3), 0, 4, np.int64)},
               initializers={"B": np.array(2, np.int64)})


def where_cases():
    cond = lambda shape: _ints(shape, 0, 1, np.bool_)
    yield Case("where_same", "Where", {"C": cond((3, 5)), "X": _rand((3, 5)), "Y": _rand((3, 5))})
    yield Case("where_three_way", "Where",
               {"C": cond((2, 1, 4)), "X": _rand((3, 1)), "Y": _rand((4,))})
    yield Case("where_scalar_y", "Where",
               {"C": cond((4, 6)), "X": _rand((4, 6)), "Y": np.array(-1e9, np.float32)})
    yield Case("where_scalar_cond", "Where",
               {"C": np.array(True), "X": _rand((2, 3)), "Y": _rand((3,))})
    yield Case("where_mask_fill", "Where", {"C": cond((1, 1, 5, 5)), "X": _rand((2, 3, 5, 5))},
               initializers={"fill": np.array(-10000.0, np.float32)})
    for dt in [np.int64, np.int32, np.float16, np.int8]:
        yield Case(f"where_{_TAG[dt]}", "Where", {"C": cond((3, 4)),
                                                   "X": _ints((3, 4), -9, 9, dt),
                                                   "Y": _ints((1, 4), -9, 9, dt)})


_ONNX_TYPE = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16,
              np.int8: TensorProto.INT8, np.int32: TensorProto.INT32,
              np.int64: TensorProto.INT64, np.bool_: TensorProto.BOOL}


def _cast_source(dt):
    # Values every target can hold (integers truncate toward zero; int8 range respected).
    if dt == np.bool_:
        return _ints((3, 5), 0, 1, np.bool_)
    if dt in (np.float32, np.float16):
        v = _rand((3, 5), -100, 100)
        v[0, :3] = [0.0, -0.0, 0.75]
        v[1, :2] = [-0.75, 99.5]
        return v.astype(dt)
    v = _ints((3, 5), -120, 120, dt)
    v[0, 0] = 0
    return v


def cast_cases():
    types = [np.float32, np.float16, np.int8, np.int32, np.int64, np.bool_]
    for src in types:
        for dst in types:
            yield Case(f"cast_{_TAG[src]}_to_{_TAG[dst]}", "Cast", {"X": _cast_source(src)},
                       {"to": _ONNX_TYPE[dst]})
    yield Case("cast_i64_to_i8_wraps", "Cast", {"X": np.array([300, -129, 255, 128], np.int64)},
               {"to": TensorProto.INT8})
    yield Case("cast_i64_to_f32_rounds", "Cast",
               {"X": np.array([16777217, -16777219, 2**40 + 1], np.int64)},
               {"to": TensorProto.FLOAT})
    yield Case("cast_f32_to_f16_rounding", "Cast",
               {"X": np.array([0.1, 1e-6, 65504, 70000, -3.3e-8, 2049], np.float32)},
               {"to": TensorProto.FLOAT16})
    yield Case("cast_scalar", "Cast", {"X": np.array(7.9, np.float32)}, {"to": TensorProto.INT64})


def copy_cases():
    yield Case("identity_f32", "Identity", {"X": _rand((3, 4, 5))})
    yield Case("identity_i64", "Identity", {"X": _ints((6,), -5, 5, np.int64)})
    yield Case("identity_bool_scalar", "Identity", {"X": np.array(True)})
    yield Case("dropout_inference", "Dropout", {"X": _rand((2, 7))})
    yield Case("dropout_with_mask", "Dropout", {"X": _rand((3, 5))}, num_outputs=2)
    yield Case("dropout_ratio_input", "Dropout", {"X": _rand((4, 4))},
               initializers={"ratio": np.array(0.3, np.float32),
                             "training_mode": np.array(False)})
    yield Case("dropout_seed_attr", "Dropout", {"X": _rand((5,))}, {"seed": 42})


def cases():
    yield from arithmetic_cases()
    yield from pow_cases()
    yield from unary_cases()
    yield from activation_cases()
    yield from comparison_cases()
    yield from where_cases()
    yield from cast_cases()
    yield from copy_cases()
