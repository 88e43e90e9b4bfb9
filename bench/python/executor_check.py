"""Whether the executor an artifact's compile picked (waves or sequential, measured at compile
time) holds when the artifact is measured again: each artifact run with both executors by
`collage run --executor E`, in alternating rounds (the order swapped every round), medians of the
rounds' medians; the pick holds when it is not slower than the other by more than MARGIN.

    bench/python/executor_check.py BUILD_DIR ARTIFACT... [--rounds 6] [--repeat 15]
                                   [--margin 0.03]

The compile's pick and its measured times are read from the log `collage compile` wrote next to
the artifact (NAME.log, as bench/python/compile_budget.py leaves it), or `--pick` for all. Prints
the load average before each round: on a shared machine the rounds swing with it. Runs in the
project's .venv.
"""

import argparse
import os
import re
import statistics
import subprocess
from pathlib import Path

MEDIAN = re.compile(r"median ([0-9.]+) ms over")
PICK = re.compile(r"(?:measured waves ([0-9.]+) ms, sequential ([0-9.]+) ms|not measured): "
                  r"runs with the (\w+) executor by default")


def run_ms(collage, artifact, executor, repeat):
    r = subprocess.run([str(collage), "run", str(artifact), "--executor", executor,
                        "--repeat", str(repeat), "--warmup", "3"],
                       capture_output=True, text=True, check=True)
    return float(MEDIAN.search(r.stdout).group(1))


def compile_pick(artifact):
    log = artifact.with_suffix(".log")
    m = PICK.search(log.read_text()) if log.exists() else None
    if not m:
        return None, ""
    measured = f"waves {m.group(1)}, sequential {m.group(2)}" if m.group(1) else "not measured"
    return m.group(3), measured


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("build", type=Path)
    p.add_argument("artifacts", nargs="+", type=Path)
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--margin", type=float, default=0.03)
    p.add_argument("--pick", default="", help="the pick when no compile log says it")
    args = p.parse_args()
    collage = args.build / "bin" / "collage"
    print("| artifact | compile-time pick (its figures, ms) | load | sequential, ms (median of "
          "rounds) | waves, ms | sequential / waves | pick holds |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for artifact in args.artifacts:
        pick, measured = compile_pick(artifact)
        pick = pick or args.pick
        times = {"sequential": [], "waves": []}
        loads = []
        for r in range(args.rounds):
            loads.append(os.getloadavg()[0])
            order = ["sequential", "waves"] if r % 2 == 0 else ["waves", "sequential"]
            for executor in order:
                times[executor].append(run_ms(collage, artifact, executor, args.repeat))
        seq = statistics.median(times["sequential"])
        waves = statistics.median(times["waves"])
        other = "waves" if pick == "sequential" else "sequential"
        holds = "?" if not pick else (
            "yes" if statistics.median(times[pick]) <=
            (1 + args.margin) * statistics.median(times[other]) else "NO")
        print(f"| {artifact.name} | {pick or '?'} ({measured}) | {min(loads):.1f}-{max(loads):.1f}"
              f" | {seq:.2f} | {waves:.2f} | {seq / waves:.3f} | {holds} |", flush=True)


if __name__ == "__main__":
    main()
