"""The 8-bit integer contractions on a ResNet-style layer (3x3, 64 -> 64 channels, 56x56) and a
BERT-base projection (128 x 768 x 768): collage's oneDNN kernels (an artifact compiled with
--backends dnnl, run by `collage run`), the reference executor (`collage run --placement
reference`) and ONNX Runtime (CPU, 2 threads, in process), alternating the contenders round by
round; prints each one's median of the per-round medians and the ratios. Not a test.

    .venv/bin/python bench/python/quant_kernels.py BUILD_DIR [--rounds 5] [--repeat 20]
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

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


def collage_median(cmd, env):
    out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env,
                         check=True).stdout
    return float(re.search(r"median ([0-9.]+) ms", out).group(1))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("build")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeat", type=int, default=20)
    args = p.parse_args()
    collage = Path(args.build) / "bin" / "collage"
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    print(f"load average {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name, m, x_shape in cases():
            path = tmp / "m.onnx"
            onnx.save(m, path)
            x = rng.integers(0, 256, size=x_shape, dtype=np.uint8)
            np.savez(tmp / "in.npz", x=x)
            subprocess.run([str(collage), "compile", path, "-o", tmp / "m.collage", "--backends",
                            "dnnl", "--no-cost-db"], check=True, capture_output=True, env=env)
            so = ort.SessionOptions()
            so.intra_op_num_threads = 2
            sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
            times = {"dnnl": [], "reference": [], "ort": []}
            for _ in range(args.rounds):
                times["dnnl"].append(collage_median(
                    [collage, "run", tmp / "m.collage", "--inputs", tmp / "in.npz", "--repeat",
                     args.repeat, "--warmup", 3], env))
                times["reference"].append(collage_median(
                    [collage, "run", path, "--placement", "reference", "--inputs",
                     tmp / "in.npz", "--repeat", 2, "--warmup", 0], env))
                for _ in range(3):
                    sess.run(None, {"x": x})
                ts = []
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    sess.run(None, {"x": x})
                    ts.append((time.perf_counter() - t0) * 1e3)
                times["ort"].append(statistics.median(ts))
            med = {k: statistics.median(v) for k, v in times.items()}
            print(f"{name}: dnnl {med['dnnl']:.3f} ms, reference {med['reference']:.1f} ms, "
                  f"ORT {med['ort']:.3f} ms; reference / dnnl {med['reference'] / med['dnnl']:.0f}x, "
                  f"dnnl / ORT {med['dnnl'] / med['ort']:.2f}")
    print(f"load average {os.getloadavg()}")


main()
