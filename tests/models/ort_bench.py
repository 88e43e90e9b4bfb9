"""Times ONNX Runtime on a model, interleaved with a collage command, and prints both and the ratio.

Usage (inside the project's .venv):
  ort_bench.py MODEL.onnx [--inputs NAME.inputs.npz] [--threads 2] [--rounds 3] [--repeat 5]
               [-- COLLAGE COMMAND...]

Each round runs the collage command once (which times its own --repeat runs and prints a line
containing "median <number> ms"), then ONNX Runtime --repeat times, so drift on a shared machine
affects both alike. The first round shows the command's whole output, later rounds only its
median. Without a collage command, only ONNX Runtime is timed. ONNX Runtime runs with all graph
optimisations and --threads intra-op threads. Exit status 1 when the collage command fails or
prints no median.
"""
import argparse
import re
import statistics
import subprocess
import sys
import time

import numpy as np
import onnxruntime as ort

MEDIAN = re.compile(r"median\D*?(\d+(?:\.\d+)?)\s*ms", re.IGNORECASE)
ORT_TYPES = {"tensor(float)": np.float32, "tensor(int64)": np.int64, "tensor(int32)": np.int32}


def ort_session(model: str, threads: int) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])


def feeds(sess: ort.InferenceSession, inputs_npz: str):
    if inputs_npz:
        return dict(np.load(inputs_npz))
    rng = np.random.default_rng(0)
    return {i.name: rng.uniform(0, 1, i.shape).astype(ORT_TYPES[i.type])
            for i in sess.get_inputs()}


def collage_median(command, show_output: bool) -> float:
    run = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if show_output or run.returncode != 0:
        print(run.stdout, end="", flush=True)
    if run.returncode != 0:
        raise SystemExit(f"ort_bench: '{' '.join(command)}' failed with exit status "
                         f"{run.returncode}")
    found = MEDIAN.findall(run.stdout)
    if not found:
        raise SystemExit(f"ort_bench: no 'median <number> ms' in the output of "
                         f"'{' '.join(command)}'")
    return float(found[-1])


def main(argv) -> int:
    split = argv.index("--") if "--" in argv else len(argv)
    command = argv[split + 1:]
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog="-- COMMAND...: the collage command to interleave with ONNX Runtime")
    parser.add_argument("model")
    parser.add_argument("--inputs", default="", help="npz of inputs (default: random)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv[:split])

    sess = ort_session(args.model, args.threads)
    data = feeds(sess, args.inputs)
    for _ in range(3):  # warm-up: first runs allocate and page in the weights
        sess.run(None, data)

    ort_ms, collage_ms = [], []
    for r in range(args.rounds):
        if command:
            collage_ms.append(collage_median(command, show_output=(r == 0)))
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            sess.run(None, data)
            ort_ms.append((time.perf_counter() - t0) * 1e3)
        round_note = f"collage {collage_ms[-1]:.2f} ms, " if command else ""
        print(f"round {r + 1}/{args.rounds}: {round_note}ONNX Runtime median "
              f"{statistics.median(ort_ms[-args.repeat:]):.2f} ms", flush=True)

    ort_median = statistics.median(ort_ms)
    print(f"ONNX Runtime {ort.__version__} ({args.threads} threads): median {ort_median:.2f} ms "
          f"over {len(ort_ms)} runs")
    if command:
        ours = statistics.median(collage_ms)
        print(f"collage: median {ours:.2f} ms over {len(collage_ms)} rounds")
        print(f"collage / ONNX Runtime = {ours / ort_median:.2f} (below 1: collage is faster)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
