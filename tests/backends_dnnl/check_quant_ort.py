"""A small quantized CNN on u8 data (made here with onnx.helper: three QLinearConv with
per-channel i8 weights, bias, groups and a stride, ConvInteger on u8 weights with a zero point of
128, MatMulInteger on u8 weights that do not fit i8 less their zero point, QLinearMatMul with
per-column scales) compiled by `collage compile --backends dnnl` and run by `collage run`: every
node must be placed on dnnl (on a CPU without VNNI none may be: oneDNN's 8-bit sums saturate
there, so the backend refuses them), and the outputs must equal the reference executor's and,
on a CPU with VNNI, be within one quantization step of ONNX Runtime's (without VNNI ONNX Runtime's
own kernels saturate the same way, so its outputs are printed, not compared). (QuantizeLinear and DequantizeLinear have no fast kernel
yet, so the model takes and gives quantized tensors.)

    check_quant_ort.py BUILD_DIR
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(5)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def conv_weights(m, c, k):
    return rng.integers(-120, 120, size=(m, c, k, k), dtype=np.int8)


def make_model():
    inits, nodes = [], []

    def scalar(name, value, dtype):
        inits.append(const(name, np.array(value, dtype=dtype)))
        return name

    def qconv(x, name, m, c, k, xs, ys, **attrs):
        w = conv_weights(m, c // attrs.get("group", 1), k)
        inits.append(const(name + ".w", w))
        inits.append(const(name + ".ws", (0.002 + 0.001 * rng.random(m)).astype(np.float32)))
        inits.append(const(name + ".wz", np.zeros(m, np.int8)))
        inits.append(const(name + ".b", rng.integers(-500, 500, size=m, dtype=np.int32)))
        nodes.append(helper.make_node(
            "QLinearConv", [x, xs, "zp128", name + ".w", name + ".ws", name + ".wz", ys, "zp128",
                            name + ".b"], [name], name=name, **attrs))
        return name

    scalar("zp128", 128, np.uint8)
    scalar("s_in", 0.02, np.float32)
    scalar("s1", 0.05, np.float32)
    scalar("s2", 0.08, np.float32)
    scalar("s3", 0.1, np.float32)
    h = qconv("x", "conv1", 16, 3, 3, "s_in", "s1", pads=[1, 1, 1, 1])
    h = qconv(h, "conv2", 16, 16, 3, "s1", "s2", pads=[1, 1, 1, 1], strides=[2, 2], group=4)
    h = qconv(h, "conv3", 32, 16, 1, "s2", "s3")
    # ConvInteger on u8 weights centred on 128.
    inits.append(const("ci.w", rng.integers(8, 248, size=(8, 3, 3, 3), dtype=np.uint8)))
    nodes.append(helper.make_node("ConvInteger", ["x", "ci.w", "zp128", "zp128"], ["conv_int"],
                                  name="conv_integer", pads=[0, 1, 0, 1]))
    # The last axis of conv3's result (8) into the two integer matmuls. u8 weights with zero
    # point 131: 0 - 131 does not fit i8 (oneDNN's weights zero point takes it).
    inits.append(const("mi.w", rng.integers(0, 256, size=(8, 10), dtype=np.uint8)))
    scalar("zp131", 131, np.uint8)
    nodes.append(helper.make_node("MatMulInteger", [h, "mi.w", "zp128", "zp131"], ["mm_int"],
                                  name="matmul_integer"))
    inits.append(const("qm.w", rng.integers(-127, 128, size=(8, 10), dtype=np.int8)))
    inits.append(const("qm.ws", (0.004 + 0.002 * rng.random(10)).astype(np.float32)))
    inits.append(const("qm.wz", np.zeros(10, np.int8)))
    scalar("s5", 0.01, np.float32)
    nodes.append(helper.make_node(
        "QLinearMatMul", [h, "s3", "zp128", "qm.w", "qm.ws", "qm.wz", "s5", "zp128"],
        ["logits"], name="qlinear_matmul"))
    graph = helper.make_graph(
        nodes, "quant_cnn", [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 3, 16, 16])],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in
         [(h, TensorProto.UINT8, [1, 32, 8, 8]), ("conv_int", TensorProto.INT32, [1, 8, 14, 16]),
          ("mm_int", TensorProto.INT32, [1, 32, 8, 10]),
          ("logits", TensorProto.UINT8, [1, 32, 8, 10])]],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def cpu_has_vnni():
    """Whether oneDNN's 8-bit kernels sum exactly here (the flags Linux reports for VNNI)."""
    flags = set()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            flags.update(line.split(":", 1)[1].split())
    return bool(flags & {"avx512_vnni", "avx_vnni", "amx_int8"})


def run(cmd):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r.stdout


def main():
    build = Path(sys.argv[1])
    collage = build / "bin" / "collage"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model = make_model()
        onnx.save(model, tmp / "q.onnx")
        x = rng.integers(0, 256, size=(1, 3, 16, 16), dtype=np.uint8)
        np.savez(tmp / "in.npz", x=x)
        sess = ort.InferenceSession(str(tmp / "q.onnx"), providers=["CPUExecutionProvider"])
        names = [o.name for o in sess.get_outputs()]
        expected = dict(zip(names, sess.run(None, {"x": x})))
        # single:dnnl: native now generates u8 ConvInteger too, and a measured placement on a
        # loaded machine may pick it; this test is about the dnnl kernels.
        run([collage, "compile", tmp / "q.onnx", "-o", tmp / "q.collage", "--backends", "dnnl",
             "--placement", "single:dnnl", "--no-cost-db", "--report", tmp / "report.json"])
        report = json.loads((tmp / "report.json").read_text())
        placed = {}
        groups = report.get("groups") or report.get("placement", {}).get("groups", [])
        for group in groups:
            for node in group.get("nodes", []):
                placed[node] = group.get("backend")
        quantized = ["conv1", "conv2", "conv3", "conv_integer", "matmul_integer",
                     "qlinear_matmul"]
        wrong = {n: placed.get(n) for n in quantized if placed.get(n) != "dnnl"}
        if cpu_has_vnni() and wrong:
            sys.exit(f"quantized nodes not placed on dnnl: {wrong}")
        if not cpu_has_vnni() and len(wrong) != len(quantized):
            sys.exit(f"quantized nodes placed on dnnl on a CPU without VNNI: {placed}")
        run([collage, "run", tmp / "q.collage", "--inputs", tmp / "in.npz", "--outputs",
             tmp / "dnnl.npz"])
        run([collage, "run", tmp / "q.onnx", "--placement", "reference", "--inputs",
             tmp / "in.npz", "--outputs", tmp / "ref.npz"])
        got, ref = np.load(tmp / "dnnl.npz"), np.load(tmp / "ref.npz")
        failed = False
        for name in names:
            a, r, e = got[name], ref[name], expected[name]
            same = np.array_equal(a, r)
            ort_diff = int(np.max(np.abs(a.astype(np.int64) - e.astype(np.int64))))
            # Without VNNI ONNX Runtime's MLAS kernels saturate too (pairs of u8 x s8 products
            # summed in 16 bits; on this session's AMD EPYC: off by up to 1,046 steps), so
            # only the reference, whose sums are exact, is the oracle there.
            allowed = 1 if cpu_has_vnni() else None
            print(f"{name}: collage == reference: {same}; max |collage - ORT| {ort_diff} "
                  f"(allowed {allowed or 'any: no VNNI'})")
            failed |= not same or (allowed is not None and ort_diff > allowed)
        sys.exit(1 if failed else 0)


main()
