"""collage from Python through ctypes: compile a model, load an artifact, run it on numpy arrays.

Pure Python (no compiled extension): it calls libcollage_compiler.so (include/collage/collage.h)
and libcollage_runtime.so (include/collage/runtime.h). The libraries are looked up in
$COLLAGE_LIB_DIR, then by the dynamic linker's default search path.

    import collage
    artifact, report = collage.compile_model("mlp.onnx", strategy="single:eigen")
    with collage.Module(artifact) as m:
        (logits,) = m.run(x)

Errors from the libraries raise collage.Error with the library's code and message.
"""

import ctypes
import json
import os
import tempfile
import threading

import numpy as np

# collage_status_code_t
STATUS_NAMES = {1: "INVALID_ARGUMENT", 2: "NOT_FOUND", 3: "CORRUPT", 4: "UNSUPPORTED",
                5: "KERNEL_FAILED", 6: "INTERNAL", 7: "IO"}
LOAD_BORROW_BUFFER = 1

# collage_dtype_t -> numpy (bf16 has no numpy type: its raw 16-bit words as uint16)
_NUMPY_DTYPES = [np.float32, np.float16, np.uint16, np.int8, np.int32, np.int64, np.bool_]
_KDLINT, _KDLUINT, _KDLFLOAT, _KDLCPU = 0, 1, 2, 1


class Error(RuntimeError):
    """A failed call: `code` is a collage_status_code_t, `message` the library's text."""

    def __init__(self, code, message):
        super().__init__(f"{STATUS_NAMES.get(code, code)}: {message}")
        self.code = code
        self.message = message


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _TensorInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("name", ctypes.c_char_p),
                ("dtype", ctypes.c_int32), ("dl_dtype", _DLDataType), ("ndim", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("bytes", ctypes.c_uint64),
                ("batch_axis", ctypes.c_int32), ("batch_min", ctypes.c_int64),
                ("batch_max", ctypes.c_int64)]


class _LoadOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("num_threads", ctypes.c_int32),
                ("module_dir", ctypes.c_char_p), ("flags", ctypes.c_uint32)]


class _InputShape(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("ndim", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64))]


class _CompileOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("strategy", ctypes.c_char_p),
                ("budget_seconds", ctypes.c_double), ("seed", ctypes.c_uint64),
                ("cost_db_path", ctypes.c_char_p), ("backends", ctypes.c_char_p),
                ("fallback", ctypes.c_char_p), ("num_input_shapes", ctypes.c_int32),
                ("input_shapes", ctypes.POINTER(_InputShape)), ("num_threads", ctypes.c_int32),
                ("tree_strategy", ctypes.c_char_p), ("progress", ctypes.c_void_p),
                ("progress_user_data", ctypes.c_void_p), ("target", ctypes.c_char_p),
                ("batch_min", ctypes.c_int64), ("batch_max", ctypes.c_int64),
                ("num_batch_sizes", ctypes.c_int32), ("batch_sizes", ctypes.POINTER(ctypes.c_int64)),
                ("executor", ctypes.c_char_p), ("zipmap", ctypes.c_char_p)]


def _open(name):
    lib_dir = os.environ.get("COLLAGE_LIB_DIR")
    return ctypes.CDLL(os.path.join(lib_dir, name) if lib_dir else name)


_libs = {}


def _runtime():
    if "runtime" not in _libs:
        # The oneDNN runtime module and the compiler run on OpenMP (libgomp), which reads its wait
        # policy once, when it is loaded: passive, so that its idle workers do not spin on the
        # cores collage's own threads need. The library leaves the environment to its host
        # (include/collage/runtime.h); this binding is the host here. A policy already set is kept.
        # A short spin (about 50 us, as long as collage's own pools poll) before the workers sleep:
        # with none, every oneDNN primitive wakes its team through the kernel (tools/openmp_wait.h).
        if "OMP_WAIT_POLICY" not in os.environ:
            os.environ["OMP_WAIT_POLICY"] = "passive"
            os.environ.setdefault("GOMP_SPINCOUNT", "2000")
        lib = _open("libcollage_runtime.so")
        P, c = ctypes.POINTER, ctypes
        status = c.c_void_p
        sigs = {
            "collage_runtime_version": (c.c_char_p, []),
            "collage_status_code": (c.c_int32, [status]),
            "collage_status_message": (c.c_char_p, [status]),
            "collage_status_free": (None, [status]),
            "collage_load_options_init_size": (None, [P(_LoadOptions), c.c_size_t]),
            "collage_module_load_file": (status, [c.c_char_p, P(_LoadOptions), P(c.c_void_p)]),
            "collage_module_load_memory": (status, [c.c_void_p, c.c_size_t, P(_LoadOptions),
                                                    P(c.c_void_p)]),
            "collage_module_release": (None, [c.c_void_p]),
            "collage_module_num_inputs": (c.c_int32, [c.c_void_p]),
            "collage_module_num_outputs": (c.c_int32, [c.c_void_p]),
            "collage_module_input_info": (status, [c.c_void_p, c.c_int32, P(_TensorInfo)]),
            "collage_module_output_info": (status, [c.c_void_p, c.c_int32, P(_TensorInfo)]),
            "collage_module_arena_bytes": (c.c_uint64, [c.c_void_p]),
            "collage_module_run": (status, [c.c_void_p, P(_DLTensor), c.c_int32, P(_DLTensor),
                                            c.c_int32]),
            "collage_module_run_outputs": (status, [c.c_void_p, P(_DLTensor), c.c_int32,
                                                    P(c.c_void_p)]),
            "collage_outputs_count": (c.c_int32, [c.c_void_p]),
            "collage_outputs_get": (status, [c.c_void_p, c.c_int32, P(_DLTensor)]),
            "collage_outputs_release": (None, [c.c_void_p]),
            "collage_module_set_profiling": (status, [c.c_void_p, c.c_int32]),
            "collage_module_write_profile": (status, [c.c_void_p, c.c_char_p]),
        }
        for name, (restype, argtypes) in sigs.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
        _libs["runtime"] = lib
    return _libs["runtime"]


