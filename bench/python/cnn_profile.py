"""Where a CNN's time goes, by kernel class (depthwise, 1x1 pointwise, other convolutions by
window and stride, the other operators): a `collage run ARTIFACT --profile P.json` trace beside
ONNX Runtime's own per-node profile of the same model, run here (CPU, --threads intra-op threads,
all graph optimisations). Each kernel's (node's) median over the runs, summed per class; a kernel
is classed by the first node of its group, an ONNX Runtime node by the Conv its fused output
comes from.

    .venv/bin/python bench/python/cnn_profile.py MODEL.onnx INPUTS.npz [--collage P.json]
        [--ort-runs 50] [--threads 2]
"""
import argparse
import collections
import json
import re
import statistics
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort


def conv_classes(model):
    """Node name -> class, and output name -> producing node."""
    init = {i.name: list(i.dims) for i in model.graph.initializer}
    classes, producer = {}, {}
    for n in model.graph.node:
        for o in n.output:
            producer[o] = n
        if n.op_type != "Conv" or n.input[1] not in init:
            classes[n.name] = n.op_type
            continue
        a = {x.name: onnx.helper.get_attribute_value(x) for x in n.attribute}
        w = init[n.input[1]]
        k, g, s = w[2:], a.get("group", 1), a.get("strides", [1] * (len(w) - 2))
        window = "x".join(map(str, k))
        if g > 1 and g == w[0] and w[1] == 1:
            classes[n.name] = f"depthwise {window}"
        elif all(d == 1 for d in k):
            classes[n.name] = "pointwise 1x1"
        else:
            classes[n.name] = f"conv {window} stride {s[0]}" + (f" group {g}" if g > 1 else "")
    return classes, producer


def summarise(title, per_kernel, classify):
    total, count = collections.Counter(), collections.Counter()
    for name, durations in per_kernel.items():
        c = classify(name)
        total[c] += statistics.median(durations) / 1000
        count[c] += 1
    print(f"{title}: kernels' medians sum to {sum(total.values()):.3f} ms")
    for c, ms in total.most_common():
        print(f"  {c:<26} {ms:8.3f} ms  {count[c]:3d} kernels")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("inputs")
    p.add_argument("--collage", help="a trace written by collage run --profile")
    p.add_argument("--ort-runs", type=int, default=50)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    model = onnx.load(args.model, load_external_data=False)
    classes, producer = conv_classes(model)
    if args.collage:
        per = collections.defaultdict(list)
        for e in json.load(open(args.collage))["traceEvents"]:
            if "kernel" in e.get("args", {}):
                per[e["name"].split(" ")[0]].append(e["dur"])
        summarise("collage", per, lambda n: classes.get(n, n))

    def ort_class(name):
        if name in classes:
            return classes[name]
        node = producer.get(re.sub(r"_nchwc$", "", name))
        # A fused output (Conv + BatchNormalization/Relu/Clip/Add) is named after its last node.
        while node is not None and node.op_type in ("Clip", "Relu", "BatchNormalization", "Add") \
                and node.input[0] in producer:
            node = producer[node.input[0]]
        return classes[node.name] if node is not None else name

    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.enable_profiling = True
    so.profile_file_prefix = tempfile.mkdtemp() + "/ort"
    sess = ort.InferenceSession(args.model, so, providers=["CPUExecutionProvider"])
    feed = dict(np.load(args.inputs))
    times = []
    for _ in range(args.ort_runs):
        t = time.perf_counter()
        sess.run(None, feed)
        times.append((time.perf_counter() - t) * 1000)
    per = collections.defaultdict(list)
    for e in json.load(open(sess.end_profiling())):
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            per[e["name"][: -len("_kernel_time")]].append(e["dur"])
    print(f"ONNX Runtime: run median {statistics.median(times):.3f} ms (profiling on)")
    summarise("ONNX Runtime", per, ort_class)


if __name__ == "__main__":
    main()
