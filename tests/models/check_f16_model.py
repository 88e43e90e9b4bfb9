"""A real transformer in float16: a model of the cache (bert_small by default) converted with ONNX
Runtime's float16 utility (onnxruntime.transformers.float16, every float tensor f16, the graph's
inputs and outputs kept f32 behind Casts), compiled by `collage compile` under the default
placement and run by `collage run`, against ONNX Runtime on the same f16 model.

collage computes ONNX's meaning: every node's f16 output rounded to f16. ONNX Runtime's CPU
provider runs the nodes it has no f16 kernel for in f32 behind inserted Casts and drops the Casts
between such nodes, so it rounds less often (its f16 outputs are within about 1e-3 of its f32
ones). The two are not bit-identical: the check is that the largest difference is within
TOLERANCE of the output's largest magnitude, a few f16 steps (a step at 1 is 2^-10, about 1e-3),
and that every MatMul ran on a fast backend. ONNX Runtime's f16 against its f32 model is printed
beside, for scale. Measured (bert_small): collage 1.81e-3 from ONNX Runtime, exactly what ONNX's
own per-node evaluator (onnx.reference, numpy) is from it; ONNX Runtime f16 against f32 8.3e-4.

    check_f16_model.py BUILD_DIR [NAME]   (the cache: $COLLAGE_MODEL_CACHE or
                                           ~/.cache/collage/models; exits 77 without the model)
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnxruntime.transformers.float16 import convert_float_to_float16

TOLERANCE = 5e-3
SKIP = 77


def run(cmd):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r.stdout


def ort_outputs(path, inputs):
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, inputs)))


def main():
    build = Path(sys.argv[1])
    name = sys.argv[2] if len(sys.argv) > 2 else "bert_small"
    cache = Path(os.environ.get("COLLAGE_MODEL_CACHE",
                                Path.home() / ".cache" / "collage" / "models"))
    source = cache / f"{name}.onnx"
    if not source.exists():
        print(f"{source} is missing: tests/models/build_models.sh --small makes it")
        sys.exit(SKIP)
    inputs = dict(np.load(cache / f"{name}.inputs.npz"))
    collage = build / "bin" / "collage"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model = convert_float_to_float16(onnx.load(source), keep_io_types=True)
        f16 = tmp / f"{name}_f16.onnx"
        onnx.save(model, f16)
        np.savez(tmp / "in.npz", **inputs)
        expected = ort_outputs(f16, inputs)
        reference32 = ort_outputs(source, inputs)
        run([collage, "compile", f16, "-o", tmp / "m.collage", "--no-cost-db", "--budget", "30",
             "--report", tmp / "report.json"])
        run([collage, "run", tmp / "m.collage", "--inputs", tmp / "in.npz",
             "--outputs", tmp / "out.npz"])
        got = dict(np.load(tmp / "out.npz"))
        report = json.loads((tmp / "report.json").read_text())
        groups = report.get("groups") or report.get("placement", {}).get("groups", [])
        ops = {n.name: n.op_type for n in model.graph.node}
        fast = ("native", "dnnl", "eigen", "openvino")
        slow = [(n, g.get("backend")) for g in groups for n in g.get("nodes", [])
                if ops.get(n) == "MatMul" and g.get("backend") not in fast]
        failed = []
        for out, want in expected.items():
            have = got[out].astype(np.float64)
            want = want.astype(np.float64)
            scale = float(np.max(np.abs(want)))
            err = float(np.max(np.abs(have - want))) / scale
            err32 = float(np.max(np.abs(want - reference32[out].astype(np.float64)))) / scale
            print(f"{name} f16 {out}: largest |collage - ORT| / max|ORT| = {err:.2e} "
                  f"(ORT f16 against ORT f32: {err32:.2e}; tolerance {TOLERANCE:.0e})")
            if not err <= TOLERANCE:
                failed.append(out)
        if slow:
            sys.exit(f"MatMul nodes not on a fast backend: {slow[:5]}")
        if failed:
            sys.exit(f"{name} f16: outputs {failed} differ from ONNX Runtime beyond {TOLERANCE}")
        print(f"{name} f16: {len(groups)} groups, within {TOLERANCE} of ONNX Runtime")


if __name__ == "__main__":
    main()
