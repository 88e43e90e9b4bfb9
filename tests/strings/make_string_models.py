"""Exports scikit-learn pipelines with strings through skl2onnx, with inputs and ONNX Runtime's
outputs.

    .venv/bin/python tests/strings/make_string_models.py OUTDIR

Writes, per case, <case>.onnx and <case>.npz (the inputs under the model's input names, then
ONNX Runtime's outputs under "out_<output name>"; strings as numpy U arrays):
  forest_labels  a RandomForestClassifier trained on string class labels ("setosa", ...):
                 TreeEnsembleClassifier with classlabels_strings, label str[N] and
                 probabilities (zipmap off: ONNX Runtime's ZipMap makes no tensor)
  label_encoder  a fitted LabelEncoder over city names (string keys to int64 codes), behind a
                 StringNormalizer (lower case, stopwords removed) that the user's text goes
                 through first, and the codes mapped back to names with a second LabelEncoder
manifest.txt lists one case per line: "<name> <model file> <npz file>".
Everything is seeded, so the output is the same on every run.
"""

import os
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")

import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402
from skl2onnx import convert_sklearn  # noqa: E402
from skl2onnx.common.data_types import FloatTensorType, StringTensorType  # noqa: E402
from sklearn.ensemble import RandomForestClassifier  # noqa: E402
from sklearn.preprocessing import LabelEncoder  # noqa: E402

ONNX_OPSET = 17
ML_OPSET = 3


def ort_outputs(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, feeds)))


def as_unicode(a):
    """ORT's object arrays of str as numpy U arrays (what .npz holds without pickling)."""
    return np.asarray(a, dtype=str) if a.dtype == object else a


def save(outdir, name, model, feeds, manifest):
    onnx.checker.check_model(model)
    outputs = ort_outputs(model, feeds)
    onnx.save(model, os.path.join(outdir, f"{name}.onnx"))
    arrays = {k: as_unicode(v) for k, v in feeds.items()}
    arrays.update({f"out_{k}": as_unicode(v) for k, v in outputs.items()})
    np.savez(os.path.join(outdir, f"{name}.npz"), **arrays)
    manifest.append(f"{name} {name}.onnx {name}.npz")


def forest_labels(outdir, manifest):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(300, 6)).astype(np.float32)
    names = np.array(["setosa", "versicolor", "virginica", "caf\u00e9 cr\u00e8me"])
    y = names[(x[:, 0] > 0).astype(int) + 2 * (x[:, 1] + 0.5 * x[:, 2] > 0.3).astype(int)]
    forest = RandomForestClassifier(n_estimators=6, max_depth=4, random_state=0).fit(x, y)
    model = convert_sklearn(forest, initial_types=[("x", FloatTensorType([16, 6]))],
                            options={id(forest): {"zipmap": False}},
                            target_opset={"": ONNX_OPSET, "ai.onnx.ml": ML_OPSET})
    save(outdir, "forest_labels", model, {"x": x[:16]}, manifest)


def label_encoder(outdir, manifest):
    cities = ["paris", "tokyo", "amsterdam", "s\u00e3o paulo", "z\u00fcrich"]
    encoder = LabelEncoder().fit(cities)
    codes = convert_sklearn(encoder, initial_types=[("city", StringTensorType([None]))],
                            target_opset={"": ONNX_OPSET, "ai.onnx.ml": ML_OPSET})
    node = next(n for n in codes.graph.node if n.op_type == "LabelEncoder")
    # The user's text, normalized first: lower case, without stopwords.
    normalize = helper.make_node(
        "StringNormalizer", ["text"], ["city"], case_change_action="LOWER",
        is_case_sensitive=0, stopwords=["THE", "city"], locale="C.UTF-8", name="normalize")
    # skl2onnx's LabelEncoder node, as it converted the encoder, fed by the normalizer.
    encode = onnx.NodeProto()
    encode.CopyFrom(node)
    encode.input[0], encode.output[0] = "city", "code"
    decode = helper.make_node("LabelEncoder", ["code"], ["name"], domain="ai.onnx.ml",
                              name="decode", keys_int64s=list(range(len(encoder.classes_))),
                              values_strings=[c.upper() for c in encoder.classes_],
                              default_string="UNKNOWN")
    graph = helper.make_graph(
        [normalize, encode, decode], "city_codes",
        [helper.make_tensor_value_info("text", TensorProto.STRING, [8])],
        [helper.make_tensor_value_info("code", TensorProto.INT64, [None]),
         helper.make_tensor_value_info("name", TensorProto.STRING, [None])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", ONNX_OPSET),
                                                    helper.make_opsetid("ai.onnx.ml", ML_OPSET)],
                              ir_version=8)
    text = np.array(["Paris", "the", "TOKYO", "Z\u00fcrich", "city", "Berlin", "S\u00c3O PAULO",
                     "amsterdam"], dtype=object)
    save(outdir, "label_encoder", model, {"text": text}, manifest)


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    manifest = []
    forest_labels(outdir, manifest)
    label_encoder(outdir, manifest)
    with open(os.path.join(outdir, "manifest.txt"), "w") as f:
        f.write("\n".join(manifest) + "\n")


if __name__ == "__main__":
    main()
