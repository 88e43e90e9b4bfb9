"""ONNX Runtime timed on request, for bench/models/model_bench: loads one model, then for each line
"N" read from stdin runs it N times and answers one line with the N wall times in milliseconds.

    ort_server.py MODEL.onnx INPUTS.npz [--threads 2]

ONNX Runtime runs on the CPU with all graph optimisations, --threads intra-op threads and one
inter-op thread. It prints "ready" once the session is made and warmed up; an empty line or end
of input ends it. Runs in the project's .venv (numpy, onnxruntime).
"""
import argparse
import sys
import time

import numpy as np
import onnxruntime as ort


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("inputs")
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.intra_op_num_threads = args.threads
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(args.model, opts, providers=["CPUExecutionProvider"])
    feed = dict(np.load(args.inputs))
    for _ in range(2):  # the first runs allocate and page the weights in
        sess.run(None, feed)
    print("ready", flush=True)
    for line in sys.stdin:
        if not line.strip():
            break
        times = []
        for _ in range(int(line)):
            t0 = time.perf_counter()
            sess.run(None, feed)
            times.append((time.perf_counter() - t0) * 1e3)
        print(" ".join(f"{t:.4f}" for t in times), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
