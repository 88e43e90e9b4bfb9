"""An artifact with an OpenVINO region on a machine without OpenVINO: the runtime module is there
but libopenvino is not on any search path. Loading fails with an error that names the module and
the library it needs; with OpenVINO found, the same artifact loads and runs.

    missing_library.py BUILD_DIR

Run in a process that has not loaded OpenVINO (Python with the ctypes module of
examples/python), with build/test-modules/no-openvino holding libcollage_rt_openvino.so built
without its RUNPATH (tests/backends_openvino/CMakeLists.txt)."""
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

ROOT = pathlib.Path(__file__).resolve().parents[2]


def tiny_model(path):
    rng = np.random.default_rng(3)
    w = helper.make_tensor("w", TensorProto.FLOAT, [8, 4, 3, 3],
                           rng.uniform(-1, 1, (8, 4, 3, 3)).astype(np.float32).ravel())
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"])]
    graph = helper.make_graph(
        nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 6, 6])], [w])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def main():
    build = pathlib.Path(sys.argv[1]).resolve()
    no_openvino = build / "test-modules" / "no-openvino"
    os.environ["COLLAGE_LIB_DIR"] = str(build / "lib")
    sys.path.insert(0, str(ROOT / "examples" / "python"))
    import collage

    with tempfile.TemporaryDirectory() as tmp:
        model, artifact = os.path.join(tmp, "tiny.onnx"), os.path.join(tmp, "tiny.collage")
        tiny_model(model)
        subprocess.run([str(build / "bin" / "collage"), "compile", model, "-o", artifact,
                        "--placement", "single:openvino", "--no-compare", "--no-cost-db"],
                       check=True, stdout=subprocess.DEVNULL)
        try:
            collage.Module(artifact, module_dir=str(no_openvino))
            print("FAIL: the artifact loaded without libopenvino")
            return 1
        except collage.Error as e:
            print("without OpenVINO:", e)
            if "runtime module 'openvino'" not in e.message or "libopenvino.so" not in e.message:
                print("FAIL: the error does not name the module and the library")
                return 1
        with collage.Module(artifact) as m:
            x = np.random.default_rng(1).uniform(-1, 1, (1, 4, 6, 6)).astype(np.float32)
            (y,) = m.run(x)
            if y.shape != (1, 8, 6, 6) or not (y >= 0).all() or not (y > 0).any():
                print("FAIL: unexpected output", y.shape)
                return 1
    print("ok: the error names the module and libopenvino; with OpenVINO the artifact runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
