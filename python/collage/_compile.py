"""Compiling a model: collage.compile and collage.Artifact."""
import json
import os
import tempfile

_PLACEMENTS = ("two-level", "op-level", "greedy")


class Artifact:
    """A compiled model: `data` (the artifact file's bytes) and `report` (the placement report
    as a dict: "groups" with each group's backend, nodes and measured cost, and for tree models
    "tree_strategies"). bytes(artifact) is its data; save() writes it; collage.load() runs it."""

    def __init__(self, data, report):
        self.data = data
        self.report = report

    def save(self, path):
        """Writes the artifact to `path` atomically (a temporary file renamed into place)."""
        path = os.fspath(path)
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".collage-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(self.data)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
        return path

    def __bytes__(self):
        return bytes(self.data)

    def __len__(self):
        return len(self.data)

    def __repr__(self):
        backends = sorted({g.get("backend", "?") for g in self.report.get("groups", [])})
        return f"collage.Artifact({len(self.data)} bytes, backends {backends})"


def _options(placement, budget, seed, cost_db, backends, fallback, input_shapes, num_threads,
             tree_strategy, progress):
    from . import _compiler
    if not (placement in _PLACEMENTS or placement.startswith("single:")):
        raise ValueError(f"placement must be one of {_PLACEMENTS} or 'single:BACKEND', "
                         f"not {placement!r}")
    if progress is not None and not callable(progress):
        raise TypeError("progress must be callable (it is given a dict) or None")
    o = _compiler.CompileOptions()
    o.strategy = placement
    o.budget_seconds = float(budget or 0)
    o.seed = int(seed)
    o.cost_db = os.fspath(cost_db) if cost_db else ""
    o.backends = backends if isinstance(backends, str) else ",".join(backends or ())
    o.fallback = fallback or ""
    o.num_threads = int(num_threads)
    o.tree_strategy = tree_strategy or ""
    o.input_shapes = {name: [int(d) for d in shape] for name, shape in (input_shapes or {}).items()}
    if progress is not None:
        o.progress = progress
    return o


def compile(model, placement="two-level", budget=None, cost_db=None, input_shapes=None, *,
            backends=None, fallback=None, seed=0, num_threads=0, tree_strategy=None,
            progress=None, plugins=()):
    """Compiles a model into an artifact (collage.Artifact).

    model: a path to an ONNX, XGBoost JSON or LightGBM text model (told apart by content), or
        ONNX bytes, or an onnx.ModelProto.
    placement: how the nodes are shared out among the backends: "two-level" (measured op-level
        search, then an evolutionary search over end-to-end latencies within `budget`),
        "op-level", "greedy" or "single:BACKEND" (e.g. "single:dnnl").
    budget: seconds for the graph-level search (None: 60).
    cost_db: a cost database file, read and extended, so that a later compile measures nothing
        twice (None: costs are not kept).
    input_shapes: {input name: shape} for inputs with symbolic dimensions (for a tree model,
        {"input": (batch, features)} sets the batch).
    backends: the backends that may take part (names, or "eigen,dnnl"); None: all.
    fallback: the backend that takes what no other runs (None: "native", generated code).
    seed: the search's seed (the same seed and cost database give the same placement).
    num_threads: threads a kernel may use while measured (0: one per core).
    tree_strategy: None/"measured", "auto", "fused", "ptt", "tt" or "gemm" for tree ensembles.
    progress: called with a dict {"phase", "done", "total", "generation", "best_ms", "detail"}
        as the compile goes ("import", "candidates", "measure", "op-level", "evolve",
        "finalists", "done", "build", "tree-strategy"); an exception it raises stops further
        calls and is raised when the compile returns.
    plugins: paths of backend plugins (include/collage/backend_plugin.h) that take part.

    The GIL is released while compiling. Errors raise collage.Error subclasses with the
    library's code and a message naming the file, node or backend at fault."""
    from . import _compiler
    options = _options(placement, budget, seed, cost_db, backends, fallback, input_shapes,
                       num_threads, tree_strategy, progress)
    compiler = _compiler.Compiler()
    for plugin in plugins:
        compiler.load_plugin(os.fspath(plugin))
    if hasattr(model, "SerializeToString"):  # an onnx.ModelProto
        model = model.SerializeToString()
    if isinstance(model, (bytes, bytearray, memoryview)):
        data, report = compiler.compile_memory(bytes(model), options)
    else:
        with tempfile.TemporaryDirectory(prefix="collage-") as tmp:
            path = os.path.join(tmp, "model.collage")
            report = compiler.compile_file(os.fspath(model), path, options)
            with open(path, "rb") as f:
                data = f.read()
    return Artifact(data, json.loads(report) if report else {})
