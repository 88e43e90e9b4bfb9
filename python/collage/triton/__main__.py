"""python -m collage.triton (or collage-triton): build-repo, serve."""
import argparse
import os
import sys

from . import repository, server


def _shape(text):
    name, _, dims = text.partition("=")
    return name, [int(d) for d in dims.split("x")]


class _PhaseLog:
    """Prints each phase of the compile once, on stderr."""

    def __init__(self):
        self.phase = None

    def __call__(self, p):
        if p["phase"] != self.phase:
            self.phase = p["phase"]
            total = f" ({p['total']} candidates)" if p["total"] else ""
            print(f"compile: {self.phase}{total}", file=sys.stderr, flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(prog="collage-triton", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build-repo", help="compile an ONNX model into a Triton model repository")
    b.add_argument("model", help="ONNX model (or XGBoost JSON, LightGBM text)")
    b.add_argument("repository", help="the model repository folder (made if missing)")
    b.add_argument("--name", help="the model's name in the repository (default: file name)")
    b.add_argument("--placement", default="two-level")
    b.add_argument("--budget", type=float, help="seconds of graph-level search (default 60)")
    b.add_argument("--cost-db", help="cost database file, read and extended")
    b.add_argument("--input-shape", action="append", type=_shape, default=[],
                   metavar="NAME=1x3x224x224", help="shape of an input with symbolic dimensions")
    b.add_argument("--max-batch", type=int, default=0, metavar="N",
                   help="compile for every batch from 1 to N (the first dimension of each "
                        "input: of its --input-shape, or of the model's shape) and serve with "
                        "Triton's dynamic batching up to N; 0 (default): the model's batch, "
                        "no batching")
    b.add_argument("--queue-delay-us", type=int, default=100, metavar="US",
                   help="with --max-batch: how long Triton's batcher may hold a batch that is "
                        "not full, waiting for more requests (default 100)")
    b.add_argument("--instances", type=int, default=1, help="model instances (processes)")
    b.add_argument("--threads", type=int, default=0, help="threads per instance (0: all cores)")
    s = sub.add_parser("serve", help="run tritonserver (from nvidia-pytriton) on a repository")
    s.add_argument("repository")
    s.add_argument("--address", default="127.0.0.1")
    s.add_argument("--http-port", type=int, default=8000)
    s.add_argument("--grpc-port", type=int, default=8001)
    s.add_argument("--metrics-port", type=int, default=8002)
    args, extra = p.parse_known_args(argv)
    if args.command == "serve":
        server.serve(args.repository, args.http_port, args.grpc_port, args.metrics_port,
                     args.address, extra)
        return 0
    if extra:
        p.error(f"unrecognized arguments: {' '.join(extra)}")
    name = args.name or os.path.splitext(os.path.basename(args.model))[0]
    artifact = repository.build_from_onnx(
        args.model, args.repository, name, args.max_batch, args.instances, args.threads,
        input_shapes=dict(args.input_shape), queue_delay_us=args.queue_delay_us,
        placement=args.placement, budget=args.budget, cost_db=args.cost_db, progress=_PhaseLog())
    print(f"{args.repository}/{name}: artifact {len(artifact)} bytes")
    with open(os.path.join(args.repository, name, "config.pbtxt")) as f:
        sys.stdout.write(f.read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
