"""The C APIs from Python through ctypes (examples/python/collage.py): compile, load, run with
numpy, errors as exceptions with the library's code and message, and runs from several threads.

    COLLAGE_LIB_DIR=build/lib python tests/capi/test_capi.py DATA_DIR openvino|no-openvino

(the second argument: whether the compiler was built with OpenVINO)
"""

import json
import os
import sys
import threading

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python"))
import collage  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED:", what, file=sys.stderr)


def expect_error(fn, code, part, what):
    try:
        fn()
    except collage.Error as e:
        check(e.code == code and part in e.message, f"{what}: got {e.code} {e.message!r}")
        return
    check(False, f"{what}: no error")


def check_openvino(onnx_path, x, expected, with_openvino):
    """The compiler registers the openvino backend when the library was built with OpenVINO (the
    placement is then all OpenVINO and runs to the expected outputs), and says that it was not
    otherwise."""
    if not with_openvino:
        expect_error(lambda: collage.compile_model(onnx_path, strategy="single:openvino"), 1,
                     "backend 'openvino' is not registered: this build has no OpenVINO",
                     "openvino asked for without OpenVINO")
        expect_error(lambda: collage.compile_model(onnx_path, backends=["openvino"]), 1,
                     "backend 'openvino' is not registered: this build has no OpenVINO",
                     "openvino among the backends without OpenVINO")
        print("openvino: skipped, this build has no OpenVINO (checked: a placement naming it is "
              "refused, saying so)")
        return
    artifact, report = collage.compile_model(onnx_path, strategy="single:openvino",
                                             num_threads=2)
    check(report["groups"] and all(g["backend"] == "openvino" for g in report["groups"]),
          f"single:openvino through the C API: {report['groups']}")
    with collage.Module(artifact, num_threads=2) as m:
        (logits,) = m.run(x)
        check(np.allclose(logits, expected, rtol=1e-4, atol=1e-5), "openvino outputs")


def main(data, with_openvino):
    x = np.load(os.path.join(data, "input.npy"))
    expected = np.load(os.path.join(data, "expected.npy"))
    onnx_path = os.path.join(data, "mlp.onnx")
    check(collage.runtime_version() != "", "version")

    # Compile from a file and from bytes.
    artifact_path = os.path.join(data, "mlp_from_python.collage")
    path, report = collage.compile_model(onnx_path, artifact_path, strategy="single:eigen")
    check(path == artifact_path and all(g["backend"] == "eigen" for g in report["groups"]),
          "compile_file report")
    with open(onnx_path, "rb") as f:
        artifact, _ = collage.compile_model(f.read(), strategy="single:eigen")
    check(artifact[:8] == b"COLLAGE\0", "compile_memory gives an artifact")

    for source in (artifact_path, artifact):
        with collage.Module(source, num_threads=2) as m:
            check([i.name for i in m.inputs] == ["x"] and m.inputs[0].shape == (1, 16),
                  "input info")
            check(m.outputs[0].name == "logits" and m.outputs[0].dtype == np.float32,
                  "output info")
            (logits,) = m.run(x)
            check(np.allclose(logits, expected, rtol=1e-4, atol=1e-5), "outputs")

    with collage.Module(artifact) as m:
        expect_error(lambda: m.run(x.astype(np.float64)), 1,
                     "input 0 'x': expected f32[1x16], got f64[1x16]",
                     "wrong dtype")
        expect_error(lambda: m.run(x.reshape(2, 8)), 1,
                     "input 0 'x': expected f32[1x16], got f32[2x8]", "wrong shape")
        expect_error(lambda: m.run(), 1, "the model takes 1 inputs", "no inputs")
        # Non-contiguous input: made contiguous by the wrapper.
        wide = np.zeros((1, 32), np.float32)
        wide[:, ::2] = x
        (logits,) = m.run(wide[:, ::2])
        check(np.allclose(logits, expected, rtol=1e-4, atol=1e-5), "strided input")

        # Four threads at once give the single-threaded result.
        inputs = [np.random.default_rng(i).standard_normal((1, 16)).astype(np.float32)
                  for i in range(4)]
        single = [m.run(a)[0] for a in inputs]
        results = [[] for _ in inputs]

        def work(i):
            for _ in range(50):
                results[i].append(m.run(inputs[i])[0])

        threads = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        check(all(np.array_equal(r, single[i]) for i in range(len(inputs)) for r in results[i]),
              "threads")

        m.set_profiling(True)
        m.run(x)
        trace = os.path.join(data, "python_trace.json")
        m.write_profile(trace)
        with open(trace) as f:
            events = json.load(f)["traceEvents"]
        check(any(e.get("cat") == "eigen" for e in events), "profile events")

    # A batch range: one artifact for batches 1 to 4, run at batch 3 and at batch 1.
    x3 = np.load(os.path.join(data, "input3.npy"))
    expected3 = np.load(os.path.join(data, "expected3.npy"))
    batched, report = collage.compile_model(os.path.join(data, "mlp_batch.onnx"),
                                            strategy="single:eigen", input_shapes={"x": [-1, 16]},
                                            batch_range=(1, 4))
    check(report["padded"] and [b["batch"] for b in report["batches"]] == [1, 2, 4],
          f"batch range report: {report.get('batches')}")
    with collage.Module(batched) as m:
        check(m.inputs[0].batch_axis == 0 and m.inputs[0].batch_range == (1, 4), "batch info")
        (logits3,) = m.run(x3)
        check(logits3.shape == (3, 10) and np.allclose(logits3, expected3, rtol=1e-4, atol=1e-5),
              "batch 3")
        (logits1,) = m.run(x3[:1])
        check(np.allclose(logits1, expected3[:1], rtol=1e-4, atol=1e-5), "batch 1")
        expect_error(lambda: m.run(np.zeros((5, 16), np.float32)), 1,
                     "compiled for batches 1 to 4", "batch 5")

    expect_error(lambda: collage.Module(artifact[: len(artifact) // 2]), 3, "truncated artifact",
                 "truncated")
    expect_error(lambda: collage.Module("/no/such.collage"), 2, "/no/such.collage", "missing")
    expect_error(lambda: collage.compile_model(b"garbage", strategy="single:eigen"), 1, "",
                 "garbage model")
    check_openvino(onnx_path, x, expected, with_openvino)

    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("all Python API checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2] == "openvino"))
