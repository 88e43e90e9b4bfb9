"""The installed collage package with string tensors (run by test_wheel.py in the venv the wheel
was installed into): the scikit-learn pipelines of tests/strings/make_string_models.py compiled
with collage.compile, loaded and run with numpy U, S and object string arrays, their string
outputs object arrays of str equal to ONNX Runtime's, their numbers within 1e-5.

    check_strings.py STRING_MODELS_DIR
"""
import os
import sys

import numpy as np

import collage

data = sys.argv[1]
cases = [line.split() for line in open(os.path.join(data, "manifest.txt")) if line.strip()]
assert len(cases) == 2, cases


def check(name, got, want):
    assert got.shape == want.shape, (name, got.shape, want.shape)
    if want.dtype.kind == "U":
        assert got.dtype == object, (name, got.dtype)
        assert all(isinstance(s, str) for s in got.ravel()), name
        assert got.astype(str).tolist() == want.tolist(), (name, got, want)
    elif want.dtype.kind == "f":
        assert np.max(np.abs(got - want)) <= 1e-5, (name, got, want)
    else:
        assert np.array_equal(got, want), (name, got, want)


for name, model, arrays in cases:
    npz = dict(np.load(os.path.join(data, arrays)))
    inputs = {k: v for k, v in npz.items() if not k.startswith("out_")}
    expected = [(k[4:], v) for k, v in npz.items() if k.startswith("out_")]
    artifact = collage.compile(os.path.join(data, model), placement="greedy", tree_strategy="auto")
    module = collage.load(artifact)
    assert [t.name for t in module.outputs] == [k for k, _ in expected], module.outputs
    variants = [inputs]
    for k, v in inputs.items():
        if v.dtype.kind == "U":  # the same text as bytes (UTF-8) and as Python objects
            variants.append(dict(inputs, **{k: np.char.encode(v, "utf-8")}))
            variants.append(dict(inputs, **{k: v.astype(object)}))
    for feeds in variants:
        outputs = module.run(feeds)
        for (out_name, want), got in zip(expected, outputs):
            check(f"{name}/{out_name}", got, want)
    print(f"{name}: {len(variants)} input forms match ONNX Runtime ({module})")
print("string checks passed")
