"""Classifies one input with collage from Python: compiles an ONNX model (or loads an artifact),
runs it on the array in a .npy file and prints the class with the highest score.

    python classify.py model.onnx input.npy [--strategy single:eigen]
    python classify.py model.collage input.npy
"""

import argparse
import os
import sys

import numpy as np

import collage


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="an ONNX model, or an artifact written by collage compile")
    parser.add_argument("input", help="the input array (.npy)")
    parser.add_argument("--strategy", default="single:eigen", help="placement strategy")
    args = parser.parse_args()

    with open(args.model, "rb") as f:
        is_artifact = f.read(8) == b"COLLAGE\0"
    try:
        if is_artifact:
            artifact = args.model
        else:
            artifact, report = collage.compile_model(args.model, strategy=args.strategy)
            backends = sorted({g["backend"] for g in report["groups"]})
            print(f"compiled {os.path.basename(args.model)}: {len(report['groups'])} groups on "
                  f"{', '.join(backends)}")
        with collage.Module(artifact) as module:
            (scores,) = module.run(np.load(args.input))
    except collage.Error as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    best = int(np.argmax(scores.reshape(-1)))
    print(f"top class: {best} (score {scores.reshape(-1)[best]:.4f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
