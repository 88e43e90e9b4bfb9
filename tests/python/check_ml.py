"""The installed collage package on the ai.onnx.ml models of tests/ml/make_ml_models.py (run by
test_wheel.py in the venv the wheel was installed into): the scikit-learn pipelines
(LogisticRegression, LinearSVC, SVC with probabilities, a StandardScaler + LogisticRegression on
string labels, a ZipMap dropped with zipmap="probabilities") and Cast to and from STRING, compiled
with collage.compile, run, and equal to ONNX Runtime's outputs (labels and text exactly, numbers
to 1e-4 relative, NaN and infinities where ONNX Runtime has them).

    check_ml.py ML_MODELS_DIR
"""
import os
import sys

import numpy as np

import collage

CASES = ["logreg", "logreg_binary", "linear_svc", "svc_rbf_proba", "svc_rbf_proba_binary",
         "scaler_logreg_strings", "svc_rbf_proba_strings", "zipmap_logreg", "cast_strings"]

data = sys.argv[1]
manifest = {line.split()[0]: line.split() for line in open(os.path.join(data, "manifest.txt"))
            if line.strip()}


def check(name, got, want):
    assert got.shape == want.shape, (name, got.shape, want.shape)
    if want.dtype.kind == "U":
        assert got.dtype == object, (name, got.dtype)
        assert got.astype(str).tolist() == want.tolist(), (name, got, want)
    elif want.dtype.kind == "f":
        same_nan = np.isnan(got) == np.isnan(want)
        finite = np.isfinite(want)
        close = np.abs(np.where(finite, got - want, 0)) <= 1e-4 * np.maximum(1, np.abs(want))
        same_inf = np.where(np.isinf(want), got == want, True)
        assert same_nan.all() and same_inf.all() and (close | ~finite).all(), (name, got, want)
    else:
        assert np.array_equal(got, want), (name, got, want)


for name in CASES:
    _, model, arrays, zipmap = manifest[name]
    npz = dict(np.load(os.path.join(data, arrays)))
    inputs = {k: v for k, v in npz.items() if not k.startswith("out_")}
    expected = [(k[4:], v) for k, v in npz.items() if k.startswith("out_")]
    artifact = collage.compile(os.path.join(data, model), placement="greedy", zipmap=zipmap)
    module = collage.load(artifact)
    outputs = module.run(inputs)
    for (out_name, want), got in zip(expected, outputs):
        check(f"{name}/{out_name}", got, want)
    print(f"{name}: matches ONNX Runtime ({module})")
print("ai.onnx.ml checks passed")
