"""Quantizes a test model into QDQ form as ONNX Runtime's quantizer writes it, and checks collage.

Usage (inside the project's .venv):
  qdq_model.py CACHE_DIR NAME COLLAGE_CLI WORK_DIR [--placement P]

Reads NAME.onnx and NAME.inputs.npz from the model cache (tests/models/build_models.sh), writes
WORK_DIR/NAME_qdq.onnx with onnxruntime.quantization.quantize_static (QDQ format, u8 activations,
i8 per-channel weights, MinMax calibration on 8 seeded random batches), runs it in ONNX Runtime
(CPU, default graph optimisations: ORT runs QLinearConv and friends) and through
`collage compile` + `collage run`, and compares each output in units of its last
DequantizeLinear's scale: the largest difference must be at most one quantization step (ORT's
integer kernels and collage's float ones round intermediate sums differently). Prints the
largest difference in steps and the share of elements that differ at all; exit status 1 on a
mismatch.
"""
import argparse
import pathlib
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                      quantize_static)


class RandomBatches(CalibrationDataReader):
    """Seeded batches shaped like the model's inputs, drawn like its test inputs."""

    def __init__(self, inputs: dict, count: int):
        rng = np.random.default_rng(1234)
        self._batches = iter([{k: rng.standard_normal(v.shape).astype(v.dtype)
                               for k, v in inputs.items()} for _ in range(count)])

    def get_next(self):
        return next(self._batches, None)


def output_scales(model: onnx.ModelProto) -> dict:
    """The scale of the DequantizeLinear that produces each graph output, when one does."""
    consts = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    producer = {o: n for n in model.graph.node for o in n.output}
    scales = {}
    for out in model.graph.output:
        node = producer.get(out.name)
        # Graph outputs come out of the last DequantizeLinear, possibly through a float op
        # that keeps scale (Flatten, Reshape); walk back through those.
        while node is not None and node.op_type != "DequantizeLinear" and node.input:
            node = producer.get(node.input[0])
        if node is not None and node.input[1] in consts:
            scales[out.name] = float(np.max(consts[node.input[1]]))
    return scales


def main(argv) -> int:
    ort.set_default_logger_severity(3)
    p = argparse.ArgumentParser()
    p.add_argument("cache")
    p.add_argument("name")
    p.add_argument("cli")
    p.add_argument("work")
    p.add_argument("--placement", default="")
    a = p.parse_args(argv)
    cache, work = pathlib.Path(a.cache), pathlib.Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    inputs = dict(np.load(cache / f"{a.name}.inputs.npz"))
    qdq = work / f"{a.name}_qdq.onnx"
    quantize_static(str(cache / f"{a.name}.onnx"), str(qdq), RandomBatches(inputs, 8),
                    quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8, per_channel=True)
    model = onnx.load(str(qdq))
    counts = {}
    for n in model.graph.node:
        counts[n.op_type] = counts.get(n.op_type, 0) + 1
    print(f"{qdq.name}: {counts.get('QuantizeLinear', 0)} QuantizeLinear, "
          f"{counts.get('DequantizeLinear', 0)} DequantizeLinear, {len(model.graph.node)} nodes")
    sess = ort.InferenceSession(str(qdq), providers=["CPUExecutionProvider"])
    expected = dict(zip((o.name for o in sess.get_outputs()), sess.run(None, inputs)))
    np.savez(work / f"{a.name}_qdq.inputs.npz", **inputs)
    art, outs = work / f"{a.name}_qdq.collage", work / f"{a.name}_qdq.collage_outputs.npz"
    placement = ["--placement", a.placement] if a.placement else []
    subprocess.run([a.cli, "compile", str(qdq), "-o", str(art)] + placement, check=True)
    subprocess.run([a.cli, "run", str(art), "--inputs", str(work / f"{a.name}_qdq.inputs.npz"),
                    "--outputs", str(outs)], check=True)
    got = dict(np.load(outs))
    scales = output_scales(model)
    ok = True
    for name, ref in expected.items():
        step = scales.get(name)
        if step is None:
            print(f"{name}: no DequantizeLinear scale found", file=sys.stderr)
            return 1
        diff = np.abs(got[name].astype(np.float64) - ref) / step
        worst, share = float(np.max(diff)), float(np.mean(diff > 1e-3))
        print(f"{name}: {ref.shape}, largest difference {worst:.3f} quantization steps "
              f"(step {step:.3g}), {100 * share:.2f}% of elements differ")
        ok = ok and worst <= 1.0 + 1e-3
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
