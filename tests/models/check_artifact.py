"""One model, compiled by `collage compile -o` into an artifact, run three ways (the CLI, the C
example examples/c/classify.c and the Python ctypes module examples/python/collage.py): the
outputs must be identical, and match ONNX Runtime's (the model cache's NAME.outputs.npz) within
RTOL, measured as max|collage - ort| / max|ort|. The Python module also compiles the model itself
(collage_compile_file) and runs that artifact.

    check_artifact.py BUILD_DIR NAME [--placement greedy] [--rtol 1e-4] [--batch-range MIN..MAX]

A model exported with symbolic dimensions is compiled with its inputs' shapes (NAME.meta.json).
With --batch-range, the batch ("batch" in the model's dynamic axes) becomes that range: one
artifact runs every batch from MIN to MAX, checked against ONNX Runtime on inputs of each batch
(rows of the exported inputs, repeated as needed). The C example runs only models with one f32
input and one f32 output (its contract). Runs in the project's .venv (numpy, onnxruntime). Prints
each path's error and exits non-zero on a mismatch. Exits 77 (ctest's skip) when the model has an
operator that only the reference fallback runs and no backend named `native` (generated code,
which covers every operator) is registered.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


SKIP = 77
NO_RUNTIME_MODULE = re.compile(r"is placed on the reference backend.*\(taking part: ([^)]*)\)")


def run(cmd, **kw):
    print("$", " ".join(str(c) for c in cmd), flush=True)
    t0 = time.time()
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    sys.stdout.write(r.stdout)
    if r.returncode:
        sys.stderr.write(r.stderr)
        uncovered = NO_RUNTIME_MODULE.search(r.stderr)
        if uncovered and "native" not in uncovered.group(1).split(", "):
            print(f"skipped: a group is left to the reference backend (no runtime module) with "
                  f"{uncovered.group(1)} taking part; an artifact of this model needs the native "
                  f"backend")
            raise SystemExit(SKIP)
        raise SystemExit(f"failed (exit {r.returncode}): {cmd[0]}")
    print(f"  ({time.time() - t0:.1f} s)")
    return r.stdout


def scaled_error(actual, expected):
    if actual.shape != expected.shape:
        return float("inf")
    if expected.size == 0:
        return 0.0
    scale = float(np.max(np.abs(expected)))
    return float(np.max(np.abs(actual.astype(np.float64) - expected))) / (scale or 1.0)


def at_batch(arrays, batch):
    """The arrays with `batch` rows on axis 0: the first rows, repeated as needed."""
    return {n: np.ascontiguousarray(a[np.arange(batch) % a.shape[0]]) for n, a in arrays.items()}


def input_shapes(meta, batch_range):
    """--input-shape specs: every input with a symbolic dimension, at its exported shape, the
    batch axis as the range when one is given."""
    specs = {}
    for info in meta["inputs"]:
        axes = meta.get("dynamic_axes", {}).get(info["name"], {})
        if not axes:
            continue
        dims = [str(d) for d in info["shape"]]
        for axis, label in axes.items():
            if batch_range and label == "batch":
                dims[int(axis)] = batch_range
        specs[info["name"]] = "x".join(dims)
    return specs


def compare(label, outputs, expected, rtol):
    ok = True
    for name, want in expected.items():
        err = scaled_error(outputs[name], want)
        print(f"{label}: output '{name}' {list(outputs[name].shape)}, max error vs ONNX Runtime "
              f"{err:.3g} (rtol {rtol:g})")
        ok &= err <= rtol
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("build", type=Path)
    p.add_argument("name")
    p.add_argument("--placement", default="greedy")
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--batch-range", default="")
    args = p.parse_args()

    cache = Path(os.environ.get("COLLAGE_MODEL_CACHE",
                                Path.home() / ".cache" / "collage" / "models"))
    model = cache / f"{args.name}.onnx"
    if not model.exists():
        raise SystemExit(f"missing {model}: run tests/models/build_models.sh")
    meta = json.loads((cache / f"{args.name}.meta.json").read_text())
    inputs = dict(np.load(cache / f"{args.name}.inputs.npz"))
    expected = dict(np.load(cache / f"{args.name}.outputs.npz"))
    specs = input_shapes(meta, args.batch_range)
    shape_args = [a for n, s in specs.items() for a in ("--input-shape", f"{n}={s}")]

    collage = args.build / "bin" / "collage"
    lib_dir = args.build / "lib"
    env = dict(os.environ, COLLAGE_LIB_DIR=str(lib_dir),
               PYTHONPATH=str(ROOT / "examples" / "python"))
    ok = True
    with tempfile.TemporaryDirectory(prefix="collage-artifact-") as tmp:
        tmp = Path(tmp)
        artifact = tmp / f"{args.name}.collage"
        # Its own cost database: the test measures what it needs and leaves the user's alone.
        run([collage, "compile", model, "-o", artifact, "--placement", args.placement,
             "--budget", "5", "--cost-db", tmp / "costs.jsonl", "--no-compare", *shape_args])

        run([collage, "run", artifact, "--inputs", cache / f"{args.name}.inputs.npz",
             "--outputs", tmp / "cli.npz"])
        cli = dict(np.load(tmp / "cli.npz"))
        ok &= compare("CLI", cli, expected, args.rtol)

        # The Python module: the CLI's artifact (identical outputs), then its own compile.
        np.savez(tmp / "inputs.npz", **inputs)
        batch = args.batch_range.split("..") if args.batch_range else None
        script = (
            "import json, sys, numpy as np, collage\n"
            "names, shapes, batch = json.loads(sys.argv[4])\n"
            "x = np.load(sys.argv[2])\n"
            "with collage.Module(sys.argv[1]) as m:\n"
            "    out = m.run(*[x[i.name] for i in m.inputs])\n"
            "    np.savez(sys.argv[3] + '.cli', **{o.name: y for o, y in zip(m.outputs, out)})\n"
            "artifact, _ = collage.compile_model(sys.argv[5], strategy=sys.argv[6],\n"
            "    budget_seconds=5, cost_db=sys.argv[7], input_shapes=shapes,\n"
            "    batch_range=batch and tuple(map(int, batch)))\n"
            "with collage.Module(artifact) as m:\n"
            "    out = m.run(*[x[i.name] for i in m.inputs])\n"
            "    np.savez(sys.argv[3] + '.own', **{o.name: y for o, y in zip(m.outputs, out)})\n")
        c_api_shapes = {}
        for name, spec in specs.items():
            c_api_shapes[name] = [-1 if ".." in d else int(d) for d in spec.split("x")]
        run([sys.executable, "-c", script, artifact, tmp / "inputs.npz", tmp / "py",
             json.dumps([list(inputs), c_api_shapes, batch]), model, args.placement,
             tmp / "costs-py.jsonl"], env=env)
        py = dict(np.load(tmp / "py.cli.npz"))
        same = all(py[n].shape == cli[n].shape and np.array_equal(py[n], cli[n]) for n in cli)
        print(f"Python module: {'identical to' if same else 'DIFFERS from'} the CLI's outputs")
        ok &= same
        ok &= compare("Python, compiled through the C API", dict(np.load(tmp / "py.own.npz")),
                      expected, args.rtol)

        if len(inputs) == 1 and len(expected) == 1 and next(iter(inputs.values())).dtype == \
                np.float32 and next(iter(expected.values())).dtype == np.float32:
            np.save(tmp / "input.npy", next(iter(inputs.values())))
            run([args.build / "bin" / "collage_classify", artifact, tmp / "input.npy",
                 tmp / "c.npy"])
            c_out = np.load(tmp / "c.npy")
            (out_name,) = expected
            same = c_out.shape == cli[out_name].shape and np.array_equal(c_out, cli[out_name])
            print(f"C example: {'identical to' if same else 'DIFFERS from'} the CLI's output")
            ok &= same
        else:
            print("C example: skipped (it runs models with one f32 input and one f32 output)")

        if batch:
            import onnxruntime as ort
            options = ort.SessionOptions()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            session = ort.InferenceSession(str(model), options,
                                           providers=["CPUExecutionProvider"])
            low, high = int(batch[0]), int(batch[1])
            for b in sorted({low, high, (low + high) // 2 + 1}):
                feed = at_batch(inputs, b)
                np.savez(tmp / f"in{b}.npz", **feed)
                want = dict(zip([o.name for o in session.get_outputs()],
                                session.run(None, feed)))
                run([collage, "run", artifact, "--inputs", tmp / f"in{b}.npz", "--outputs",
                     tmp / f"out{b}.npz"])
                ok &= compare(f"CLI at batch {b}", dict(np.load(tmp / f"out{b}.npz")), want,
                              args.rtol)
    print(f"{args.name} ({args.placement}{', batch ' + args.batch_range if batch else ''}): "
          f"{'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
