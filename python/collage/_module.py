"""Loading an artifact and running it: collage.load and collage.Module."""
import os

import numpy as np

from . import _runtime

_DTYPE_BOOL = 6  # COLLAGE_DTYPE_BOOL: {kDLUInt, 8, 1} to DLPack, numpy's bool here
_DTYPE_STRING = 13  # COLLAGE_DTYPE_STRING: numpy object arrays of str here
_KDL_INT, _KDL_UINT, _KDL_FLOAT = 0, 1, 2


def _numpy_dtype(dtype, dl_dtype):
    code, bits, lanes = dl_dtype
    if dtype == _DTYPE_BOOL:
        return np.dtype(np.bool_)
    if dtype == _DTYPE_STRING:
        return np.dtype(object)
    kind = {_KDL_INT: "i", _KDL_UINT: "u", _KDL_FLOAT: "f"}.get(code)
    if kind is None or lanes != 1:
        return None  # bf16 and the like: numpy has no such type
    return np.dtype(f"{kind}{bits // 8}")


class TensorInfo:
    """A graph input or output of a loaded artifact: name, numpy dtype (None where numpy has no
    such type, e.g. bf16), shape (a tuple of ints; for an artifact with a batch range, the
    largest batch's) and batch_axis (the axis whose size may be any batch of the module's
    batch_range; None for a tensor without one)."""

    __slots__ = ("name", "dtype", "shape", "batch_axis")

    def __init__(self, name, dtype, shape, batch_axis=None):
        self.name, self.dtype, self.shape = name, dtype, tuple(shape)
        self.batch_axis = batch_axis

    def __repr__(self):
        batch = "" if self.batch_axis is None else f", batch_axis={self.batch_axis}"
        return f"TensorInfo({self.name!r}, {self.dtype}, {self.shape}{batch})"

    def __eq__(self, other):
        return (isinstance(other, TensorInfo) and
                (self.name, self.dtype, self.shape, self.batch_axis) ==
                (other.name, other.dtype, other.shape, other.batch_axis))


def _infos(raw):
    return [TensorInfo(name, _numpy_dtype(dtype, dl), shape, axis if axis >= 0 else None)
            for name, dtype, dl, shape, (axis, _, _) in raw]


def _batch_range(raw):
    """(min, max) of the tensors with a batch axis (the runtime gives them all the same range);
    None when there is none."""
    ranges = {(low, high) for _, _, _, _, (axis, low, high) in raw if axis >= 0}
    return ranges.pop() if ranges else None


def _as_array(x):
    """Anything that exports DLPack or the buffer protocol goes to the runtime as it is (no
    copy); other values (lists, scalars) become numpy arrays. A string array (numpy dtype U, S
    or object holding str or bytes) goes as (shape, list of bytes): str elements as UTF-8."""
    if isinstance(x, np.ndarray):
        a = x
    elif hasattr(x, "__dlpack__") or isinstance(x, memoryview):
        return x
    else:
        a = np.asarray(x)
    if a.dtype.kind not in "USO":
        return a
    values = []
    for s in a.ravel(order="C").tolist():
        if isinstance(s, str):
            values.append(s.encode("utf-8"))
        elif isinstance(s, (bytes, bytearray)):
            values.append(bytes(s))
        else:
            raise TypeError(f"a string input holds a {type(s).__name__}, not str or bytes")
    return (list(a.shape), values)


def _from_strings(value):
    """A string output, (shape, list of bytes), as a numpy object array of str (as ONNX
    Runtime gives them); an element that is not UTF-8 stays bytes."""
    shape, values = value
    out = np.empty(len(values), dtype=object)
    for i, b in enumerate(values):
        try:
            out[i] = b.decode("utf-8")
        except UnicodeDecodeError:
            out[i] = b
    return out.reshape(shape)


