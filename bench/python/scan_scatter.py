"""CumSum and ScatterND at the sizes of real models (a decoder's position ids over 2,048 tokens, a
cumulative sum over 8 x 4,096 x 64, 1,000 rows scattered into a 50,000 x 64 table): the `dynamic`
module's linear-time kernels (after), native's tensor expressions, quadratic (before; artifacts
compiled with --backends native), and ONNX Runtime (CPU, 2 threads, in process), alternating the
contenders round by round; prints each one's median of the per-round medians, the smallest
single run (the machine is shared: the minimum says more about the kernel than a loaded median)
and the ratios. Not a test.

    .venv/bin/python bench/python/scan_scatter.py BUILD_DIR [--rounds 5] [--repeat 20] [--match S]
"""
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

from single_op_bench import (bench_parser, collage_and_env, collage_times, ort_session,
                             ort_times)

rng = np.random.default_rng(3)


def model(op, x, inits, inputs, attrs=None):
    """One node over graph input x (its dtype and shape) and constants `inits`; y is x's type."""
    elem = helper.np_dtype_to_tensor_dtype(x.dtype)
    node = helper.make_node(op, ["x"] + inputs, ["y"], name=op.lower(), **(attrs or {}))
    graph = helper.make_graph(
        [node], op, [helper.make_tensor_value_info("x", elem, x.shape)],
        [helper.make_tensor_value_info("y", elem, x.shape)],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 9
    onnx.checker.check_model(m)
    return m


def cumsum(x, axis, **attrs):
    return model("CumSum", x, {"axis": np.array(axis, np.int64)}, ["axis"], attrs)


def cases():
    ids = np.ones([1, 2048], np.int64)
    hidden = rng.standard_normal([8, 4096, 64]).astype(np.float32)
    table = rng.standard_normal([50000, 64]).astype(np.float32)
    rows = rng.choice(50000, 1000, replace=False).reshape(1000, 1).astype(np.int64)
    scatter = model("ScatterND", table,
                    {"indices": rows, "updates": rng.standard_normal([1000, 64]).astype(np.float32)},
                    ["indices", "updates"])
    # (name, model, input, native's repeat: the quadratic kernels take seconds at these sizes)
    return [
        ("CumSum i64 [1, 2048] axis 1 (position ids)", cumsum(ids, 1), ids, None),
        ("CumSum f32 [8, 4096, 64] axis 1", cumsum(hidden, 1), hidden, 2),
        ("CumSum f32 [8, 4096, 64] axis 1, exclusive reverse",
         cumsum(hidden, 1, exclusive=1, reverse=1), hidden, 2),
        ("ScatterND f32 1,000 rows into [50000, 64]", scatter, table, 2),
    ]


def main():
    p = bench_parser(__doc__)
    p.add_argument("--match", default="", help="run only the cases whose name contains this")
    args = p.parse_args()
    collage, env = collage_and_env(args.build)
    print(f"load average {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name, m, x, slow_repeat in cases():
            if args.match not in name:
                continue
            path = tmp / "m.onnx"
            onnx.save(m, path)
            np.savez(tmp / "in.npz", x=x)
            for backend in ("dynamic", "native"):
                subprocess.run([str(collage), "compile", path, "-o", tmp / f"{backend}.collage",
                                "--backends", backend, "--no-cost-db"], check=True,
                               capture_output=True, env=env)
            sess = ort_session(path)
            times = {"dynamic": [], "native": [], "ort": []}
            mins = {"dynamic": [], "native": [], "ort": []}
            for _ in range(args.rounds):
                for backend in ("dynamic", "native"):
                    repeat = slow_repeat if backend == "native" and slow_repeat else args.repeat
                    med, low = collage_times(
                        [collage, "run", tmp / f"{backend}.collage", "--inputs", tmp / "in.npz",
                         "--repeat", repeat, "--warmup", 1 if repeat < 5 else 3], env)
                    times[backend].append(med)
                    mins[backend].append(low)
                ts = ort_times(sess, x, args.repeat)
                times["ort"].append(statistics.median(ts))
                mins["ort"].append(min(ts))
            med = {k: statistics.median(v) for k, v in times.items()}
            low = {k: min(v) for k, v in mins.items()}
            print(f"{name}: dynamic (after) {med['dynamic']:.3f} ms (min {low['dynamic']:.3f}), "
                  f"native (before) {med['native']:.3f} ms (min {low['native']:.3f}), ORT "
                  f"{med['ort']:.3f} ms (min {low['ort']:.3f}); medians before / after "
                  f"{med['native'] / med['dynamic']:.1f}x, after / ORT "
                  f"{med['dynamic'] / med['ort']:.2f}; minimums after / ORT "
                  f"{low['dynamic'] / low['ort']:.2f}")
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
