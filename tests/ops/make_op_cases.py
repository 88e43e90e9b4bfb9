"""Writes every single-operator case with ONNX Runtime's reference outputs.

Usage: make_op_cases.py OUT_DIR   (run inside the project's .venv)
"""
import importlib
import pathlib
import sys

import numpy as np
import onnx
import onnxruntime as ort

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

MODULES = ["cases_nn", "cases_elementwise", "cases_reduction", "cases_tensor",
           "cases_data_dependent", "cases_runtime_inputs", "cases_sorting",
           "cases_strings", "cases_scan8"]


def savable(arrays):
    """String arrays (ONNX Runtime's are of dtype object) as fixed-width unicode, which .npz
    holds without pickling."""
    return {n: a.astype(str) if a.dtype == object else a for n, a in arrays.items()}


def main() -> int:
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    seen = set()
    count = 0
    for mod_name in MODULES:
        if not (HERE / f"{mod_name}.py").exists():
            continue
        mod = importlib.import_module(mod_name)
        for case in mod.cases():
            assert case.name not in seen, f"duplicate case name {case.name}"
            seen.add(case.name)
            model = case.model()
            onnx.checker.check_model(model)
            opts = ort.SessionOptions()
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            sess = ort.InferenceSession(model.SerializeToString(), opts,
                                        providers=["CPUExecutionProvider"])
            results = sess.run(None, case.inputs)
            onnx.save(model, out / f"{case.name}.onnx")
            np.savez(out / f"{case.name}.inputs.npz", **savable(case.inputs))
            np.savez(out / f"{case.name}.outputs.npz",
                     **savable({o.name: r for o, r in zip(sess.get_outputs(), results)}))
            (out / f"{case.name}.rtol").write_text(f"{case.rtol}\n")
            count += 1
    print(f"wrote {count} operator cases to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
