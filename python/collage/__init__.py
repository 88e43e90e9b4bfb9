"""collage: compile a model into one artifact, with each part placed on the backend that runs it
best (generated code, oneDNN, Eigen, tree kernels, plugins), and run the artifact.

    import collage
    artifact = collage.compile("model.onnx", placement="two-level", budget=30,
                               cost_db="costs.jsonl")
    artifact.save("model.collage")
    module = collage.load("model.collage")       # or collage.load(artifact), or bytes
    (logits,) = module.run(x)                     # numpy in, numpy out; any DLPack producer in

The compiler and the runtime libraries are inside the package; `collage.compile` loads the
compiler's on first use, so a program that only loads artifacts never maps LLVM.
"""
from ._compile import Artifact, compile
from ._errors import (CorruptArtifactError, Error, InternalError, InvalidArgumentError, IoError,
                      KernelError, NotFoundError, StatusCode, UnsupportedError)
from ._module import Module, TensorInfo, load
from ._runtime import abi_version, artifact_format_version, runtime_version

__version__ = runtime_version()

__all__ = ["Artifact", "compile", "load", "Module", "TensorInfo", "Error", "StatusCode",
           "InvalidArgumentError", "NotFoundError", "CorruptArtifactError", "UnsupportedError",
           "KernelError", "InternalError", "IoError", "runtime_version", "abi_version",
           "artifact_format_version", "__version__"]
