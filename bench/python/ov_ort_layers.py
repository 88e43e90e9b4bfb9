"""Layer by layer, ONNX Runtime against OpenVINO on one CNN: which convolutions ONNX Runtime runs
faster, where a region boundary could let a mix win. Both run here, in blocks of runs in turns (CPU, --threads
threads, batch as in INPUTS.npz); ONNX Runtime with all graph optimisations and its per-node
profile (SessionOptions.enable_profiling), OpenVINO as collage's openvino backend compiles a region
(latency hint, f32, one stream, threads not pinned) with PERF_COUNT (get_profiling_info after
each run). A fused kernel of either is attributed to the convolution it starts from (the Conv
whose output a fused Relu/Clip/BatchNormalization/Add consumes; for OpenVINO, through the original
layers its runtime model names); each layer's median (or
minimum) over the runs.
With --collage LABEL=P.json (repeatable), a `collage run ARTIFACT --profile P.json` trace is
attributed the same way and shown as column LABEL; the ideal mix is the sum over layers of the
fastest column's time (no boundary paid). --json OUT.json keeps every column's layer times.
With --peak GFLOPS (the machine's FMA peak on
--threads threads, build/bin/fma_peak_bench), every Conv, Gemm and MatMul is listed in model order
with its GFLOP and each column's time and share of the peak (GFLOP/s over the peak; a Winograd
kernel's share counts the direct FLOPs it replaces, so it can pass 100 %).

    .venv/bin/python bench/python/ov_ort_layers.py MODEL.onnx INPUTS.npz [--runs 60] [--rounds 3]
        [--threads 2] [--top 12] [--stat median|min]
        [--collage LABEL=P.json ...] [--json OUT.json] [--peak GFLOPS]

Prints each runtime's run median (profiling on), its per-layer medians summed by kernel class,
and the layers where ONNX Runtime is fastest against OpenVINO (their difference in microseconds).
Not a test: it never fails on a timing.
"""
import argparse
import collections
import json
import math
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
import openvino as ov

STAT = statistics.median  # each layer's statistic over the runs (--stat)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cnn_profile import conv_classes  # noqa: E402

FUSED_AFTER = ("Clip", "Relu", "BatchNormalization", "Add", "Sigmoid", "Mul", "HardSigmoid")
# Suffixes OpenVINO's ONNX frontend and CPU plugin put on a node's name.
OV_SUFFIXES = ("/WithoutBiases", "_nchwc", "/fq_weights_1")


def layer_key(model):
    """A function: a profiled kernel's name -> the ONNX node it is attributed to."""
    names = {n.name: n for n in model.graph.node}
    producer = {o: n for n in model.graph.node for o in n.output}

    def key(name):
        for s in OV_SUFFIXES:
            if name.endswith(s):
                name = name[: -len(s)]
        node = names.get(name) or producer.get(name)
        if node is None:
            return name
        while node.op_type in FUSED_AFTER and node.input and node.input[0] in producer:
            node = producer[node.input[0]]
        return node.name
    return key


