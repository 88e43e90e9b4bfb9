"""f16 MatMul at BERT-base's sizes (x [128, 768] times a constant [768, 768] or [768, 3072]; f32
beside it): collage's native generated code (an artifact compiled with --backends native, run by
`collage run`), the reference executor and ONNX Runtime (CPU, 2 threads, in process), alternating
the contenders round by round; prints each one's median of the per-round medians and the ratios.
(bf16 is left out: numpy cannot feed it.) Not a test.

    .venv/bin/python bench/python/matmul16_kernels.py BUILD_DIR [--rounds 5] [--repeat 20]
        [--target host|avx2|avx512]
"""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import single_op_bench

rng = np.random.default_rng(11)
TYPES = {"f32": (TensorProto.FLOAT, np.float32), "f16": (TensorProto.FLOAT16, np.float16)}


def model(elem, np_type, n):
    w = rng.uniform(-0.05, 0.05, (768, n)).astype(np_type)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="matmul")], "matmul",
        [helper.make_tensor_value_info("x", elem, [128, 768])],
        [helper.make_tensor_value_info("y", elem, [128, n])], [numpy_helper.from_array(w, "w")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def cases():
    out = []
    for n in (768, 3072):
        for name, (elem, np_type) in TYPES.items():
            x = rng.uniform(-1, 1, (128, 768)).astype(np_type)
            out.append((f"MatMul {name} 128x768 @ 768x{n}", model(elem, np_type, n), x))
    return out


if __name__ == "__main__":
    single_op_bench.run(__doc__, "native", cases(), ref_repeat=3, ref_warmup=1)
