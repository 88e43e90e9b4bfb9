"""Issue 18's measurement as a user makes it: each artifact that `collage compile MODEL -o A`
wrote (bench/python/compile_budget.py leaves NAME.cold.collage per model) run by `collage run
A --repeat N`, alternated in rounds with ONNX Runtime and OpenVINO (PyPI, 2 threads each, OpenVINO
with the latency hint) on the same inputs in this process; the order of the three is shuffled
every round and each is followed by a pause, so that spinning thread teams sleep. Prints a
Markdown table of the medians of the rounds' medians, collage against the faster peer, and the
geomean over the models.

    bench/python/artifact_vs_peers.py BUILD_DIR ARTIFACT... [--rounds 5] [--repeat 20]
                                      [--threads 2]

An artifact NAME[.TAG].collage is the model NAME: NAME.onnx and NAME.inputs.npz from the model
cache (tests/models/build_models.sh). The artifact runs with the threads its compile gave it
(2 on the development machines; --threads is the peers'). Runs in the project's .venv.
"""

import argparse
import math
import os
import random
import re
import statistics
import subprocess
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort
import openvino as ov


def model_cache():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.environ["HOME"], ".cache")
    return Path(base) / "collage" / "models"


def timed(run, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


class Contenders:
    def __init__(self, collage, artifact, model, threads):
        inputs = dict(np.load(model.with_suffix(".inputs.npz")))
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        session = ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
        compiled = ov.Core().compile_model(
            str(model), "CPU",
            {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY"})
        request = compiled.create_infer_request()
        feeds = [inputs[i.get_any_name()] for i in compiled.inputs]
        self.runs = {
            "collage": lambda repeat: self.collage_run(collage, artifact, repeat),
            "onnxruntime": lambda repeat: timed(lambda: session.run(None, inputs), repeat),
            "openvino": lambda repeat: timed(lambda: request.infer(feeds), repeat),
        }

    @staticmethod
    def collage_run(collage, artifact, repeat):
        out = subprocess.run([collage, "run", str(artifact), "--repeat", str(repeat)],
                             capture_output=True, text=True)
        found = re.search(r"median ([\d.]+) ms", out.stdout + out.stderr)
        if out.returncode != 0 or not found:
            raise RuntimeError(f"collage run {artifact} failed:\n{out.stderr}")
        return float(found.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build_dir", type=Path)
    parser.add_argument("artifacts", type=Path, nargs="+")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    collage = str(args.build_dir / "bin" / "collage")
    rng = random.Random(20261128)
    print("| model | collage | ONNX Runtime | OpenVINO | vs the faster peer | rounds (collage) |")
    print("| --- | --- | --- | --- | --- | --- |")
    ratios = []
    for artifact in args.artifacts:
        name = artifact.name.split(".")[0]
        c = Contenders(collage, artifact, model_cache() / f"{name}.onnx", args.threads)
        for run in c.runs.values():  # untimed first runs
            run(1)
        medians = {k: [] for k in c.runs}
        order = list(c.runs)
        for _ in range(args.rounds):
            rng.shuffle(order)
            for k in order:
                medians[k].append(c.runs[k](args.repeat))
                time.sleep(0.2)
        ms = {k: statistics.median(v) for k, v in medians.items()}
        ratio = min(ms["onnxruntime"], ms["openvino"]) / ms["collage"]
        ratios.append(ratio)
        print(f"| {name} | {ms['collage']:.2f} | {ms['onnxruntime']:.2f} | {ms['openvino']:.2f} "
              f"| {ratio:.2f}x | {', '.join(f'{x:.1f}' for x in medians['collage'])} |",
              flush=True)
    if ratios:
        geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"\ngeomean {geomean:.3f}x over {len(ratios)} models; at least 1.0x on "
              f"{sum(r >= 1 for r in ratios)}")


if __name__ == "__main__":
    main()
