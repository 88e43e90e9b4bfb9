"""Times ONNX Runtime and OpenVINO on a model, interleaved with a collage command, and prints all three and the ratios.

Usage (inside the project's .venv):
  ort_bench.py MODEL.onnx [--inputs NAME.inputs.npz] [--threads 2] [--rounds 3] [--repeat 5]
               [-- COLLAGE COMMAND...]

Each round runs the collage command once (which times its own --repeat runs and prints a line
containing "median <number> ms"), then ONNX Runtime --repeat times, then OpenVINO --repeat times,
so drift on a shared machine affects them alike; a pause of 0.1 s after each lets the thread
teams that spin after their work (ONNX Runtime's, OpenVINO's TBB workers) go to sleep first. The
first round shows the command's whole output, later rounds only its median. Without a collage
command, only the peers are timed. ONNX Runtime runs with all graph optimisations and --threads
intra-op threads; OpenVINO on its CPU plugin with --threads threads, the latency hint, f32 and
its threads not pinned to cores, as collage's openvino backend compiles (pinned, OpenVINO's
default, it ran 1.5x slower on the loaded 2-core machine: bench/RESULTS.md); --no-openvino
leaves it out. The last line is collage's ratio to ONNX Runtime. Exit status 1
when the collage command fails or prints no median.
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


def openvino_request(model: str, threads: int):
    import openvino as ov
    compiled = ov.Core().compile_model(model, "CPU", {
        "INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY",
        "INFERENCE_PRECISION_HINT": "f32", "ENABLE_CPU_PINNING": False})
    return compiled.create_infer_request(), ov.get_version()


def timed(fn, repeat: int):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    time.sleep(0.1)
    return times


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
    parser.add_argument("--no-openvino", action="store_true", help="time ONNX Runtime only")
    args = parser.parse_args(argv[:split])

    sess = ort_session(args.model, args.threads)
    data = feeds(sess, args.inputs)
    for _ in range(3):  # warm-up: first runs allocate and page in the weights
        sess.run(None, data)

    ov_request = None
    if not args.no_openvino:
        ov_request, ov_version = openvino_request(args.model, args.threads)
        for _ in range(3):
            ov_request.infer(data)

    ort_ms, ov_ms, collage_ms = [], [], []
    for r in range(args.rounds):
        if command:
            collage_ms.append(collage_median(command, show_output=(r == 0)))
            time.sleep(0.1)
        ort_ms += timed(lambda: sess.run(None, data), args.repeat)
        note = f"collage {collage_ms[-1]:.2f} ms, " if command else ""
        note += f"ONNX Runtime median {statistics.median(ort_ms[-args.repeat:]):.2f} ms"
        if ov_request:
            ov_ms += timed(lambda: ov_request.infer(data), args.repeat)
            note += f", OpenVINO median {statistics.median(ov_ms[-args.repeat:]):.2f} ms"
        print(f"round {r + 1}/{args.rounds}: {note}", flush=True)

    ort_median = statistics.median(ort_ms)
    print(f"ONNX Runtime {ort.__version__} ({args.threads} threads): median {ort_median:.2f} ms "
          f"over {len(ort_ms)} runs")
    if ov_request:
        print(f"OpenVINO {ov_version} ({args.threads} threads, latency hint, f32): median "
              f"{statistics.median(ov_ms):.2f} ms over {len(ov_ms)} runs")
    if command:
        ours = statistics.median(collage_ms)
        print(f"collage: median {ours:.2f} ms over {len(collage_ms)} rounds")
        if ov_request:
            print(f"collage / OpenVINO = {ours / statistics.median(ov_ms):.2f} "
                  f"(below 1: collage is faster)")
        print(f"collage / ONNX Runtime = {ours / ort_median:.2f} (below 1: collage is faster)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
