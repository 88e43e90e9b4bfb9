"""A Triton model repository entry for a model compiled by collage: NAME/config.pbtxt and
NAME/1/{model.py, model.collage}."""
import os
import shutil

import collage

from .config import config_pbtxt

MODEL_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model.py")


def add_model(repository, name, artifact, instances=1, num_threads=0, queue_delay_us=100):
    """Writes model NAME into REPOSITORY for ARTIFACT (a collage.Artifact, bytes or a path), its
    config.pbtxt taken from the artifact's inputs, outputs and batch range (dynamic batching up
    to its largest batch, a batch waiting at most QUEUE_DELAY_US for more requests; none for an
    artifact without a range). Returns the config's text."""
    with collage.load(artifact) as module:
        inputs, outputs, batch_range = module.inputs, module.outputs, module.batch_range
    parameters = {"artifact": "model.collage", "num_threads": num_threads}
    text = config_pbtxt(name, inputs, outputs, batch_range, instances, queue_delay_us,
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


def onnx_input_shapes(onnx_path):
    """{input name: shape} of the ONNX model's graph inputs (its initializers left out), read
    with the onnx package; a symbolic or unknown dimension is -1."""
    try:
        import onnx
    except ImportError:
        raise ValueError(f"{onnx_path}: the input shapes are needed for a batch range: give them "
                         f"(--input-shape NAME=1x...), or install onnx to read them") from None
    graph = onnx.load(os.fspath(onnx_path), load_external_data=False).graph
    constants = {i.name for i in graph.initializer}
    return {i.name: [d.dim_value if d.HasField("dim_value") else -1
                     for d in i.type.tensor_type.shape.dim]
            for i in graph.input if i.name not in constants}


def batched_shapes(input_shapes):
    """INPUT_SHAPES with the first dimension of each marked as the batch (-1), for a batch range;
    ValueError naming an input of rank 0 or with another unknown dimension."""
    out = {}
    for name, shape in input_shapes.items():
        shape = [int(d) for d in shape]
        if not shape or any(d < 0 for d in shape[1:]):
            raise ValueError(f"input {name}: shape {shape}: a batch range needs the first "
                             f"dimension as the batch and the others known: give its shape "
                             f"(--input-shape {name}=1x...)")
        out[name] = [-1] + shape[1:]
    return out


def build_from_onnx(onnx_path, repository, name, max_batch=0, instances=1, num_threads=0,
                    input_shapes=None, queue_delay_us=100, **compile_options):
    """Compiles ONNX_PATH with collage.compile(**COMPILE_OPTIONS) and adds it to REPOSITORY as
    NAME (add_model). MAX_BATCH > 1: compiled for the batch range 1..MAX_BATCH on the first
    dimension of every input (INPUT_SHAPES, or the model's own when not given), served with
    Triton's dynamic batching up to MAX_BATCH (add_model: QUEUE_DELAY_US); 0: as it is,
    without. Returns the collage.Artifact."""
    input_shapes = dict(input_shapes or {})
    if max_batch:
        input_shapes = batched_shapes(input_shapes or onnx_input_shapes(onnx_path))
        compile_options["batch_range"] = (1, int(max_batch))
    artifact = collage.compile(onnx_path, input_shapes=input_shapes, **compile_options)
    add_model(repository, name, artifact, instances, num_threads, queue_delay_us)
    return artifact
