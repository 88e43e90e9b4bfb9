"""An artifact with an OpenVINO region on a machine without OpenVINO. Where the runtime module
libcollage_rt_openvino.so is not installed, loading fails naming the module and that file; where
the module is there but libopenvino is not on any search path, it fails naming the module and
libopenvino; with OpenVINO found, the same artifact loads and runs.

    missing_library.py BUILD_DIR

Run in a process that has not loaded OpenVINO (Python with the ctypes module of
examples/python), with build/test-modules/no-openvino holding libcollage_rt_openvino.so built
without its RUNPATH (tests/CMakeLists.txt). The missing module is a copy of
libcollage_runtime.so in a folder of its own, loaded by a child process: the runtime looks for
modules beside itself, then on the default library path, and finds none there."""
import os
import pathlib
import shutil
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


def missing_module_error(build, artifact, tmp):
    """The load error of `artifact` in a child process whose libcollage_runtime.so has no
    runtime module beside it, or None when it loads."""
    alone = os.path.join(tmp, "runtime-alone")
    os.makedirs(alone)
    shutil.copy(build / "lib" / "libcollage_runtime.so", alone)
    child = ("import sys; sys.path.insert(0, sys.argv[1]); import collage\n"
             "try:\n    collage.Module(sys.argv[2])\nexcept collage.Error as e:\n"
             "    print(e.message)\n    sys.exit(0)\nsys.exit(3)")
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    env["COLLAGE_LIB_DIR"] = alone
    done = subprocess.run([sys.executable, "-c", child, str(ROOT / "examples" / "python"),
                           artifact], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"the child exited with {done.returncode}: {done.stdout}{done.stderr}")
        return None
    return done.stdout.strip()


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
        message = missing_module_error(build, artifact, tmp)
        print("without the module:", message)
        if not message or "runtime module 'openvino'" not in message or \
                "libcollage_rt_openvino.so" not in message:
            print("FAIL: the error does not name the module and its file")
            return 1
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
    print("ok: the errors name the module and what it needs (its file, libopenvino); with "
          "OpenVINO the artifact runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
