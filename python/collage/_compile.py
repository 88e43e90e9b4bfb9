"""Compiling a model: collage.compile and collage.Artifact."""
import json
import os
import tempfile

_PLACEMENTS = ("two-level", "op-level", "greedy")


class Artifact:
    """A compiled model: `data` (the artifact file's bytes) and `report` (the placement report
    as a dict: "groups" with each group's backend, nodes and measured cost, and for tree models
    "tree_strategies"; with a batch range, "batch_min", "batch_max", "padded" and "batches":
    [{"batch", "placement"}], one placement per batch given a plan). bytes(artifact) is its
    data; save() writes it; collage.load() runs it."""

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
        # A batch range's report holds one placement per batch ("batches").
        placements = [b.get("placement", {}) for b in self.report.get("batches", [])]
        groups = [g for p in placements or [self.report] for g in p.get("groups", [])]
        backends = sorted({g.get("backend", "?") for g in groups})
        return f"collage.Artifact({len(self.data)} bytes, backends {backends})"


def _batch_options(o, batch_range, batch_sizes):
    if batch_range is None:
        if batch_sizes:
            raise ValueError("batch_sizes needs a batch_range")
        return
    try:
        low, high = (int(b) for b in batch_range)
    except (TypeError, ValueError):
        raise ValueError(f"batch_range must be (min, max), not {batch_range!r}") from None
    o.batch_min, o.batch_max = low, high
    o.batch_sizes = [int(b) for b in (batch_sizes or ())]


def _options(placement, budget, seed, cost_db, backends, fallback, input_shapes, num_threads,
             tree_strategy, progress, batch_range, batch_sizes, zipmap=None):
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
    o.zipmap = zipmap or ""
    o.input_shapes = {name: [int(d) for d in shape] for name, shape in (input_shapes or {}).items()}
    _batch_options(o, batch_range, batch_sizes)
    if progress is not None:
        o.progress = progress
    return o


def compile(model, placement="two-level", budget=None, cost_db=None, input_shapes=None, *,
            backends=None, fallback=None, seed=0, num_threads=0, tree_strategy=None,
            progress=None, plugins=(), batch_range=None, batch_sizes=None, zipmap=None):
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
        {"input": (batch, features)} sets the batch). With a batch_range, -1 marks the batch
        axis of each batched input: {"x": (-1, 3, 224, 224)}.
    backends: the backends that may take part (names, or "eigen,dnnl"); None: all.
    fallback: the backend that takes what no other runs (None: "native", generated code).
    seed: the search's seed (the same seed and cost database give the same placement).
    num_threads: threads a kernel may use while measured (0: one per core).
    tree_strategy: None/"measured", "auto", "fused", "ptt", "tt" or "gemm" for tree ensembles.
    zipmap: what an ai.onnx.ml ZipMap node becomes: None/"refuse" (an error naming the node) or
        "probabilities" (its input, the [batch, classes] probabilities, is the output).
    progress: called with a dict {"phase", "done", "total", "generation", "best_ms", "detail"}
        as the compile goes ("import", "candidates", "measure", "op-level", "evolve",
        "finalists", "done", "build", "tree-strategy"); an exception it raises stops further
        calls and is raised when the compile returns.
    plugins: paths of backend plugins (include/collage/backend_plugin.h) that take part.
    batch_range: (min, max): the artifact runs any batch from min to max (1 <= min < max) on
        the axes input_shapes mark with -1; a plan is placed and built for each of batch_sizes
        (ascending, ending with max; None: min, the powers of two between, and max), and a batch
        without a plan of its own runs on the next larger one when the compiler proves that the
        model keeps batch rows apart (otherwise every batch gets a plan). The loaded module
        reports it (Module.batch_range, TensorInfo.batch_axis). The budget is shared among the
        plans.

    The GIL is released while compiling. Errors raise collage.Error subclasses with the
    library's code and a message naming the file, node or backend at fault."""
    from . import _compiler
    options = _options(placement, budget, seed, cost_db, backends, fallback, input_shapes,
                       num_threads, tree_strategy, progress, batch_range, batch_sizes, zipmap)
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
