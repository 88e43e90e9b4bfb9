#!/usr/bin/env python3
"""collage's GPU schedules against PyTorch's kernels (cuBLAS, cuDNN, its own), same sizes, one run.

Runs build/bin/gpu_schedules_bench (CUDA-event medians of each generated kernel on device-resident
arguments, per launch over samples of back-to-back launches), then times PyTorch's equivalent of
each case the same way (its kernels captured in one CUDA graph per sample), fp32 with TF32 off,
and prints a table: both medians, collage's rate, and torch's time over collage's (above 1:
collage is faster). Needs a GPU and torch with CUDA.

  python3 bench/python/gpu_schedules_vs_torch.py [--bench build/bin/gpu_schedules_bench]
      [--repeats 50] [--json OUT.jsonl]
"""
import argparse
import json
import statistics
import subprocess
import sys

import torch
import torch.nn.functional as F


def torch_case(op, s):
    """A zero-argument function running PyTorch's equivalent of one bench case on the GPU."""
    dev = "cuda"
    r = lambda *shape: torch.rand(*shape, device=dev) - 0.5
    if op == "matmul":
        a, b = r(s["m"], s["k"]), r(s["k"], s["n"])
        return lambda: torch.mm(a, b)
    if op == "dense_gelu":
        a, b, bias = r(s["m"], s["k"]), r(s["k"], s["n"]), r(s["n"])
        return lambda: F.gelu(torch.addmm(bias, a, b))
    if op == "batch_matmul":
        a, b = r(s["b"], s["m"], s["k"]), r(s["b"], s["k"], s["n"])
        return lambda: torch.bmm(a, b)
    if op in ("conv2d_bias_relu", "depthwise"):
        x = r(s["n"], s["c"], s["hw"], s["hw"])
        if op == "depthwise":
            w = r(s["c"], 1, s["kernel"], s["kernel"])
            return lambda: F.conv2d(x, w, stride=s["stride"], padding=s["pad"], groups=s["c"])
        w, bias = r(s["o"], s["c"], s["kernel"], s["kernel"]), r(s["o"])
        return lambda: F.relu(F.conv2d(x, w, bias, stride=s["stride"], padding=s["pad"]))
    if op == "tanh_sigmoid":
        x = r(s["elements"])
        return lambda: torch.tanh(x) * torch.sigmoid(x)
    if op == "row_sum":
        x = r(s["rows"], s["cols"])
        return lambda: x.sum(dim=1)
    if op == "softmax":
        x = r(s["rows"], s["cols"])
        return lambda: torch.softmax(x, dim=-1)
    if op == "layer_norm":
        x, g, b = r(s["rows"], s["cols"]), r(s["cols"]), r(s["cols"])
        return lambda: F.layer_norm(x, (s["cols"],), g, b, 1e-5)
    raise ValueError(f"no PyTorch equivalent for bench case {op}")


def time_torch(fn, warmup, repeats, launches_per_sample):
    """Median milliseconds per call of `fn`: each sample replays a CUDA graph holding
    `launches_per_sample` calls between two CUDA events, as the C++ side times back-to-back
    launches, so that neither side times the host's launch latency."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(warmup):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(launches_per_sample):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repeats):
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / launches_per_sample)
    return statistics.median(times)


def sizes_text(s):
    return " ".join(f"{k}={v}" for k, v in s.items())


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bench", default="build/bin/gpu_schedules_bench")
    p.add_argument("--repeats", type=int, default=50)
    p.add_argument("--json", help="write every row (both medians) as JSON lines here")
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True  # cuDNN picks its fastest algorithm per shape

    run = subprocess.run([args.bench, str(args.repeats)], capture_output=True, text=True)
    sys.stderr.write(run.stderr)
    rows = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    if not rows:
        sys.exit(f"{args.bench} printed no cases (exit {run.returncode})")
    print(f"device: {torch.cuda.get_device_name(0)}; torch {torch.__version__}, "
          f"cuDNN {torch.backends.cudnn.version()}; fp32, TF32 off; medians of {args.repeats} "
          f"samples of {rows[0].get('launches_per_sample', 1)} back-to-back launches (torch: one "
          f"CUDA graph)")
    print("| op | sizes | tiling | collage ms | torch ms | collage TFLOP/s | collage GB/s | "
          "torch / collage |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    out = open(args.json, "w") if args.json else None
    torch_ms = {}  # one torch timing per case, whatever the tilings collage tried
    for row in rows:
        head = f"| {row['op']} | {sizes_text(row['sizes'])} | {row.get('tiling', '')} |"
        if "error" in row:
            print(f"{head} error: {row['error']} | | | | |")
            continue
        key = json.dumps([row["op"], row["sizes"]], sort_keys=True)
        if key not in torch_ms:
            torch_ms[key] = time_torch(torch_case(row["op"], row["sizes"]), 10, args.repeats,
                                       row["launches_per_sample"])
        row["torch_ms"] = torch_ms[key]
        ms = row["median_ms"]
        tflops = row["flops"] / ms / 1e9 if row["flops"] else 0
        gbs = row["bytes"] / ms / 1e6
        print(f"{head} {ms:.4f} | {row['torch_ms']:.4f} | {tflops:.2f} | {gbs:.0f} | "
              f"{row['torch_ms'] / ms:.2f} |")
        if out:
            out.write(json.dumps(row) + "\n")
    if run.returncode != 0:
        sys.exit(f"{args.bench} exited {run.returncode}")


if __name__ == "__main__":
    main()