def _compiler_lib():
    if "compiler" not in _libs:
        _runtime()
        lib = _open("libcollage_compiler.so")
        P, c = ctypes.POINTER, ctypes
        sigs = {
            "collage_compiler_create": (c.c_void_p, [P(c.c_void_p)]),
            "collage_compiler_release": (None, [c.c_void_p]),
            "collage_compiler_load_plugin": (c.c_void_p, [c.c_void_p, c.c_char_p]),
            "collage_compile_options_init_size": (None, [P(_CompileOptions), c.c_size_t]),
            "collage_compile_file": (c.c_void_p, [c.c_void_p, c.c_char_p, P(_CompileOptions),
                                                  c.c_char_p, P(c.c_void_p)]),
            "collage_compile_memory": (c.c_void_p, [c.c_void_p, c.c_void_p, c.c_size_t,
                                                    P(_CompileOptions), P(c.c_void_p),
                                                    P(c.c_size_t), P(c.c_void_p)]),
            "collage_free": (None, [c.c_void_p]),
        }
        for name, (restype, argtypes) in sigs.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
        _libs["compiler"] = lib
    return _libs["compiler"]


def _check(status):
    """Raises Error for a non-NULL status (and frees it)."""
    if status:
        rt = _runtime()
        code = rt.collage_status_code(status)
        message = rt.collage_status_message(status).decode()
        rt.collage_status_free(status)
        raise Error(code, message)


def runtime_version():
    return _runtime().collage_runtime_version().decode()


def _dl_dtype(dtype):
    if dtype == np.bool_:
        return _DLDataType(_KDLUINT, 8, 1)
    code = {"f": _KDLFLOAT, "i": _KDLINT}.get(dtype.kind, _KDLUINT)
    return _DLDataType(code, dtype.itemsize * 8, 1)


def _dl_tensor(array, keep):
    """A DLTensor viewing `array` (C-contiguous); `keep` holds what must outlive the call."""
    shape = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
    keep.append(shape)
    return _DLTensor(array.ctypes.data, _DLDevice(_KDLCPU, 0), array.ndim, _dl_dtype(array.dtype),
                     shape, None, 0)


class TensorInfo:
    """A graph input or output: name, numpy dtype, shape. An artifact compiled for a batch range
    has `batch_axis` (else None) taking any size from batch_min to batch_max; `shape` is then the
    largest batch's."""

    def __init__(self, info):
        self.name = info.name.decode()
        self.dtype = np.dtype(_NUMPY_DTYPES[info.dtype])
        self.shape = tuple(info.shape[i] for i in range(info.ndim))
        self.batch_axis = info.batch_axis if info.batch_axis >= 0 else None
        self.batch_range = (info.batch_min, info.batch_max) if info.batch_axis >= 0 else None

    def __repr__(self):
        return f"TensorInfo({self.name!r}, {self.dtype}, {self.shape})"


class _Handle:
    """An object of the C API, released by close(), at the end of a `with` block, or when
    collected."""

    _handle = None

    def close(self):
        if self._handle:
            self._release()
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


