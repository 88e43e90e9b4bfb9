"""The package with an artifact compiled for a batch range, in the venv the wheel was installed
into: collage.compile(batch_range=...), the range and batch axes on the loaded module, run() at
batches of the range with and without a plan of their own (outputs of the inputs' batch, checked
against ONNX Runtime's rows), a batch outside the range refused, and the Triton config and
request batching of such an artifact.

    check_batch_range.py MODEL_CACHE
"""
import json
import os
import sys

import numpy as np

import collage
from collage.triton.batching import gather, scatter
from collage.triton.config import config_pbtxt

cache = sys.argv[1]
manifest = {m["name"]: m for m in json.load(open(os.path.join(cache, "models.json")))["models"]}
gpt2 = manifest["gpt2_small"]  # a transformer exported with a symbolic batch and sequence
onnx_path = os.path.join(cache, gpt2["onnx"])
inputs = dict(np.load(os.path.join(cache, gpt2["inputs_npz"])))  # batch 2
references = dict(np.load(os.path.join(cache, gpt2["outputs_npz"])))  # ONNX Runtime's
(name, x), = inputs.items()
output = gpt2["outputs"][0]["name"]
sequence = x.shape[1]


def scaled_error(actual, expected):
    scale = float(np.max(np.abs(expected))) or 1.0
    return float(np.max(np.abs(actual.astype(np.float64) - expected))) / scale


phases = []
artifact = collage.compile(onnx_path, placement="greedy", input_shapes={name: (-1, sequence)},
                           batch_range=(1, 4), progress=lambda p: phases.append(p["phase"]))
batches = [b["batch"] for b in artifact.report["batches"]]
print(f"compiled {gpt2['name']} for batches 1..4: {artifact}, plans for {batches}, "
      f"padded {artifact.report['padded']}")
assert artifact.report["batch_min"] == 1 and artifact.report["batch_max"] == 4
assert batches[-1] == 4 and "batch" in phases, (batches, sorted(set(phases)))

module = collage.load(artifact)
assert module.batch_range == (1, 4), module.batch_range
assert [t.batch_axis for t in module.inputs + module.outputs] == [0, 0], module
assert module.inputs[0].shape == (4, sequence), module.inputs  # the largest batch's
# Each batch's rows are the reference's rows 0, 1, 0, 1, ...: the outputs must be those rows of
# ONNX Runtime's, with the inputs' batch (3: no plan of its own unless every batch got one).
for batch in (1, 2, 3, 4):
    rows = np.arange(batch) % 2
    got = module.run(np.ascontiguousarray(x[rows]))[0]
    assert got.shape == (batch,) + references[output].shape[1:], (batch, got.shape)
    error = scaled_error(got, references[output][rows])
    print(f"  batch {batch}: {output} {got.shape}, error {error:.2e} against ONNX Runtime")
    assert error <= gpt2["rtol"], f"batch {batch}: error {error} > {gpt2['rtol']}"
# With out=: arrays of the batch run, written in place.
out = [np.empty((3,) + references[output].shape[1:], np.float32)]
assert module.run(np.ascontiguousarray(x[[0, 1, 0]]), out=out) is out
assert scaled_error(out[0], references[output][[0, 1, 0]]) <= gpt2["rtol"]
for batch in (5, 0):
    try:
        module.run(np.zeros((batch, sequence), x.dtype))
        raise AssertionError(f"batch {batch} ran outside the range 1..4")
    except collage.InvalidArgumentError as e:
        print(f"  batch {batch}: {e.message}")
        assert f"'{name}'" in e.message, e.message
try:
    collage.compile(onnx_path, input_shapes={name: (-1, sequence)}, batch_range=(4, 2))
    raise AssertionError("a batch range 4..2 was accepted")
except collage.InvalidArgumentError as e:
    assert "4..2" in e.message, e.message

# --- Triton: the config of a batch range, requests gathered without padding ----------------------
text = config_pbtxt("gpt2", module.inputs, module.outputs, module.batch_range)
assert "max_batch_size: 4" in text and "dynamic_batching" in text, text
assert f'{{ name: "{name}" data_type: TYPE_INT64 dims: [ {sequence} ] }}' in text, text
assert f'dims: [ {sequence}, {references[output].shape[2]} ]' in text, text
try:
    config_pbtxt("gpt2", module.inputs, module.outputs, (2, 4))
    raise AssertionError("a range from 2 was given Triton's batcher, which sends batches of 1")
except ValueError as e:
    assert "1..4" in str(e), e
requests = [[x[:1]], [np.ascontiguousarray(x[[1, 0]])]]
batch, counts = gather(requests, 4)
assert counts == [1, 2] and batch[0].shape == (3, sequence)
parts = scatter(module.run(*batch), counts)
assert [p[0].shape[0] for p in parts] == [1, 2]
assert scaled_error(parts[1][0], references[output][[1, 0]]) <= gpt2["rtol"]
try:
    gather(requests * 2, 4)
    raise AssertionError("6 rows gathered into a batch of at most 4")
except ValueError as e:
    assert "exceed" in str(e)
module.close()
print("batch range checks passed")
