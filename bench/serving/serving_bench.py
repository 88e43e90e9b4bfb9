"""Triton Inference Server under load: each model served from its collage artifact (the
package's model.py) and from ONNX Runtime (ort_model.py, Triton's Python backend, as the
nvidia-pytriton wheel has no ONNX Runtime backend), in one server on 127.0.0.1, measured by a
bounded closed-loop gRPC client of our own (the perf-analyzer name on PyPI holds no program) at
each concurrency: throughput, p50 and p99 latency, errors. Contenders alternate within each
round, with a pause between them (ONNX Runtime's threads spin after a run).

    .venv-serve/bin/python bench/serving/serving_bench.py [--models resnet50_small,bert_small]
        [--concurrency 1,4,16] [--seconds 8] [--rounds 2] [--placement two-level --budget 20]
        [--batched resnet50_small --max-batch 8 --batched-concurrency 4,16]

Needs the wheel (scripts/build-wheel), the model cache (tests/models/build_models.sh) and, for
the dynamic-batching variant, .venv's onnx. Fixed-batch rows: requests carry each model's cached
inputs (its compiled batch), no dynamic batching. Dynamic-batching rows (the --batched models,
"NAME 1..N batched"): the model with its batch made symbolic (batch_axis.py), compiled by
build-repo --max-batch N, and run by ONNX Runtime at any batch, both served with Triton's
dynamic batching up to N; each request carries one row (the first of the cached inputs), and
Triton gathers concurrent ones. One instance per model; collage uses all cores, ONNX Runtime
intra_op_num_threads as many.
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import threading
import time

import numpy as np
import tritonclient.grpc as grpcclient
from tritonclient.utils import np_to_triton_dtype

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
from triton_server import Server, clean_env, run, serve_venv, the_wheel  # noqa: E402

CONTENDERS = ("collage", "ort")


def batched_onnx(model, cache, work):
    """A copy of MODEL's ONNX file with a symbolic batch (batch_axis.py, in .venv for onnx)."""
    path = os.path.join(work, f"{model['name']}_batched.onnx")
    run([os.path.join(ROOT, ".venv", "bin", "python"), os.path.join(HERE, "batch_axis.py"),
         os.path.join(cache, model["onnx"]), path])
    return path


def build_repository(python, repo, name, onnx_path, args, batch_options=()):
    """NAME_collage (build-repo, with BATCH_OPTIONS) and NAME_ort (the same config,
    ort_model.py, the ONNX file)."""
    command = [python, "-m", "collage.triton", "build-repo", onnx_path, repo,
               "--name", f"{name}_collage", "--placement", args.placement, *batch_options]
    if args.budget:
        command += ["--budget", str(args.budget)]
    run(command, env=clean_env())
    ort_dir = os.path.join(repo, f"{name}_ort")
    os.makedirs(os.path.join(ort_dir, "1"))
    config = open(os.path.join(repo, f"{name}_collage", "config.pbtxt")).read()
    config = config.replace(f'name: "{name}_collage"', f'name: "{name}_ort"')
    config = config.replace('string_value: "0" }', f'string_value: "{os.cpu_count()}" }}')
    with open(os.path.join(ort_dir, "config.pbtxt"), "w") as f:
        f.write(config)
    shutil.copyfile(os.path.join(HERE, "ort_model.py"), os.path.join(ort_dir, "1", "model.py"))
    os.symlink(onnx_path, os.path.join(ort_dir, "1", "model.onnx"))