class Module(_Handle):
    """A loaded artifact (a path or the artifact's bytes). Thread-safe: run() may be called from
    several threads at once. Release it with close() or a `with` block."""

    def __init__(self, artifact, num_threads=0, module_dir=None):
        rt = _runtime()
        options = _LoadOptions()
        rt.collage_load_options_init_size(ctypes.byref(options), ctypes.sizeof(options))
        options.num_threads = num_threads
        options.module_dir = module_dir.encode() if module_dir else None
        handle = ctypes.c_void_p()
        if isinstance(artifact, (bytes, bytearray, memoryview)):
            data = bytes(artifact)
            _check(rt.collage_module_load_memory(data, len(data), ctypes.byref(options),
                                                 ctypes.byref(handle)))
        else:
            _check(rt.collage_module_load_file(os.fsencode(artifact), ctypes.byref(options),
                                               ctypes.byref(handle)))
        self._handle = handle
        self.inputs = [self._info(rt.collage_module_input_info, i)
                       for i in range(rt.collage_module_num_inputs(handle))]
        self.outputs = [self._info(rt.collage_module_output_info, i)
                        for i in range(rt.collage_module_num_outputs(handle))]
        self.arena_bytes = rt.collage_module_arena_bytes(handle)
        self._views = threading.local()  # per thread: (key, dl_in, dl_out, keep); see _dl_views

    def _info(self, fn, index):
        info = _TensorInfo()
        info.struct_size = ctypes.sizeof(_TensorInfo)
        _check(fn(self._handle, index, ctypes.byref(info)))
        return TensorInfo(info)

    def run(self, *inputs):
        """Runs the model on one array per graph input; returns one new array per output. The
        arrays are passed as they are (made C-contiguous): a wrong dtype or shape raises Error
        naming the input. An artifact compiled for a batch range takes any batch of it, and its
        outputs have the inputs' batch; an output whose shape depends on the data (NonZero,
        NonMaxSuppression) comes out with its size of this run."""
        arrays = [np.ascontiguousarray(a) for a in inputs]
        if any(d < 0 for o in self.outputs for d in o.shape):
            return self._run_outputs(arrays)
        batch = next((a.shape[i.batch_axis] for a, i in zip(arrays, self.inputs)
                      if i.batch_axis is not None and a.ndim > i.batch_axis), None)
        outputs = [np.empty(self._output_shape(o, batch), o.dtype) for o in self.outputs]
        dl_in, dl_out = self._dl_views(arrays, outputs)
        _check(_runtime().collage_module_run(self._handle, dl_in, len(arrays), dl_out,
                                             len(outputs)))
        return outputs

    def _run_outputs(self, arrays):
        """A run whose outputs the library allocates: for outputs whose shapes depend on the
        data (a -1 in their shape). Copies them into new arrays."""
        rt = _runtime()
        keep = []
        dl_in = (_DLTensor * max(len(arrays), 1))(*[_dl_tensor(a, keep) for a in arrays])
        outs = ctypes.c_void_p()
        _check(rt.collage_module_run_outputs(self._handle, dl_in, len(arrays),
                                             ctypes.byref(outs)))
        try:
            result = []
            for i, info in enumerate(self.outputs):
                t = _DLTensor()
                _check(rt.collage_outputs_get(outs, i, ctypes.byref(t)))
                shape = tuple(t.shape[d] for d in range(t.ndim))
                count = int(np.prod(shape)) if shape else 1
                buf = (ctypes.c_uint8 * (count * info.dtype.itemsize)).from_address(t.data) \
                    if count else b""
                result.append(np.frombuffer(buf, dtype=info.dtype, count=count)
                              .reshape(shape).copy())
            return result
        finally:
            rt.collage_outputs_release(outs)

    @staticmethod
    def _output_shape(info, batch):
        if batch is None or info.batch_axis is None:
            return info.shape
        shape = list(info.shape)
        shape[info.batch_axis] = batch
        return tuple(shape)

    def _dl_views(self, arrays, outputs):
        """The DLTensor arrays of one call. Building them costs about 5 us, a third of a small
        model's run, so each thread keeps the last ones and, while the inputs' shapes and dtypes
        stay the same, only points them at the new arrays."""
        key = tuple((a.shape, a.dtype.str) for a in arrays)
        cached = getattr(self._views, "last", None)
        if cached is None or cached[0] != key:
            keep = []
            dl_in = (_DLTensor * max(len(arrays), 1))(*[_dl_tensor(a, keep) for a in arrays])
            dl_out = (_DLTensor * max(len(outputs), 1))(*[_dl_tensor(a, keep) for a in outputs])
            self._views.last = (key, dl_in, dl_out, keep)
            return dl_in, dl_out
        _, dl_in, dl_out, _ = cached
        for view, a in zip(dl_in, arrays):
            view.data = a.ctypes.data
        for view, a in zip(dl_out, outputs):
            view.data = a.ctypes.data
        return dl_in, dl_out

    def set_profiling(self, enabled):
        _check(_runtime().collage_module_set_profiling(self._handle, int(bool(enabled))))

    def write_profile(self, path):
        """Writes the timed runs as a Chrome trace (JSON) to `path`."""
        _check(_runtime().collage_module_write_profile(self._handle, os.fsencode(path)))

    def _release(self):
        _runtime().collage_module_release(self._handle)


