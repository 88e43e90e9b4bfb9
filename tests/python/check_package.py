"""The installed collage package (run by test_wheel.py in a fresh venv that has only collage and
numpy): compile, load and run a transformer encoder (bert_small of the model cache) and compare
with ONNX Runtime's outputs; artifacts as bytes and files; inputs by name, by position, through
DLPack; the progress callback; the GIL released while compiling; errors with their codes; the
Triton helpers that need no server.

    check_package.py MODEL_CACHE CAPI_DATA_DIR
"""
import json
import os
import sys
import tempfile
import threading
import time

import numpy as np

import collage
from collage.triton.config import config_pbtxt

cache, capi = sys.argv[1], sys.argv[2]
site = os.path.dirname(os.path.dirname(os.path.abspath(collage.__file__)))
assert site.startswith(sys.prefix), f"collage imported from {site}, not from the venv"


def scaled_error(actual, expected):
    scale = float(np.max(np.abs(expected))) or 1.0
    return float(np.max(np.abs(actual.astype(np.float64) - expected))) / scale


# --- compile (a path), with progress ---------------------------------------------------------
manifest = {m["name"]: m for m in json.load(open(os.path.join(cache, "models.json")))["models"]}
bert = manifest["bert_small"]
onnx_path = os.path.join(cache, bert["onnx"])
inputs = dict(np.load(os.path.join(cache, bert["inputs_npz"])))
references = dict(np.load(os.path.join(cache, bert["outputs_npz"])))  # ONNX Runtime's
phases = []
artifact = collage.compile(onnx_path, placement="greedy",
                           progress=lambda p: phases.append(p["phase"]))
assert phases[0] == "import" and phases[-1] == "build", phases
assert {g["backend"] for g in artifact.report["groups"]} <= {"dnnl", "eigen", "native", "openvino",
                                                             "trees"}
print(f"compiled {bert['name']}: {artifact}, phases {sorted(set(phases))}")

# --- load: from the Artifact, bytes, a file ---------------------------------------------------
with tempfile.TemporaryDirectory() as tmp:
    path = artifact.save(os.path.join(tmp, "bert.collage"))
    assert open(path, "rb").read() == bytes(artifact)
    modules = [collage.load(artifact), collage.load(bytes(artifact)), collage.load(path)]
module = modules[0]
assert [t.name for t in module.inputs] == [i["name"] for i in bert["inputs"]], module.inputs
assert [t.shape for t in module.outputs] == [tuple(o["shape"]) for o in bert["outputs"]]
for m in modules:
    outputs = m.run(inputs)  # by name
    for info, out in zip(m.outputs, outputs):
        error = scaled_error(out, references[info.name])
        assert error <= bert["rtol"], f"{info.name}: error {error} against ONNX Runtime"
print(f"{bert['name']}: outputs within {bert['rtol']} of ONNX Runtime (3 ways of loading)")

# Positional inputs, preallocated outputs, and a producer that exports only DLPack.
ordered = [inputs[t.name] for t in module.inputs]
out = [np.empty(t.shape, t.dtype) for t in module.outputs]
assert module.run(*ordered, out=out) is out
np.testing.assert_array_equal(out[0], outputs[0])


class DLPackOnly:
    """An array that other libraries can read only through DLPack."""

    def __init__(self, array):
        self.array, self.calls = array, 0

    def __dlpack__(self, **kwargs):
        self.calls += 1
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


producers = [DLPackOnly(a) for a in ordered]
np.testing.assert_array_equal(module.run(*producers)[0], outputs[0])
assert all(p.calls == 1 for p in producers), [p.calls for p in producers]
view = np.from_dlpack(outputs[0])
assert np.shares_memory(view, outputs[0])

# --- ONNX bytes; the GIL released while compiling and while running --------------------------
def main_thread_ticks(work):
    """Runs WORK on a thread; returns how often the main thread looped meanwhile (each turn
    gives the GIL up) and the seconds WORK took. While a call holds the GIL the main thread
    cannot loop: at most a turn or two between calls."""
    done, ticks = threading.Event(), 0
    worker = threading.Thread(target=lambda: (work(), done.set()))
    t0 = time.perf_counter()
    worker.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0)
    worker.join()
    return ticks, time.perf_counter() - t0


result = {}
ticks, seconds = main_thread_ticks(lambda: result.setdefault(
    "artifact", collage.compile(open(onnx_path, "rb").read(), placement="single:dnnl")))
print(f"compile from bytes: {seconds:.2f} s, {ticks} ticks of the main thread meanwhile")
assert ticks >= 100, "the main thread did not run while compiling: the GIL was held"
bytes_module = collage.load(result["artifact"])
np.testing.assert_allclose(bytes_module.run(inputs)[0], outputs[0], rtol=1e-4, atol=1e-4)
ticks, seconds = main_thread_ticks(lambda: [bytes_module.run(*ordered) for _ in range(50)])
print(f"50 runs: {seconds:.2f} s, {ticks} ticks of the main thread meanwhile")
assert ticks >= 5 * 50, "the main thread hardly ran while running: the GIL was held"

# --- errors: the library's code and message -----------------------------------------------------
def expect(error_type, code, part, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except error_type as e:
        assert e.code == code and part in e.message, (e.code, e.message)
        return
    raise AssertionError(f"{fn.__name__}{args}: expected {error_type.__name__}")


damaged = bytearray(bytes(artifact))
damaged[len(damaged) // 2] ^= 0xFF
expect(collage.CorruptArtifactError, collage.StatusCode.CORRUPT, "checksum", collage.load,
       bytes(damaged))
expect(collage.NotFoundError, collage.StatusCode.NOT_FOUND, "/no/such.collage", collage.load,
       "/no/such.collage")
wrong = [np.zeros((1, 32), np.int64)] * 2
expect(collage.InvalidArgumentError, collage.StatusCode.INVALID_ARGUMENT,
       f"input 0 '{module.inputs[0].name}'", module.run, *wrong)
expect(collage.InvalidArgumentError, collage.StatusCode.INVALID_ARGUMENT, "missing",
       module.run, {module.inputs[0].name: ordered[0]})
expect(collage.InvalidArgumentError, collage.StatusCode.INVALID_ARGUMENT, "", collage.compile,
       b"not an onnx model", placement="single:eigen")
expect(collage.NotFoundError, collage.StatusCode.NOT_FOUND, "/no/model.onnx", collage.compile,
       "/no/model.onnx")
try:
    collage.compile(onnx_path, placement="fastest")
    raise AssertionError("a bad placement was accepted")
except ValueError as e:
    assert "fastest" in str(e)


def stop(progress):
    raise KeyboardInterrupt("stop")


try:
    collage.compile(onnx_path, placement="single:eigen", progress=stop)
    raise AssertionError("the progress callback's exception was lost")
except KeyboardInterrupt as e:
    assert str(e) == "stop"
module.close()
try:
    module.run(*ordered)
    raise AssertionError("a closed module ran")
except ValueError as e:
    assert "closed" in str(e)
print("errors: codes and messages as expected")

# --- the Triton config of an artifact without a batch range: its shapes, no batching ----------
m = modules[1]
assert m.batch_range is None and all(t.batch_axis is None for t in m.inputs + m.outputs)
plain = config_pbtxt("bert", m.inputs, m.outputs, m.batch_range, parameters={"num_threads": 1})
assert "max_batch_size: 0" in plain and "dims: [ 2, 32 ]" in plain and "dynamic" not in plain
assert 'dims: [ 2, 32, 128 ]' in plain and 'key: "num_threads"' in plain, plain
print("package checks passed")