def layer_flops(model, feed):
    """Node name -> FLOPs (two per multiply-add) of every Conv, Gemm and MatMul whose shapes
    ONNX's shape inference resolves for the inputs' shapes."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    for i in model.graph.input:
        if i.name in feed:
            dims = i.type.tensor_type.shape.dim
            for d, n in zip(dims, feed[i.name].shape):
                d.ClearField("dim_param")
                d.dim_value = n
    inferred = onnx.shape_inference.infer_shapes(model)
    shapes = {i.name: list(i.dims) for i in model.graph.initializer}
    for v in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
        shapes[v.name] = [d.dim_value for d in v.type.tensor_type.shape.dim]
    out = {}
    for n in model.graph.node:
        if n.op_type not in ("Conv", "Gemm", "MatMul") or any(
                not shapes.get(x) or 0 in shapes[x] for x in (n.input[1], n.output[0])):
            continue
        y, w = shapes[n.output[0]], shapes[n.input[1]]
        if n.op_type == "Conv":  # N x M x spatial outputs, each C/group x window multiply-adds
            out[n.name] = 2 * math.prod(y) * math.prod(w[1:])
        else:  # the output's elements, each the reduced dimension's multiply-adds
            a = {x.name: onnx.helper.get_attribute_value(x) for x in n.attribute}
            k = w[1] if n.op_type == "Gemm" and a.get("transB", 0) else w[-2]
            out[n.name] = 2 * math.prod(y) * k
    return out


def print_peak_table(model, feed, layers, classes, peak):
    """Every contraction in model order: GFLOP, and per column ms and % of the peak."""
    flops = layer_flops(model, feed)
    names = list(layers)
    print(f"  per layer against the peak ({peak:.1f} GFLOP/s): ms (% of peak)")
    print(f"  {'layer':<44} {'class':<22} {'GFLOP':>7}" + "".join(f"{n:>20}" for n in names))
    total_ms = {n: 0.0 for n in names}
    total_flops = 0
    for node in model.graph.node:
        if node.name not in flops:
            continue
        f = flops[node.name]
        total_flops += f
        row = f"  {node.name[-44:]:<44} {classes.get(node.name, node.op_type)[:22]:<22} {f / 1e9:7.3f}"
        for n in names:
            us = layers[n].get(node.name)
            if us:
                total_ms[n] += us / 1000
                row += f"{us / 1000:12.3f} ({100 * f / (us * 1e3) / peak:4.0f}%)"
            else:
                row += f"{'-':>20}"
        print(row)
    print(f"  {'contractions':<44} {'':<22} {total_flops / 1e9:7.3f}" + "".join(
        f"{total_ms[n]:12.3f} ({100 * total_flops / (total_ms[n] * 1e6) / peak:4.0f}%)"
        if total_ms[n] else f"{'-':>20}" for n in names))
    everything = {n: sum(layers[n].values()) / 1000 for n in names}
    print(f"  {'every kernel, the contractions FLOPs over it':<75}" + "".join(
        f"{everything[n]:12.3f} ({100 * total_flops / (everything[n] * 1e6) / peak:4.0f}%)"
        for n in names))


def ov_attribution(compiled, key, node_names):
    """OpenVINO's executed node name -> the ONNX node it is attributed to: the first of the
    original layers it was fused from (its runtime model's originalLayersNames) that leads back
    to a node of the model, else its own name."""
    out = {}
    for op in compiled.get_runtime_model().get_ordered_ops():
        rt = op.get_rt_info()
        names = rt["originalLayersNames"].astype(str).split(",") if "originalLayersNames" in rt else []
        keys = [key(n) for n in names if n and key(n) in node_names]
        out[op.get_friendly_name()] = keys[0] if keys else key(op.get_friendly_name())
    return out


def ort_profile(path, feed, threads):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.enable_profiling = True
    so.profile_file_prefix = tempfile.mkdtemp() + "/ort"
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return sess, lambda: sess.run(None, feed)


def ort_layers(sess, key, runs):
    per = collections.defaultdict(list)
    for e in json.load(open(sess.end_profiling())):
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            per[e["name"][: -len("_kernel_time")]].append(e["dur"])
    out = collections.defaultdict(float)
    for name, durations in per.items():
        out[key(name)] += STAT(durations)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("inputs")
    p.add_argument("--runs", type=int, default=60)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--top", type=int, default=12)
    p.add_argument("--stat", choices=["median", "min"], default="median",
                   help="each layer's statistic over the runs (min on a loaded machine)")
    p.add_argument("--collage", action="append", default=[], metavar="LABEL=P.json",
                   help="a trace written by collage run --profile (repeatable)")
    p.add_argument("--json", metavar="OUT.json",
                   help="write each column's per-layer times (us) and the model's node order")
    p.add_argument("--peak", type=float,
                   help="the FMA peak in GFLOP/s on --threads threads: print every contraction's "
                        "share of it")
    args = p.parse_args()
    global STAT
    STAT = min if args.stat == "min" else statistics.median
    model = onnx.load(args.model, load_external_data=False)
    classes, _ = conv_classes(model)
    key = layer_key(model)
    feed = dict(np.load(args.inputs))

    sess, ort_run = ort_profile(args.model, feed, args.threads)
    compiled = ov.Core().compile_model(args.model, "CPU", {
        "INFERENCE_NUM_THREADS": args.threads, "PERFORMANCE_HINT": "LATENCY",
        "INFERENCE_PRECISION_HINT": "f32", "ENABLE_CPU_PINNING": False, "NUM_STREAMS": 1,
        "PERF_COUNT": True})
    request = compiled.create_infer_request()
    ov_feed = {i: feed[inp.get_any_name()] for i, inp in enumerate(compiled.inputs)}
    times = {"ort": [], "ov": []}
    ov_per = collections.defaultdict(list)
    # Blocks of runs in turns, a pause between them: each runtime's idle team spins for a while
    # after a run, and would take the cores from the other's next run.
    for r in range(args.rounds):
        for _ in range(args.runs // args.rounds):
            t = time.perf_counter()
            ort_run()
            times["ort"].append((time.perf_counter() - t) * 1000)
        time.sleep(0.3)
        for _ in range(args.runs // args.rounds):
            t = time.perf_counter()
            request.infer(ov_feed)
            times["ov"].append((time.perf_counter() - t) * 1000)
            for info in request.profiling_info:
                if info.status == ov.ProfilingInfo.Status.EXECUTED:
                    ov_per[info.node_name].append(info.real_time.total_seconds() * 1e6)
        time.sleep(0.3)
    attributed = ov_attribution(compiled, key, {n.name for n in model.graph.node})
    ov_layers = collections.defaultdict(float)
    for name, durations in ov_per.items():
        ov_layers[attributed.get(name, key(name))] += STAT(durations)
    ort_l = ort_layers(sess, key, args.runs)
    layers = {"ONNX Runtime": ort_l, "OpenVINO": ov_layers}
    for trace in args.collage:
        label, path = trace.split("=", 1)
        per = collections.defaultdict(list)
        for e in json.load(open(path))["traceEvents"]:
            if "kernel" in e.get("args", {}):
                # A kernel is named by its group's nodes, the first one first.
                per[e["name"].split(" ")[0]].append(e["dur"])
        layers[label] = collections.defaultdict(float)
        for name, durations in per.items():
            layers[label][key(name)] += STAT(durations)

    print(f"{os.path.basename(args.model)}: run medians (profiling on) ONNX Runtime "
          f"{statistics.median(times['ort']):.3f} ms, OpenVINO {statistics.median(times['ov']):.3f} ms")
    names = list(layers)
    by_class = {n: collections.Counter() for n in names}
    for n in names:
        for k, us in layers[n].items():
            by_class[n][classes.get(k, "other " + k.split("/")[-1].split("_")[0])] += us / 1000
    order = sorted(set().union(*[set(c) for c in by_class.values()]),
                   key=lambda c: -by_class["OpenVINO"][c])
    print(f"  {'class (ms, layer ' + args.stat + 's summed)':<34}" + "".join(f"{n:>14}" for n in names))
    for c in order:
        print(f"  {c:<34}" + "".join(f"{by_class[n][c]:14.3f}" for n in names))
    print(f"  {'sum':<34}" + "".join(f"{sum(by_class[n].values()):14.3f}" for n in names))
    both = [k for k in ort_l if k in ov_layers]
    both.sort(key=lambda k: ort_l[k] - ov_layers[k])
    print(f"  layers where ONNX Runtime is fastest against OpenVINO (us):")
    for k in both[: args.top]:
        extra = "".join(f"  {n} {layers[n][k]:8.1f}" for n in names[2:] if k in layers[n])
        print(f"    {k:<52} {classes.get(k, '?'):<24} ORT {ort_l[k]:8.1f}  OV {ov_layers[k]:8.1f}"
              f"  diff {ort_l[k] - ov_layers[k]:8.1f}{extra}")
    gain = sum(min(0.0, ort_l[k] - ov_layers[k]) for k in both)
    print(f"  sum over layers of min(0, ORT - OV): {gain / 1000:.3f} ms "
          f"({len(both)} layers matched; {len(ov_layers) - len(both)} OpenVINO, "
          f"{len(ort_l) - len(both)} ONNX Runtime kernels unmatched)")
    # The ideal mix: each layer on the fastest column, no boundary paid (a lower bound).
    every = [k for k in ov_layers if all(k in layers[n] for n in names)]
    ideal = sum(min(layers[n][k] for n in names) for k in every)
    wins = collections.Counter(min(names, key=lambda n: layers[n][k]) for k in every)
    print(f"  ideal mix over the {len(every)} layers every column has: {ideal / 1000:.3f} ms "
          f"(OpenVINO {sum(ov_layers[k] for k in every) / 1000:.3f}); layers won: "
          + ", ".join(f"{n} {wins[n]}" for n in names))
    # A region end: the model's first layers (in node order) on one column, the rest on OpenVINO.
    order = [n.name for n in model.graph.node if n.name in every]
    for n in names:
        if n == "OpenVINO":
            continue
        best, cut, prefix, rest = 0.0, 0, 0.0, sum(ov_layers[k] for k in order)
        for i, k in enumerate(order):
            prefix += layers[n][k] - ov_layers[k]
            if prefix < best:
                best, cut = prefix, i + 1
        print(f"  first layers on {n}, the rest on OpenVINO: best cut after {cut} layers "
              f"({order[cut - 1] if cut else '-'}), {(rest + best) / 1000:.3f} ms")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"order": [n.name for n in model.graph.node],
                       "layers": {n: dict(layers[n]) for n in names}}, f)
    if args.peak:
        print_peak_table(model, feed, layers, classes, args.peak)


if __name__ == "__main__":
    main()
