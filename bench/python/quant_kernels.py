"""The 8-bit integer contractions on a ResNet-style layer (3x3, 64 -> 64 channels, 56x56) and a
BERT-base projection (128 x 768 x 768): collage's oneDNN kernels (an artifact compiled with
--backends dnnl, run by `collage run`), the reference executor (`collage run --placement
reference`) and ONNX Runtime (CPU, 2 threads, in process), alternating the contenders round by
round; prints each one's median of the per-round medians and the ratios. Not a test.

    .venv/bin/python bench/python/quant_kernels.py BUILD_DIR [--rounds 5] [--repeat 20]
"""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import single_op_bench

rng = np.random.default_rng(3)


def model(op, x_shape, inits, inputs, out_type, y_shape, attrs=None):
    nodes = [helper.make_node(op, ["x"] + inputs, ["y"], name=op.lower(), **(attrs or {}))]
    graph = helper.make_graph(
        nodes, op, [helper.make_tensor_value_info("x", TensorProto.UINT8, x_shape)],
        [helper.make_tensor_value_info("y", out_type, y_shape)],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def cases():
    conv_x, mm_x = [1, 64, 56, 56], [1, 128, 768]
    w_conv = rng.integers(-127, 128, size=(64, 64, 3, 3), dtype=np.int8)
    w_conv_u8 = (w_conv.astype(np.int16) + 128).astype(np.uint8)
    w_mm = rng.integers(-127, 128, size=(768, 768), dtype=np.int8)
    f = lambda v: np.array(v, np.float32)
    qconv = model("QLinearConv", conv_x, {
        "xs": f(0.02), "xz": np.uint8(128), "w": w_conv,
        "ws": (0.002 + 0.001 * rng.random(64)).astype(np.float32), "wz": np.zeros(64, np.int8),
        "ys": f(0.5), "yz": np.uint8(128), "b": rng.integers(-500, 500, 64, dtype=np.int32)},
        ["xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], TensorProto.UINT8, conv_x,
        {"pads": [1, 1, 1, 1]})
    conv_int = model("ConvInteger", conv_x, {"w": w_conv_u8, "xz": np.uint8(128),
                                             "wz": np.uint8(128)},
                     ["w", "xz", "wz"], TensorProto.INT32, conv_x, {"pads": [1, 1, 1, 1]})
    mm_int = model("MatMulInteger", mm_x, {"w": w_mm, "xz": np.uint8(128)}, ["w", "xz"],
                   TensorProto.INT32, mm_x)
    qmm = model("QLinearMatMul", mm_x, {
        "xs": f(0.02), "xz": np.uint8(128), "w": w_mm, "ws": f(0.003), "wz": np.int8(0),
        "ys": f(2.0), "yz": np.uint8(128)},
        ["xs", "xz", "w", "ws", "wz", "ys", "yz"], TensorProto.UINT8, mm_x)
    return [("QLinearConv 64x56x56 3x3", qconv, conv_x), ("ConvInteger 64x56x56 3x3", conv_int,
            conv_x), ("MatMulInteger 128x768x768", mm_int, mm_x),
            ("QLinearMatMul 128x768x768", qmm, mm_x)]


def main():
    inputs = [(name, m, rng.integers(0, 256, size=shape, dtype=np.uint8))
              for name, m, shape in cases()]
    single_op_bench.run(__doc__, "dnnl", inputs, ref_repeat=2, ref_warmup=0)


main()
