"""A peer runtime timed on request, for bench/models/model_bench and artifact_bench: loads one
model in ONNX Runtime or OpenVINO, then for each line "N" read from stdin runs it N times and
answers one line: the N wall times in milliseconds, ";", and the N CPU times of the whole process
(every thread of the runtime's, spinning included) in milliseconds.

    peer_server.py MODEL.onnx INPUTS.npz [--runtime onnxruntime|openvino] [--threads 2]
                   [--outputs OUT.npz]

ONNX Runtime runs on the CPU with all graph optimisations, --threads intra-op threads and one
inter-op thread; OpenVINO on its CPU plugin with --threads inference threads, the latency hint,
f32 precision and its threads not pinned to cores (as collage's openvino backend compiles). --outputs writes the model's outputs (by output name) once, after the
warm-up. It prints "ready" once the model is compiled and warmed up; an empty line or end of
input ends it. Runs in the project's .venv (numpy, onnxruntime, openvino).
"""
import argparse
import sys
import time

import numpy as np


def onnxruntime_runner(model, feed, threads):
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return lambda: dict(zip(names, sess.run(None, feed)))


def openvino_runner(model, feed, threads):
    import openvino as ov
    compiled = ov.Core().compile_model(model, "CPU", {
        "INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY",
        "INFERENCE_PRECISION_HINT": "f32", "ENABLE_CPU_PINNING": False})
    request = compiled.create_infer_request()
    names = [o.get_any_name() for o in compiled.outputs]

    def run():
        results = request.infer(feed)
        return {n: np.array(results[o]) for n, o in zip(names, compiled.outputs)}
    return run


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("inputs")
    p.add_argument("--runtime", choices=["onnxruntime", "openvino"], default="onnxruntime")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--outputs", default="")
    args = p.parse_args()
    feed = dict(np.load(args.inputs))
    make = onnxruntime_runner if args.runtime == "onnxruntime" else openvino_runner
    run = make(args.model, feed, args.threads)
    for _ in range(2):  # the first runs allocate and page the weights in
        outputs = run()
    if args.outputs:
        np.savez(args.outputs, **outputs)
    print("ready", flush=True)
    for line in sys.stdin:
        if not line.strip():
            break
        wall, cpu = [], []
        for _ in range(int(line)):
            c0, t0 = time.process_time(), time.perf_counter()
            run()
            t1, c1 = time.perf_counter(), time.process_time()
            wall.append((t1 - t0) * 1e3)
            cpu.append((c1 - c0) * 1e3)
        print(" ".join(f"{t:.4f}" for t in wall), ";", " ".join(f"{t:.4f}" for t in cpu),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