def closed_loop(port, model, feeds, concurrency, seconds, max_requests=100000):
    """CONCURRENCY clients, each sending its next request when the last one returned, for
    SECONDS (at most MAX_REQUESTS in all). Returns (latencies in ms, errors, wall seconds)."""
    latencies, errors = [], []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def client():
        c = grpcclient.InferenceServerClient(f"127.0.0.1:{port}")
        inputs = []
        for n, a in feeds.items():
            i = grpcclient.InferInput(n, list(a.shape), np_to_triton_dtype(a.dtype))
            i.set_data_from_numpy(a)
            inputs.append(i)
        mine, failed = [], []
        while time.monotonic() < deadline and len(mine) * concurrency < max_requests:
            t0 = time.perf_counter()
            try:
                c.infer(model, inputs)
                mine.append((time.perf_counter() - t0) * 1e3)
            except Exception as e:  # counted, and the first one printed
                failed.append(str(e))
        c.close()
        with lock:
            latencies.extend(mine)
            errors.extend(failed)

    t0 = time.monotonic()
    threads = [threading.Thread(target=client) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, errors, time.monotonic() - t0


def batching_summary(port, prefix):
    """How Triton's dynamic batcher gathered the requests of PREFIX's contenders so far, from
    the server's statistics: requests, executions and rows per execution."""
    client = grpcclient.InferenceServerClient(f"127.0.0.1:{port}")
    for contender in CONTENDERS:
        stats = client.get_inference_statistics(f"{prefix}_{contender}",
                                                as_json=True)["model_stats"][0]
        requests = int(stats["inference_stats"]["success"]["count"])
        executions = int(stats.get("execution_count", 0))
        rows = int(stats.get("inference_count", 0))
        print(f"  {prefix}_{contender}: {requests} requests in {executions} executions "
              f"({rows / max(executions, 1):.1f} rows each)")
    client.close()


def percentile(values, q):
    return float(np.percentile(values, q)) if values else float("nan")


def entries_of(args, manifest, cache, python, repo, work):
    """What is measured: (label, model prefix in the repository, request inputs, concurrency
    levels), the repository built for each."""
    entries = []
    for name in filter(None, args.models.split(",")):
        model = manifest[name]
        build_repository(python, repo, name, os.path.join(cache, model["onnx"]), args)
        feeds = dict(np.load(os.path.join(cache, model["inputs_npz"])))
        entries.append((name, name, feeds, args.concurrency))
    for name in filter(None, args.batched.split(",")):
        model = manifest[name]
        shapes = [f"{i['name']}=1x" + "x".join(str(d) for d in i["shape"][1:])
                  for i in model["inputs"]]
        options = ["--max-batch", str(args.max_batch)]
        for shape in shapes:
            options += ["--input-shape", shape]
        build_repository(python, repo, f"{name}_batched", batched_onnx(model, cache, work), args,
                         options)
        feeds = {k: v[:1] for k, v in np.load(os.path.join(cache, model["inputs_npz"])).items()}
        entries.append((f"{name} 1..{args.max_batch} batched", f"{name}_batched", feeds,
                        args.batched_concurrency))
    return entries


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--models", default="resnet50_small,bert_small")
    p.add_argument("--concurrency", default="1,4,16")
    p.add_argument("--batched", default="resnet50_small",
                   help="models also served with dynamic batching (requests of one row)")
    p.add_argument("--max-batch", type=int, default=8)
    p.add_argument("--batched-concurrency", default="4,16")
    p.add_argument("--seconds", type=float, default=8)
    p.add_argument("--warmup", type=float, default=1)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--pause", type=float, default=1)
    p.add_argument("--placement", default="two-level")
    p.add_argument("--budget", type=float, default=20)
    p.add_argument("--json", help="write the figures here too")
    args = p.parse_args()
    args.concurrency = [int(c) for c in args.concurrency.split(",")]
    args.batched_concurrency = [int(c) for c in args.batched_concurrency.split(",")]
    cache = os.environ.get("COLLAGE_MODEL_CACHE", os.path.expanduser("~/.cache/collage/models"))
    manifest = {m["name"]: m for m in json.load(open(os.path.join(cache, "models.json")))["models"]}

    work = os.path.join(os.path.abspath(args.build), "serving-bench")
    shutil.rmtree(work, ignore_errors=True)
    python = serve_venv(os.path.join(work, "venv"), the_wheel(os.path.abspath(args.build)))
    repo = os.path.join(work, "repo")
    entries = entries_of(args, manifest, cache, python, repo, work)
    server = Server(python, repo, os.path.join(work, "tritonserver.log"))
    results = []
    try:
        server.wait_ready([f"{prefix}_{c}" for _, prefix, _, _ in entries for c in CONTENDERS])
        print(f"load average before: {os.getloadavg()}", flush=True)
        for label, prefix, feeds, levels in entries:
            for level in levels:
                samples = {c: {"latencies": [], "errors": [], "throughput": []}
                           for c in CONTENDERS}
                for r in range(args.rounds):
                    order = CONTENDERS if r % 2 == 0 else CONTENDERS[::-1]
                    for contender in order:
                        name = f"{prefix}_{contender}"
                        closed_loop(server.grpc_port, name, feeds, level, args.warmup)
                        lat, err, wall = closed_loop(server.grpc_port, name, feeds, level,
                                                     args.seconds)
                        s = samples[contender]
                        s["latencies"] += lat
                        s["errors"] += err
                        s["throughput"].append(len(lat) / wall)
                        time.sleep(args.pause)
                for contender in CONTENDERS:
                    s = samples[contender]
                    row = {"model": label, "contender": contender, "concurrency": level,
                           "requests": len(s["latencies"]),
                           "throughput": statistics.median(s["throughput"]),
                           "p50_ms": percentile(s["latencies"], 50),
                           "p99_ms": percentile(s["latencies"], 99),
                           "errors": len(s["errors"])}
                    if s["errors"]:
                        print(f"  first error: {s['errors'][0]}")
                    results.append(row)
                    print(f"{label:30} {contender:8} c={level:<3} "
                          f"{row['throughput']:8.1f} req/s  p50 {row['p50_ms']:8.2f} ms  "
                          f"p99 {row['p99_ms']:8.2f} ms  errors {row['errors']}  "
                          f"({row['requests']} requests)", flush=True)
            if prefix.endswith("_batched"):
                batching_summary(server.grpc_port, prefix)
        print(f"load average after: {os.getloadavg()}")
    finally:
        code = server.stop()
    print("\n| model | concurrency | collage req/s | ORT req/s | ratio | collage p50 / p99 ms | "
          "ORT p50 / p99 ms | errors |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    by = {(r["model"], r["concurrency"], r["contender"]): r for r in results}
    for label, _, _, levels in entries:
        for level in levels:
            c, o = by[(label, level, "collage")], by[(label, level, "ort")]
            print(f"| {label} | {level} | {c['throughput']:.1f} | {o['throughput']:.1f} | "
                  f"{c['throughput'] / o['throughput']:.2f}x | {c['p50_ms']:.2f} / "
                  f"{c['p99_ms']:.2f} | {o['p50_ms']:.2f} / {o['p99_ms']:.2f} | "
                  f"{c['errors'] + o['errors']} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    errors = sum(r["errors"] for r in results)
    if errors or code:
        sys.exit(f"{errors} errors, tritonserver exit {code}")


if __name__ == "__main__":
    main()
