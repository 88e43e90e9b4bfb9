"""Computes ONNX Runtime's outputs for exported test models: NAME.outputs.npz, keyed by output name.

Usage (inside the project's .venv): make_references.py CACHE_DIR NAME...

ONNX Runtime runs with every graph optimisation disabled, so the reference is the operators'
plain semantics rather than ORT's fused kernels. Each reference is also checked against the
outputs torch computed at export time (NAME.torch_outputs.npz) with the measure the C++ test
uses, max|ORT - torch| / max|torch| <= rtol: a mismatch means the exporter produced a graph that
does not compute the torch model, or a tolerance too tight for two correct implementations.
"""
import json
import pathlib
import sys

import numpy as np
import onnxruntime as ort


def reference(cache: pathlib.Path, name: str) -> str:
    meta = json.loads((cache / f"{name}.meta.json").read_text())
    inputs = dict(np.load(cache / f"{name}.inputs.npz"))
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(str(cache / meta["onnx"]), opts,
                                providers=["CPUExecutionProvider"])
    results = dict(zip((o.name for o in sess.get_outputs()), sess.run(None, inputs)))
    torch_outputs = np.load(cache / f"{name}.torch_outputs.npz")
    worst = 0.0
    for out_name, ref in results.items():
        expected = torch_outputs[out_name]
        if ref.shape != expected.shape:
            raise SystemExit(f"{name}: output {out_name} has shape {ref.shape} in ONNX Runtime, "
                             f"{expected.shape} in torch")
        diff = np.max(np.abs(ref.astype(np.float64) - expected)) / np.max(np.abs(expected))
        worst = max(worst, float(diff))
    if not worst <= meta["rtol"]:  # also catches NaN
        raise SystemExit(f"{name}: ONNX Runtime differs from torch by {worst:.2e} of the output's "
                         f"scale, more than rtol {meta['rtol']}")
    np.savez(cache / f"{name}.outputs.npz", **results)
    return f"{name}: ONNX Runtime vs torch {worst:.1e} (rtol {meta['rtol']})"


def main(argv) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cache = pathlib.Path(argv[0])
    for name in argv[1:]:
        print(reference(cache, name), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
