"""QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear on a ResNet-style activation
(1x64x56x56), per tensor, per channel and blocked (opset 21): collage's native generated code
(an artifact compiled with --backends native, run by `collage run`), the reference executor
(`collage run --placement reference`) and ONNX Runtime (CPU, 2 threads, in process), alternating the
contenders round by round; prints each one's median of the per-round medians and the ratios.
Not a test.

    .venv/bin/python bench/python/qdq_kernels.py BUILD_DIR [--rounds 5] [--repeat 20]
        [--target host|avx2|avx512]
"""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import single_op_bench

rng = np.random.default_rng(5)
ACT = [1, 64, 56, 56]
BLOCKED = [1, 4, 56, 56]  # scales of blocks of 16 channels


def model(op, x_type, inits, inputs, outputs, attrs=None, opset=13):
    """One node over graph input x and constants `inits`; outputs is [(name, type, shape)]."""
    nodes = [helper.make_node(op, ["x"] + inputs, [o[0] for o in outputs], name=op.lower(),
                              **(attrs or {}))]
    graph = helper.make_graph(
        nodes, op, [helper.make_tensor_value_info("x", x_type, ACT)],
        [helper.make_tensor_value_info(*o) for o in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8 if opset < 21 else 10
    onnx.checker.check_model(m)
    return m


def cases():
    f = lambda v: np.asarray(v, np.float32)
    per_channel = (0.01 + 0.01 * rng.random(64)).astype(np.float32)
    blocked = (0.01 + 0.01 * rng.random(BLOCKED)).astype(np.float32)
    x_f32 = rng.standard_normal(ACT).astype(np.float32)
    x_u8 = rng.integers(0, 256, size=ACT, dtype=np.uint8)
    x_i8 = rng.integers(-128, 128, size=ACT, dtype=np.int8)
    return [
        ("QuantizeLinear f32->u8, per tensor",
         model("QuantizeLinear", TensorProto.FLOAT, {"s": f(0.02), "z": np.uint8(128)},
               ["s", "z"], [("y", TensorProto.UINT8, ACT)]), x_f32),
        ("QuantizeLinear f32->i8, per channel",
         model("QuantizeLinear", TensorProto.FLOAT, {"s": per_channel, "z": np.zeros(64, np.int8)},
               ["s", "z"], [("y", TensorProto.INT8, ACT)], {"axis": 1}), x_f32),
        ("DequantizeLinear u8->f32, per tensor",
         model("DequantizeLinear", TensorProto.UINT8, {"s": f(0.02), "z": np.uint8(128)},
               ["s", "z"], [("y", TensorProto.FLOAT, ACT)]), x_u8),
        ("DequantizeLinear i8->f32, per channel",
         model("DequantizeLinear", TensorProto.INT8, {"s": per_channel, "z": np.zeros(64, np.int8)},
               ["s", "z"], [("y", TensorProto.FLOAT, ACT)], {"axis": 1}), x_i8),
        ("QuantizeLinear f32->i8, blocked (axis 1, blocks of 16)",
         model("QuantizeLinear", TensorProto.FLOAT, {"s": blocked, "z": np.zeros(BLOCKED, np.int8)},
               ["s", "z"], [("y", TensorProto.INT8, ACT)], {"axis": 1, "block_size": 16}, 21),
         x_f32),
        ("DequantizeLinear u8->f32, blocked (axis 1, blocks of 16)",
         model("DequantizeLinear", TensorProto.UINT8,
               {"s": blocked, "z": np.full(BLOCKED, 128, np.uint8)}, ["s", "z"],
               [("y", TensorProto.FLOAT, ACT)], {"axis": 1, "block_size": 16}, 21), x_u8),
        ("DynamicQuantizeLinear f32->u8",
         model("DynamicQuantizeLinear", TensorProto.FLOAT, {}, [],
               [("y", TensorProto.UINT8, ACT), ("ys", TensorProto.FLOAT, []),
                ("yz", TensorProto.UINT8, [])]), x_f32),
    ]


def main():
    single_op_bench.run(__doc__, "native", list(cases()), ref_repeat=3, ref_warmup=1)


main()