class Compiler(_Handle):
    """A compiler with the built-in backends (eigen, dnnl, reference); plugins can be added."""

    def __init__(self):
        handle = ctypes.c_void_p()
        _check(_compiler_lib().collage_compiler_create(ctypes.byref(handle)))
        self._handle = handle

    def load_plugin(self, path):
        _check(_compiler_lib().collage_compiler_load_plugin(self._handle, os.fsencode(path)))

    def compile(self, model, artifact_path=None, strategy=None, budget_seconds=0, seed=0,
                cost_db=None, backends=None, fallback=None, input_shapes=None, num_threads=0,
                tree_strategy=None, target=None, batch_range=None, batch_sizes=None,
                executor=None):
        """Compiles `model` (a path to an ONNX, XGBoost JSON or LightGBM text model, or ONNX
        bytes) into an artifact. With `artifact_path` the artifact is written there and the path
        returned, else its bytes are returned. Returns (artifact, report), the report being the
        placement report as a dict. `tree_strategy` is the strategy of a tree model, or of an ONNX
        model's tree-ensemble nodes (None: measured, as collage_compile_options_t.tree_strategy);
        `target` the CPU generated code is compiled for (None: this machine; "avx2", "avx512" or
        an LLVM CPU name, as collage_compile_options_t.target).
        `batch_range` (min, max) makes an artifact that runs any batch of the range: a dimension
        of `input_shapes` given as -1 is the batch; `batch_sizes` lists the batches that get a
        plan (None: the range's ends and the powers of two between).
        `executor` the artifact's default executor ("auto" when None, "waves", "sequential")."""
        lib = _compiler_lib()
        o = _CompileOptions()
        lib.collage_compile_options_init_size(ctypes.byref(o), ctypes.sizeof(o))
        keep = []

        def text(s):
            if s is None:
                return None
            keep.append(s.encode())
            return keep[-1]

        o.strategy, o.budget_seconds, o.seed = text(strategy), budget_seconds, seed
        o.cost_db_path, o.fallback = text(cost_db), text(fallback)
        o.backends = text(",".join(backends) if backends else None)
        o.num_threads, o.tree_strategy = num_threads, text(tree_strategy)
        o.target = text(target)
        if batch_range:
            o.batch_min, o.batch_max = batch_range
            if batch_sizes:
                sizes = (ctypes.c_int64 * len(batch_sizes))(*batch_sizes)
                keep.append(sizes)
                o.num_batch_sizes, o.batch_sizes = len(batch_sizes), sizes
        o.executor = text(executor)
        shapes = list((input_shapes or {}).items())
        if shapes:
            arr = (_InputShape * len(shapes))()
            for i, (name, shape) in enumerate(shapes):
                dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
                keep.append(dims)
                arr[i] = _InputShape(text(name), len(shape), dims)
            o.num_input_shapes, o.input_shapes = len(shapes), arr
        report = ctypes.c_void_p()
        if isinstance(model, (bytes, bytearray, memoryview)):
            data = bytes(model)
            out, size = ctypes.c_void_p(), ctypes.c_size_t()
            _check(lib.collage_compile_memory(self._handle, data, len(data), ctypes.byref(o),
                                              ctypes.byref(out), ctypes.byref(size),
                                              ctypes.byref(report)))
            artifact = ctypes.string_at(out, size.value)
            lib.collage_free(out)
            if artifact_path:
                with open(artifact_path, "wb") as f:
                    f.write(artifact)
                artifact = artifact_path
        elif artifact_path is None:
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "model.collage")
                _check(lib.collage_compile_file(self._handle, os.fsencode(model), ctypes.byref(o),
                                                os.fsencode(path), ctypes.byref(report)))
                with open(path, "rb") as f:
                    artifact = f.read()
        else:
            _check(lib.collage_compile_file(self._handle, os.fsencode(model), ctypes.byref(o),
                                            os.fsencode(artifact_path), ctypes.byref(report)))
            artifact = artifact_path
        text_report = ctypes.string_at(report).decode()
        lib.collage_free(report)
        return artifact, json.loads(text_report)

    def _release(self):
        _compiler_lib().collage_compiler_release(self._handle)


def compile_model(model, artifact_path=None, **options):
    """Compiler().compile(...) with a compiler of its own; see Compiler.compile."""
    with Compiler() as c:
        return c.compile(model, artifact_path, **options)