class Module:
    """A loaded artifact. run() takes one array per graph input (numpy, or any CPU array that
    exports DLPack: PyTorch, JAX, CuPy host arrays, ...) and returns numpy arrays, which export
    DLPack in turn (torch.from_dlpack(out) shares their memory). An artifact compiled for a
    batch range (batch_range: (min, max)) runs any batch of it on the inputs' batch_axis: the
    runtime runs the plan compiled for that batch, or the next larger one, and the outputs have
    the inputs' batch. Thread-safe: run() may be called
    from several threads at once, and releases the GIL while the model runs. close() (or a
    `with` block) releases the module; it is also released when collected."""

    def __init__(self, handle):
        self._m = handle
        raw_inputs, raw_outputs = handle.inputs, handle.outputs
        self.inputs = _infos(raw_inputs)
        self.outputs = _infos(raw_outputs)
        self.batch_range = _batch_range(raw_inputs + raw_outputs)
        self._by_name = {t.name: i for i, t in enumerate(self.inputs)}

    @property
    def arena_bytes(self):
        """Bytes of intermediate memory one run uses."""
        return self._m.arena_bytes

    def run(self, *inputs, out=None):
        """Runs the model. Inputs: one array per graph input, in order, or one dict by input
        name. Returns a list with one new numpy array per output (of the shape it comes out
        with: the inputs' batch, an output whose size depends on data its size of this run), or,
        with `out` (a list of contiguous CPU arrays of the outputs' dtypes and shapes), writes
        into those and returns them. A wrong count, dtype or shape raises
        collage.InvalidArgumentError naming the input."""
        if len(inputs) == 1 and isinstance(inputs[0], dict):
            inputs = self._ordered(inputs[0])
        arrays = [_as_array(x) for x in inputs]
        if out is None:
            return [_from_strings(r) if isinstance(r, tuple) else r
                    for r in self._m.run_new(arrays)]
        self._m.run(arrays, list(out))
        return out

    __call__ = run

    def _ordered(self, named):
        unknown = sorted(set(named) - set(self._by_name))
        missing = [t.name for t in self.inputs if t.name not in named]
        if unknown or missing:
            from ._errors import InvalidArgumentError, StatusCode
            raise InvalidArgumentError(
                StatusCode.INVALID_ARGUMENT,
                f"inputs by name: unknown {unknown}, missing {missing}; the model's inputs are "
                f"{[t.name for t in self.inputs]}")
        return [named[t.name] for t in self.inputs]

    def set_profiling(self, enabled=True):
        """Per-kernel timing on or off (turning it on starts a new trace)."""
        self._m.set_profiling(bool(enabled))

    def write_profile(self, path):
        """Writes the runs timed since profiling was turned on as a Chrome trace (JSON)."""
        self._m.write_profile(os.fspath(path))

    def executor_stats(self):
        """What the executor has spent on its runs so far, as a dict (collage_executor_stats_t)."""
        return self._m.executor_stats()

    def close(self):
        self._m.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        batch = "" if self.batch_range is None else f", batch_range={self.batch_range}"
        return f"collage.Module(inputs={self.inputs}, outputs={self.outputs}{batch})"


_EXECUTORS = {None: 0, "sequential": _runtime.LOAD_EXECUTOR_SEQUENTIAL,
              "waves": _runtime.LOAD_EXECUTOR_WAVES}


def load(artifact, num_threads=0, executor=None, module_dir=None):
    """Loads an artifact: a path, the artifact's bytes, or a collage.Artifact. `num_threads`:
    threads a kernel may use (0: all cores); `executor`: "sequential", "waves" or None (the one
    the compiler measured faster); `module_dir`: searched first for runtime modules (the
    package's own are found without it). Every field is checked: a damaged artifact raises
    collage.CorruptArtifactError, a missing file collage.NotFoundError."""
    if executor not in _EXECUTORS:
        raise ValueError(f"executor must be 'sequential', 'waves' or None, not {executor!r}")
    flags = _EXECUTORS[executor]
    module_dir = os.fspath(module_dir) if module_dir else ""
    data = getattr(artifact, "data", artifact)  # a collage.Artifact
    if isinstance(data, (bytes, bytearray, memoryview)):
        handle = _runtime.load_memory(bytes(data), num_threads, flags, module_dir)
    else:
        handle = _runtime.load_file(os.fspath(data), num_threads, flags, module_dir)
    return Module(handle)
