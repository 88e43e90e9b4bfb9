"""OpenVINO compile properties as candidate variants of collage's openvino regions: one model
compiled whole under each property set (the first, "base", is what collage's openvino backend
compiles a region with: runtime/modules/openvino/ov_region.cpp compile_properties), and ONNX
Runtime beside them, run in blocks of runs in turns with a pause between blocks (each runtime's
idle team spins for a while after a run); prints each contender's median and its ratio to "base"
and to ONNX Runtime (> 1 = faster). Not a test: it never fails on a timing.

    .venv/bin/python bench/python/ov_properties.py MODEL.onnx INPUTS.npz [--rounds 5]
        [--repeat 20] [--threads 2] [--only base,pinned,...]
"""
import argparse
import statistics
import time

import numpy as np
import onnxruntime as ort
import openvino as ov


def property_sets(threads):
    base = {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY",
            "INFERENCE_PRECISION_HINT": "f32", "ENABLE_CPU_PINNING": False, "NUM_STREAMS": 1}
    return {
        "base": base,
        "pinned": {**base, "ENABLE_CPU_PINNING": True},
        "tbb-auto": {**base, "TBB_PARTITIONER": "AUTO"},
        "tbb-static": {**base, "TBB_PARTITIONER": "STATIC"},
        "denormals": {**base, "CPU_DENORMALS_OPTIMIZATION": True},
        "no-hint": {k: v for k, v in base.items() if k != "PERFORMANCE_HINT"},
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("inputs")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--only", help="comma-separated property sets (default: all)")
    args = p.parse_args()
    feed = dict(np.load(args.inputs))
    sets = property_sets(args.threads)
    if args.only:
        sets = {k: sets[k] for k in args.only.split(",")}
    core = ov.Core()
    runners = {}
    for name, props in sets.items():
        request = core.compile_model(args.model, "CPU", props).create_infer_request()
        ov_feed = {i: feed[inp.get_any_name()] for i, inp in enumerate(request.model_inputs)}
        runners[name] = (lambda r, f: lambda: r.infer(f))(request, ov_feed)
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(args.model, so, providers=["CPUExecutionProvider"])
    runners["ONNX Runtime"] = lambda: sess.run(None, feed)
    times = {n: [] for n in runners}
    for _ in range(2):
        for run in runners.values():
            run()
    for _ in range(args.rounds):
        for name, run in runners.items():
            for _ in range(args.repeat):
                t = time.perf_counter()
                run()
                times[name].append((time.perf_counter() - t) * 1000)
            time.sleep(0.2)
    med = {n: statistics.median(v) for n, v in times.items()}
    base = med.get("base", next(iter(med.values())))
    print(f"{args.model}: medians of {args.rounds * args.repeat} runs, {args.threads} threads")
    for name, ms in med.items():
        print(f"  {name:<14} {ms:9.3f} ms   vs base {base / ms:5.3f}x   "
              f"vs ONNX Runtime {med['ONNX Runtime'] / ms:5.3f}x")


if __name__ == "__main__":
    main()
