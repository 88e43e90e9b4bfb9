"""A Triton model repository entry for a model compiled by collage: NAME/config.pbtxt and
NAME/1/{model.py, model.collage}."""
import os
import shutil

import collage

from .config import batch_of, config_pbtxt

MODEL_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model.py")


def add_model(repository, name, artifact, max_batch_size=0, instances=1, num_threads=0):
    """Writes model NAME into REPOSITORY for ARTIFACT (a collage.Artifact, bytes or a path), its
    config.pbtxt taken from the artifact's inputs and outputs. MAX_BATCH_SIZE: 0 (no batching),
    "auto" (the batch the artifact was compiled for, when every input and output has it first),
    or that batch. Returns the config's text."""
    with collage.load(artifact) as module:
        inputs, outputs = module.inputs, module.outputs
    if max_batch_size == "auto":
        max_batch_size = batch_of(inputs, outputs)
    parameters = {"artifact": "model.collage", "num_threads": num_threads}
    text = config_pbtxt(name, inputs, outputs, int(max_batch_size), instances,
                        parameters=parameters)
    version = os.path.join(repository, name, "1")
    os.makedirs(version, exist_ok=True)
    if isinstance(artifact, (str, os.PathLike)):
        shutil.copyfile(artifact, os.path.join(version, "model.collage"))
    else:  # a collage.Artifact or its bytes
        collage.Artifact(bytes(artifact), {}).save(os.path.join(version, "model.collage"))
    shutil.copyfile(MODEL_PY, os.path.join(version, "model.py"))
    with open(os.path.join(repository, name, "config.pbtxt"), "w") as f:
        f.write(text)
    return text


def build_from_onnx(onnx_path, repository, name, max_batch_size=0, instances=1, num_threads=0,
                    **compile_options):
    """Compiles ONNX_PATH with collage.compile(**COMPILE_OPTIONS) and adds it to REPOSITORY as
    NAME (add_model). Returns the collage.Artifact."""
    artifact = collage.compile(onnx_path, **compile_options)
    add_model(repository, name, artifact, max_batch_size, instances, num_threads)
    return artifact
