"""One model, compiled by `collage compile -o` into an artifact, run three ways (the CLI, the C
example examples/c/classify.c and the Python ctypes module examples/python/collage.py): the three
outputs must be identical, and match ONNX Runtime's (the model cache's NAME.outputs.npz) within
RTOL, measured as max|collage - ort| / max|ort|.

    check_artifact.py BUILD_DIR NAME [--placement greedy] [--rtol 1e-4]

Runs in the project's .venv (numpy). The model must have one f32 input and one f32 output (the C
example's contract). Prints each path's error and exits non-zero on a mismatch. Exits 77 (ctest's
skip) when the model has an operator that only the reference fallback runs and no backend named
`native` (generated code, which covers every operator) is registered.
"""

import argparse
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
    scale = float(np.max(np.abs(expected)))
    return float(np.max(np.abs(actual.astype(np.float64) - expected))) / (scale or 1.0)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("build", type=Path)
    p.add_argument("name")
    p.add_argument("--placement", default="greedy")
    p.add_argument("--rtol", type=float, default=1e-4)
    args = p.parse_args()

    cache = Path(os.environ.get("COLLAGE_MODEL_CACHE",
                                Path.home() / ".cache" / "collage" / "models"))
    model = cache / f"{args.name}.onnx"
    if not model.exists():
        raise SystemExit(f"missing {model}: run tests/models/build_models.sh")
    inputs = dict(np.load(cache / f"{args.name}.inputs.npz"))
    expected = dict(np.load(cache / f"{args.name}.outputs.npz"))
    if len(inputs) != 1 or len(expected) != 1:
        raise SystemExit(f"{args.name}: the C example needs one input and one output")
    (in_name, x), = inputs.items()
    (out_name, ort), = expected.items()

    collage = args.build / "bin" / "collage"
    lib_dir = args.build / "lib"
    with tempfile.TemporaryDirectory(prefix="collage-artifact-") as tmp:
        tmp = Path(tmp)
        artifact = tmp / f"{args.name}.collage"
        # Its own cost database: the test measures what it needs and leaves the user's alone.
        run([collage, "compile", model, "-o", artifact, "--placement", args.placement,
             "--budget", "5", "--cost-db", tmp / "costs.jsonl", "--no-compare"])

        np.save(tmp / "input.npy", np.ascontiguousarray(x, dtype=np.float32))
        run([collage, "run", artifact, "--inputs", cache / f"{args.name}.inputs.npz",
             "--outputs", tmp / "cli.npz"])
        cli = np.load(tmp / "cli.npz")[out_name]
        run([args.build / "bin" / "collage_classify", artifact, tmp / "input.npy", tmp / "c.npy"])
        c_out = np.load(tmp / "c.npy")

        env = dict(os.environ, COLLAGE_LIB_DIR=str(lib_dir))
        script = ("import sys, numpy as np, collage\n"
                  "with collage.Module(sys.argv[1]) as m:\n"
                  "    (y,) = m.run(np.load(sys.argv[2]))\n"
                  "np.save(sys.argv[3], y)\n")
        run([sys.executable, "-c", script, artifact, tmp / "input.npy", tmp / "py.npy"],
            env=dict(env, PYTHONPATH=str(ROOT / "examples" / "python")))
        py_out = np.load(tmp / "py.npy")

    ok = True
    for what, y in (("C example", c_out), ("Python module", py_out)):
        same = y.shape == cli.shape and y.dtype == cli.dtype and np.array_equal(y, cli)
        print(f"{what}: {'identical to' if same else 'DIFFERS from'} the CLI's output")
        ok &= same
    err = scaled_error(cli, ort)
    print(f"{args.name} ({args.placement}): output '{out_name}' {list(cli.shape)}, "
          f"max error vs ONNX Runtime {err:.3g} (rtol {args.rtol:g})")
    ok &= err <= args.rtol
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
