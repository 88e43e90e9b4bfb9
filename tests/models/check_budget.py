"""A default (two-level) compile of a real model under a tiny time budget, with a fresh cost
database: it must finish within a generous bound of its budget, say which steps the budget cut,
and write an artifact whose outputs match ONNX Runtime's (the model cache's NAME.outputs.npz)
within RTOL. Then the same compile again with that cost database: it reuses the placement
(no kernel, evaluation or choice measured, the same groups) and writes an artifact with the same
outputs.

    check_budget.py BUILD_DIR NAME [--budget 2] [--rtol 5e-4] [--bound 90]

BOUND is seconds over the budget, far above the margin a compile normally needs: this is a test,
not a benchmark (bench/RESULTS.md has the figures). Runs in the project's .venv (numpy).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def compile_model(collage, model, artifact, budget, db, report):
    cmd = [str(c) for c in (collage, "compile", model, "-o", artifact, "--budget", budget,
                            "--cost-db", db, "--report", report)]
    print("$", " ".join(cmd), flush=True)
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    sys.stdout.write(r.stdout)
    if r.returncode:
        sys.stderr.write(r.stderr)
        raise SystemExit(f"collage compile failed (exit {r.returncode})")
    print(f"  ({wall:.1f} s)")
    return wall, json.loads(Path(report).read_text())


def run_artifact(collage, artifact, inputs, outputs):
    subprocess.run([str(c) for c in (collage, "run", artifact, "--inputs", inputs,
                                     "--outputs", outputs)], check=True, capture_output=True)
    return dict(np.load(outputs))


def max_error(outputs, expected):
    err = 0.0
    for name, want in expected.items():
        got = outputs[name]
        if got.shape != want.shape:
            return float("inf")
        scale = float(np.max(np.abs(want))) or 1.0
        err = max(err, float(np.max(np.abs(got.astype(np.float64) - want))) / scale)
    return err


def groups(report):
    return [(tuple(g["nodes"]), g["backend"]) for g in report["groups"]]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("build", type=Path)
    p.add_argument("name")
    p.add_argument("--budget", type=float, default=2)
    p.add_argument("--rtol", type=float, default=5e-4)
    p.add_argument("--bound", type=float, default=90)
    args = p.parse_args()
    cache = Path(os.environ.get("COLLAGE_MODEL_CACHE",
                                Path.home() / ".cache" / "collage" / "models"))
    model = cache / f"{args.name}.onnx"
    if not model.exists():
        raise SystemExit(f"missing {model}: run tests/models/build_models.sh")
    expected = dict(np.load(cache / f"{args.name}.outputs.npz"))
    collage = args.build / "bin" / "collage"
    ok = True
    with tempfile.TemporaryDirectory(prefix="collage-budget-") as tmp:
        tmp = Path(tmp)
        db = tmp / "costs.jsonl"
        inputs = cache / f"{args.name}.inputs.npz"
        cold_wall, cold = compile_model(collage, model, tmp / "cold.collage", args.budget, db,
                                        tmp / "cold.json")
        print(f"cold compile: {cold_wall:.1f} s for a {args.budget:g} s budget "
              f"(bound {args.budget + args.bound:g} s); cut: {cold['cut']}")
        ok &= cold_wall <= args.budget + args.bound
        # A budget this small cannot measure every candidate of a real model.
        ok &= any(c.startswith("measure:") for c in cold["cut"])
        err = max_error(run_artifact(collage, tmp / "cold.collage", inputs, tmp / "cold.npz"),
                        expected)
        print(f"cold artifact: max error vs ONNX Runtime {err:.3g} (rtol {args.rtol:g})")
        ok &= err <= args.rtol

        warm_wall, warm = compile_model(collage, model, tmp / "warm.collage", args.budget, db,
                                        tmp / "warm.json")
        same = groups(warm) == groups(cold)
        print(f"warm compile: {warm_wall:.1f} s, {warm['measured']} kernels measured, "
              f"{warm['evaluations']} evaluations, {warm['choices_measured']} choices measured, "
              f"placement {'the same' if same else 'DIFFERS'}")
        ok &= same and warm["measured"] == 0 and warm["evaluations"] == 0
        ok &= warm["choices_measured"] == 0
        err = max_error(run_artifact(collage, tmp / "warm.collage", inputs, tmp / "warm.npz"),
                        expected)
        print(f"warm artifact: max error vs ONNX Runtime {err:.3g}")
        ok &= err <= args.rtol
    print(f"{args.name} under a {args.budget:g} s budget: {'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
