"""Shared by the single-operator benchmarks (quant_kernels.py, qdq_kernels.py): one model with
one input `x`, compiled for one backend and run by `collage run`, the reference executor, and ONNX
Runtime (CPU, 2 threads, in process), alternated round by round; medians of per-round medians."""
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


def collage_median(cmd, env):
    out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env,
                         check=True).stdout
    return float(re.search(r"median ([0-9.]+) ms", out).group(1))


def run(doc, backend, cases, ref_repeat, ref_warmup):
    """Parses BUILD --rounds --repeat, times every (name, model, x) of `cases` and prints a line
    per case: `backend`'s median, the reference's and ORT's, and the ratios."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("build")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--target", default="host",
                   help="collage compile --target: host, avx2 or avx512 (generated code's ISA)")
    args = p.parse_args()
    collage = Path(args.build) / "bin" / "collage"
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
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
            so = ort.SessionOptions()
            so.intra_op_num_threads = 2
            sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
            times = {backend: [], "reference": [], "ort": []}
            for _ in range(args.rounds):
                times[backend].append(collage_median(
                    [collage, "run", tmp / "m.collage", "--inputs", tmp / "in.npz", "--repeat",
                     args.repeat, "--warmup", 3], env))
                times["reference"].append(collage_median(
                    [collage, "run", path, "--placement", "reference", "--inputs",
                     tmp / "in.npz", "--repeat", ref_repeat, "--warmup", ref_warmup], env))
                for _ in range(3):
                    sess.run(None, {"x": x})
                ts = []
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    sess.run(None, {"x": x})
                    ts.append((time.perf_counter() - t0) * 1e3)
                times["ort"].append(statistics.median(ts))
            med = {k: statistics.median(v) for k, v in times.items()}
            print(f"{name}: {backend} {med[backend]:.3f} ms, reference {med['reference']:.2f} ms, "
                  f"ORT {med['ort']:.3f} ms; reference / {backend} "
                  f"{med['reference'] / med[backend]:.0f}x, {backend} / ORT "
                  f"{med[backend] / med['ort']:.2f}")
    print(f"load average {os.getloadavg()}")
