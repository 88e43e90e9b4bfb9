"""Compile time under the default budget (issue 18 item 5): each model compiled by `collage
compile` with a fresh cost database (cold), then again with it (warm), and a third time when the
second still measured something; a Markdown table of wall times, CPU time, the steps the budget
cut, the OpenVINO regions compiled (by the artifact build among them) and reused, what was measured, and whether the warm compile kept the placement and the artifact's bytes.

    bench/python/compile_budget.py BUILD_DIR [MODEL ...] [--budget S] [--out DIR] [--target avx2]

Models default to bench/models' set (the 14 full-size models of tests/models/README.md), read
from the model cache. `--target avx2` compiles for the AVX2 target with oneDNN capped at AVX2
(ONEDNN_MAX_CPU_ISA / DNNL_MAX_CPU_ISA in the compiles' environment). Prints the load average before each compile: on a shared machine the wall
times scale with it. Runs in the project's .venv.
"""

import argparse
import filecmp
import json
import os
import resource
import shutil
import subprocess
import time
from pathlib import Path

BENCH_SET = ["resnet50", "mobilenetv2", "resnext50", "googlenet", "inceptionv3", "dcgan", "bert",
             "squeezenet", "efficientnet_b0", "regnet_y_400mf", "densenet121", "convnext_tiny",
             "vit_b_16", "gpt2"]


def compile_once(collage, model, out, tag, budget, shapes, target):
    report = out / f"{model.stem}.{tag}.json"
    cmd = [str(collage), "compile", str(model), "-o", str(out / f"{model.stem}.{tag}.collage"),
           "--cost-db", str(out / f"db-{model.stem}" / "cost-db.jsonl"), "--report", str(report)]
    if budget:
        cmd += ["--budget", str(budget)]
    env = dict(os.environ)
    if target:
        cmd += ["--target", target]
        if target == "avx2":
            env.update(ONEDNN_MAX_CPU_ISA="AVX2", DNNL_MAX_CPU_ISA="AVX2")
    for name, shape in shapes.items():
        cmd += ["--input-shape", f"{name}={shape}"]
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    (out / f"{model.stem}.{tag}.log").write_text(" ".join(cmd) + "\n" + r.stdout + r.stderr)
    if r.returncode:
        return {"wall": wall, "load": load, "error": r.stderr.strip().splitlines()[-1:]}
    j = json.loads(report.read_text())
    return {"wall": wall, "load": load, "cpu": after.ru_utime - before.ru_utime, "report": j,
            "groups": [(tuple(g["nodes"]), g["backend"]) for g in j["groups"]]}


def symbolic_shapes(cache, name):
    """--input-shape for inputs exported with symbolic dimensions (their exported shape)."""
    meta = json.loads((cache / f"{name}.meta.json").read_text())
    return {i["name"]: "x".join(str(d) for d in i["shape"]) for i in meta["inputs"]
            if meta.get("dynamic_axes", {}).get(i["name"])}


def builds(report):
    """The report's builds_s as 'STEP: BACKEND N/S s, ...; ...'."""
    return "; ".join(f"{step}: " + ", ".join(f"{b} {n}/{t:.1f} s" for b, (n, t) in by.items())
                     for step, by in report.get("builds_s", {}).items())


def cell(r):
    if "error" in r:
        return f"failed: {r['error']}"
    return f"{r['wall']:.1f} s ({r['cpu']:.1f} s CPU, load {r['load']:.1f})"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("build", type=Path)
    p.add_argument("models", nargs="*", default=BENCH_SET)
    p.add_argument("--budget", type=float, default=0, help="seconds (0: the default)")
    p.add_argument("--out", type=Path, default=Path("/tmp/collage-compile-budget"))
    p.add_argument("--target", default="", help="collage compile --target (avx2: oneDNN capped too)")
    args = p.parse_args()
    cache = Path(os.environ.get("COLLAGE_MODEL_CACHE",
                                Path.home() / ".cache" / "collage" / "models"))
    collage = args.build / "bin" / "collage"
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in args.models:
        model = cache / f"{name}.onnx"
        shutil.rmtree(args.out / f"db-{name}", ignore_errors=True)
        shapes = symbolic_shapes(cache, name)
        runs = [compile_once(collage, model, args.out, "cold", args.budget, shapes, args.target)]
        runs.append(compile_once(collage, model, args.out, "warm", args.budget, shapes,
                                 args.target))
        if "report" in runs[1] and (runs[1]["report"]["measured"] or
                                    runs[1]["report"]["choices_measured"]):
            runs.append(compile_once(collage, model, args.out, "warm2", args.budget, shapes,
                                     args.target))
        cold, warm = runs[0], runs[-1]
        same = "report" in cold and "report" in warm and cold["groups"] == warm["groups"]
        identical = filecmp.cmp(args.out / f"{name}.cold.collage",
                                args.out / f"{name}.{['cold', 'warm', 'warm2'][len(runs) - 1]}"
                                                    ".collage", shallow=False) \
            if same else False
        cut = "; ".join(cold["report"]["cut"]) if "report" in cold else ""
        phases = ", ".join(f"{k} {v:.1f}" for k, v in cold["report"]["phases_s"].items()) \
            if "report" in cold else ""
        regions = ("{kernels_built} / {kernels_built_by_build} / {kernels_reused}"
                   .format(**cold["report"]) if "report" in cold else "")
        built = builds(cold["report"]) if "report" in cold else ""
        row = (f"| {name} | {cell(cold)} | {phases} | {built} | {regions} | {cut or 'none'} | "
               + " / ".join(cell(r) for r in runs[1:])
               + f" | {'same' if same else 'DIFFERS'}{', same bytes' if identical else ''} |")
        print(row, flush=True)
        rows.append(row)
    print("\n| model | cold wall (CPU, load) | cold phases, s | cold kernels built, by step: backend "
          "builds/s | cold regions compiled / by the build / reused | cut by the budget | warm "
          "wall (then a third compile when the second measured) | placement |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
