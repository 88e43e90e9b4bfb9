"""Shared by the single-operator benchmarks (quant_kernels.py, qdq_kernels.py; scan_scatter.py
takes its timing helpers): one model with one input `x`, compiled for one backend and run by
`collage run`, the reference executor, and ONNX Runtime (CPU, 2 threads, in process), alternated
round by round; medians of per-round medians."""
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


def collage_times(cmd, env):
    """`collage run ... --repeat N`'s median and min in ms."""
    out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env,
                         check=True).stdout
    m = re.search(r"median ([0-9.]+) ms over [0-9]+ runs \(min ([0-9.]+)", out)
    return float(m.group(1)), float(m.group(2))


def ort_session(path):
    """ONNX Runtime on the CPU with 2 threads, as every bench here compares with."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def ort_times(sess, x, repeat):
    """Times in ms of `repeat` runs of `sess` on input x, after 3 warm-up runs."""
    for _ in range(3):
        sess.run(None, {"x": x})
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        sess.run(None, {"x": x})
        ts.append((time.perf_counter() - t0) * 1e3)
    return ts


def bench_parser(doc):
    """The options of every bench here: BUILD (the build folder), --rounds, --repeat."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("build")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeat", type=int, default=20)
    return p


def collage_and_env(build):
    """The `collage` binary of build folder `build` and the environment to run it in."""
    return Path(build) / "bin" / "collage", dict(os.environ, OMP_WAIT_POLICY="passive")


def run(doc, backend, cases, ref_repeat, ref_warmup):
    """Parses BUILD --rounds --repeat, times every (name, model, x) of `cases` and prints a line
    per case: `backend`'s median, the reference's and ORT's, and the ratios."""
    p = bench_parser(doc)
    p.add_argument("--target", default="host",
                   help="collage compile --target: host, avx2 or avx512 (generated code's ISA)")
    args = p.parse_args()
    collage, env = collage_and_env(args.build)
    print(f"load average {os.getloadavg()}, target {args.target}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name, m, x in cases:
            path = tmp / "m.onnx"
            onnx.save(m, path)
            np.savez(tmp / "in.npz", x=x)
            subprocess.run([str(collage), "compile", path, "-o", tmp / "m.collage", "--backends",
                            backend, "--no-cost-db", "--target", args.target], check=True,
                           capture_output=True, env=env)
            sess = ort_session(path)
            times = {backend: [], "reference": [], "ort": []}
            for _ in range(args.rounds):
                times[backend].append(collage_times(
                    [collage, "run", tmp / "m.collage", "--inputs", tmp / "in.npz", "--repeat",
                     args.repeat, "--warmup", 3], env)[0])
                times["reference"].append(collage_times(
                    [collage, "run", path, "--placement", "reference", "--inputs",
                     tmp / "in.npz", "--repeat", ref_repeat, "--warmup", ref_warmup], env)[0])
                times["ort"].append(statistics.median(ort_times(sess, x, args.repeat)))
            med = {k: statistics.median(v) for k, v in times.items()}
            print(f"{name}: {backend} {med[backend]:.3f} ms, reference {med['reference']:.2f} ms, "
                  f"ORT {med['ort']:.3f} ms; reference / {backend} "
                  f"{med['reference'] / med[backend]:.0f}x, {backend} / ORT "
                  f"{med[backend] / med['ort']:.2f}")
    print(f"load average {os.getloadavg()}")
