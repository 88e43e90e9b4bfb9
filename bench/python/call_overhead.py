"""What one run() costs from Python beyond the model: the collage package (nanobind extension)
beside the ctypes module of examples/python/collage.py, on the same tiny artifact (an MLP,
1x16 -> 1x10, a few microseconds of kernels), alternating blocks of calls; and how many runs
two threads get done per second against one (run() releases the GIL in both).

    PYTHON bench/python/call_overhead.py ARTIFACT [--calls 20000] [--blocks 10]

PYTHON: a Python with the collage package and numpy (e.g. the fresh venv that ctest
python/wheel leaves in build/python-test/wheel/venv); the ctypes module finds the libraries in
$COLLAGE_LIB_DIR (build/lib).
"""
import argparse
import importlib.util
import os
import statistics
import threading
import time

import numpy as np

import collage

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def ctypes_module():
    spec = importlib.util.spec_from_file_location(
        "collage_ctypes", os.path.join(ROOT, "examples", "python", "collage.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def per_call_us(run, x, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        run(x)
    return (time.perf_counter() - t0) / calls * 1e6


def runs_per_second(run, x, threads, seconds=2.0):
    counts = [0] * threads
    deadline = time.monotonic() + seconds

    def loop(i):
        while time.monotonic() < deadline:
            run(x)
            counts[i] += 1

    workers = [threading.Thread(target=loop, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return sum(counts) / seconds


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("artifact")
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--blocks", type=int, default=10)
    args = p.parse_args()
    package = collage.load(args.artifact, num_threads=1)
    legacy = ctypes_module().Module(args.artifact, num_threads=1)
    x = np.random.default_rng(0).standard_normal(package.inputs[0].shape).astype(np.float32)
    np.testing.assert_array_equal(package.run(x)[0], legacy.run(x)[0])
    contenders = {"package (nanobind)": package.run, "ctypes example": legacy.run}
    times = {name: [] for name in contenders}
    for name, run in contenders.items():
        per_call_us(run, x, args.calls // 10)  # warm up
    for _ in range(args.blocks):
        for name, run in contenders.items():
            times[name].append(per_call_us(run, x, args.calls))
    print(f"load average {os.getloadavg()[0]:.1f}; median of {args.blocks} blocks of "
          f"{args.calls} calls")
    for name, samples in times.items():
        print(f"  {name:20} {statistics.median(samples):6.2f} us per run()  "
              f"(min {min(samples):.2f}, max {max(samples):.2f})")
    for name, run in contenders.items():
        one, two = runs_per_second(run, x, 1), runs_per_second(run, x, 2)
        print(f"  {name:20} {one:9.0f} runs/s on 1 thread, {two:9.0f} on 2 ({two / one:.2f}x)")


if __name__ == "__main__":
    main()
