"""Single-operator cases of the reduction family: ReduceSum, ReduceMean, ReduceMax over any axes,
in both the attribute form (ReduceMean/ReduceMax before opset 18) and the input form (ReduceSum
from opset 13, all three from opset 18)."""
import numpy as np

from op_case import Case, rand

# float16 outputs carry 11 significant bits.
F16_RTOL = 1e-3
OPS = ["ReduceSum", "ReduceMean", "ReduceMax"]


class _Seeds:
    """Distinct, deterministic seeds for the arrays of successive cases."""

    def __init__(self):
        self.n = 2000

    def __call__(self):
        self.n += 1
        return self.n


_seed = _Seeds()


def _rand(shape, lo=-1.0, hi=1.0, dtype=np.float32):
    return np.asarray(rand(*shape, lo=lo, hi=hi, seed=_seed()), dtype=dtype)


def _ints(shape, lo, hi, dtype):
    rng = np.random.default_rng(_seed())
    return np.asarray(rng.integers(lo, hi, size=shape, endpoint=True), dtype=dtype)


def _reduce(name, op, x, axes=None, opset=17, rtol=1e-4, **attrs):
    """A reduction case; `axes` None means no axes at all. ReduceSum (opset >= 13) and every
    reduction at opset >= 18 take axes as a constant input, the others as an attribute."""
    axes_as_input = op == "ReduceSum" or opset >= 18
    inits = {}
    if axes is not None:
        if axes_as_input:
            inits["axes"] = np.array(axes, np.int64)
        else:
            attrs["axes"] = list(axes)
    return Case(name, op, {"X": x}, attrs, initializers=inits, opset=opset, rtol=rtol)


def axes_cases():
    specs = [
        ("last", (3, 4, 5), [2]),
        ("neg_last", (3, 4, 5), [-1]),
        ("first", (6, 7), [0]),
        ("middle", (2, 5, 3), [1]),
        ("two_adjacent", (2, 3, 4, 5), [2, 3]),
        ("two_apart", (3, 4, 5, 6), [0, 2]),
        ("two_apart_neg", (3, 4, 5, 6), [-3, -1]),
        ("unsorted", (2, 3, 4), [2, 0]),
        ("all_listed", (3, 5, 2), [0, 1, 2]),
        ("size1_axis", (4, 1, 6), [1]),
        ("rank1", (17,), [0]),
        ("spatial", (2, 8, 7, 7), [2, 3]),
        ("odd", (5, 9, 11), [1]),
    ]
    for op in OPS:
        short = op[len("Reduce"):].lower()
        for tag, shape, axes in specs:
            for keep in (1, 0):
                yield _reduce(f"reduce_{short}_{tag}_keep{keep}", op, _rand(shape, -3, 3), axes,
                              keepdims=keep)
        # No axes: reduce everything.
        yield _reduce(f"reduce_{short}_no_axes", op, _rand((3, 4, 5)))
        yield _reduce(f"reduce_{short}_no_axes_keep0", op, _rand((3, 4)), keepdims=0)
        # Opset 18: axes as an input for every reduction, and noop_with_empty_axes.
        yield _reduce(f"reduce_{short}_opset18", op, _rand((2, 3, 4)), [-2], opset=18)
        yield _reduce(f"reduce_{short}_opset18_keep0", op, _rand((2, 3, 4)), [0, 2], opset=18,
                      keepdims=0)
        yield _reduce(f"reduce_{short}_opset18_no_axes", op, _rand((2, 3)), opset=18)
        yield _reduce(f"reduce_{short}_noop_empty_axes", op, _rand((2, 3, 4)), opset=18,
                      noop_with_empty_axes=1)
        yield _reduce(f"reduce_{short}_empty_axes_not_noop", op, _rand((2, 3, 4)), [], opset=18,
                      noop_with_empty_axes=0)


def dtype_cases():
    for op in OPS:
        short = op[len("Reduce"):].lower()
        for dt, tag in [(np.int32, "i32"), (np.int64, "i64")]:
            yield _reduce(f"reduce_{short}_{tag}", op, _ints((3, 4, 5), -100, 100, dt), [1])
            yield _reduce(f"reduce_{short}_{tag}_all", op, _ints((4, 6), -9, 9, dt), keepdims=0)
        yield _reduce(f"reduce_{short}_f16", op, _rand((4, 6, 5), -2, 2, np.float16), [2],
                      rtol=F16_RTOL)
    yield _reduce("reduce_max_i8", "ReduceMax", _ints((5, 6), -128, 127, np.int8), [0])
    # ReduceSum's noop_with_empty_axes exists from opset 13.
    yield _reduce("reduce_sum_noop_opset13", "ReduceSum", _rand((3, 2)), noop_with_empty_axes=1)


def accuracy_cases():
    # BERT-style LayerNorm statistics and long sums, where accumulation order shows.
    yield _reduce("reduce_mean_bert_hidden", "ReduceMean", _rand((1, 128, 768), -4, 4), [-1])
    yield _reduce("reduce_sum_long_row", "ReduceSum", _rand((2, 50000), 0, 1), [1])
    yield _reduce("reduce_mean_long_column", "ReduceMean", _rand((20000, 3), 0, 2), [0])
    yield _reduce("reduce_mean_global_pool", "ReduceMean", _rand((2, 64, 14, 14)), [2, 3])


def cases():
    yield from axes_cases()
    yield from dtype_cases()
    yield from accuracy_cases()
