"""The installed collage package with batch ranges of plans whose shapes depend on data or that
hold strings (run by test_wheel.py in the venv the wheel was installed into): the models of
tests/batch/make_batch_models.py compiled with collage.compile(batch_range=...), run at the
batches of the manifest and matching ONNX Runtime at the same batch (f32 to 1e-4, integers and
strings exactly), a batch outside the range refused.

    check_batch_dyn.py BATCH_MODELS_DIR
"""
import os
import sys

import numpy as np

import collage

data = sys.argv[1]
runs = [line.split() for line in open(os.path.join(data, "manifest.txt")) if line.strip()]
cases = {}
for name, model, low, high, batch, arrays in runs:
    cases.setdefault((name, model, int(low), int(high)), []).append((int(batch), arrays))
assert len(cases) == 5, cases


def check(name, got, want):
    assert got.shape == want.shape, (name, got.shape, want.shape)
    if want.dtype.kind == "U":
        assert got.astype(str).tolist() == want.tolist(), (name, got, want)
    elif want.dtype.kind == "f":
        assert np.max(np.abs(got - want), initial=0) <= 1e-4, (name, got, want)
    else:
        assert np.array_equal(got, want), (name, got, want)


for (name, model, low, high), batches in cases.items():
    first = dict(np.load(os.path.join(data, batches[0][1])))
    shapes = {k: (-1,) + v.shape[1:] for k, v in first.items() if not k.startswith("out_")}
    artifact = collage.compile(os.path.join(data, model), placement="greedy",
                               tree_strategy="auto", input_shapes=shapes,
                               batch_range=(low, high))
    module = collage.load(artifact)
    assert module.batch_range == (low, high), module.batch_range
    for batch, arrays in batches:
        npz = dict(np.load(os.path.join(data, arrays)))
        inputs = {k: v for k, v in npz.items() if not k.startswith("out_")}
        expected = [(k[4:], v) for k, v in npz.items() if k.startswith("out_")]
        outputs = module.run(inputs)
        for (out_name, want), got in zip(expected, outputs):
            check(f"{name}/{out_name} at batch {batch}", got, want)
    big = {k: np.concatenate([v, v[:1]]) for k, v in inputs.items()}
    try:
        module.run(big)
        raise AssertionError(f"{name}: batch {high + 1} was not refused")
    except collage.InvalidArgumentError as e:
        assert f"has a batch of {high + 1}" in e.message, e.message
    print(f"{name}: batches {[b for b, _ in batches]} of {low}..{high} match ONNX Runtime "
          f"(plans for {[b['batch'] for b in artifact.report['batches']]}, padded "
          f"{artifact.report['padded']})")
print("batch range checks passed")
