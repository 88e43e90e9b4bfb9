"""Models with a symbolic batch whose plans hold data-dependent shapes or strings, with inputs and
ONNX Runtime's outputs at several batches of the range they are compiled for.

    .venv/bin/python tests/batch/make_batch_models.py OUTDIR

Writes, per case, <case>.onnx, and per batch <case>_b<batch>.npz (the inputs under the model's
input names, then ONNX Runtime's outputs at that batch under "out_<output name>"; strings as
numpy U arrays):
  nms_rows      detection post-processing over a batch of images: NonMaxSuppression (its
                selected indices [?, 3]) feeding index arithmetic and Gather (the kept boxes), NonZero of a score
                threshold, and a batched Sigmoid
  logreg_labels StandardScaler + LogisticRegression trained on string class labels (skl2onnx):
                label str[N], probabilities f32[N, 4]
  forest_labels RandomForestClassifier on string labels: TreeEnsembleClassifier with
                classlabels_strings
  text_codes    string inputs: a LabelEncoder (city names to int64 codes) on the raw text, and a
                StringNormalizer that drops stopwords (a data-dependent count) feeding another
  text_shout    string inputs and outputs whose rows stay apart (padded runs): the LabelEncoder
                and StringConcat
manifest.txt lists one run per line: "<case> <model file> <batch min> <batch max> <batch> <npz>"
(each case at the range's ends and a batch between). Everything is seeded.
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
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import LabelEncoder, StandardScaler  # noqa: E402

ONNX_OPSET = 17
ML_OPSET = 3
BATCH_MIN, BATCH_MAX = 1, 6
BATCHES = (1, 3, 6)  # the ends and one between that has no plan of its own by default
NAMES = np.array(["setosa", "versicolor", "virginica", "caf\u00e9 cr\u00e8me"])


def as_unicode(a):
    """ORT's object arrays of str as numpy U arrays (what .npz holds without pickling)."""
    return np.asarray(a, dtype=str) if a.dtype == object else a


class Writer:
    def __init__(self, outdir):
        self.outdir = outdir
        self.manifest = []

    def save(self, name, model, feeds_at):
        """feeds_at(batch) -> the inputs of a batch."""
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(self.outdir, f"{name}.onnx"))
        session = ort.InferenceSession(model.SerializeToString(),
                                       providers=["CPUExecutionProvider"])
        names = [o.name for o in session.get_outputs()]
        for batch in BATCHES:
            feeds = feeds_at(batch)
            arrays = {k: as_unicode(v) for k, v in feeds.items()}
            for k, v in zip(names, session.run(None, feeds)):
                arrays[f"out_{k}"] = as_unicode(v)
            npz = f"{name}_b{batch}.npz"
            np.savez(os.path.join(self.outdir, npz), **arrays)
            self.manifest.append(f"{name} {name}.onnx {BATCH_MIN} {BATCH_MAX} {batch} {npz}")


def nms_rows(w):
    boxes_per_image, classes = 16, 3
    f = TensorProto.FLOAT
    i64 = TensorProto.INT64
    nodes = [
        helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou", "min_score"],
                         ["selected"], name="nms"),
        # The kept boxes, gathered from the whole batch's: row image * boxes + box.
        helper.make_node("Gather", ["selected", "col0"], ["image"], axis=1, name="image"),
        helper.make_node("Gather", ["selected", "col2"], ["box"], axis=1, name="box"),
        helper.make_node("Mul", ["image", "per_image"], ["first"], name="first"),
        helper.make_node("Add", ["first", "box"], ["row"], name="row"),
        helper.make_node("Reshape", ["boxes", "flat"], ["all_boxes"], name="all_boxes"),
        helper.make_node("Gather", ["all_boxes", "row"], ["kept"], axis=0, name="kept"),
        helper.make_node("Mul", ["kept", "scale"], ["kept_scaled"], name="scale_kept"),
        helper.make_node("Greater", ["scores", "hit_score"], ["hit"], name="threshold"),
        helper.make_node("NonZero", ["hit"], ["hits"], name="hits"),
        helper.make_node("Sigmoid", ["scores"], ["probs"], name="probs"),
    ]
    inits = [
        helper.make_tensor("max_out", i64, [1], [3]),
        helper.make_tensor("iou", f, [1], [0.4]),
        helper.make_tensor("min_score", f, [1], [0.3]),
        helper.make_tensor("col0", i64, [], [0]),
        helper.make_tensor("col2", i64, [], [2]),
        helper.make_tensor("per_image", i64, [], [boxes_per_image]),
        helper.make_tensor("flat", i64, [2], [-1, 4]),
        helper.make_tensor("scale", f, [], [2.0]),
        helper.make_tensor("hit_score", f, [], [0.9]),
    ]
    graph = helper.make_graph(
        nodes, "nms_rows",
        [helper.make_tensor_value_info("boxes", f, ["N", boxes_per_image, 4]),
         helper.make_tensor_value_info("scores", f, ["N", classes, boxes_per_image])],
        [helper.make_tensor_value_info("selected", i64, ["K", 3]),
         helper.make_tensor_value_info("kept_scaled", f, ["K", 4]),
         helper.make_tensor_value_info("hits", i64, [3, "H"]),
         helper.make_tensor_value_info("probs", f, ["N", classes, boxes_per_image])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", ONNX_OPSET)],
                              ir_version=8)

    def feeds(batch):
        rng = np.random.default_rng(100 + batch)
        corner = rng.uniform(0, 8, size=(batch, boxes_per_image, 2))
        size = rng.uniform(1, 4, size=(batch, boxes_per_image, 2))
        boxes = np.concatenate([corner, corner + size], axis=2).astype(np.float32)
        scores = rng.uniform(0, 1, size=(batch, classes, boxes_per_image)).astype(np.float32)
        return {"boxes": boxes, "scores": scores}
    w.save("nms_rows", model, feeds)


def string_labels(w):
    rng = np.random.default_rng(11)
    x = rng.normal(size=(300, 5)).astype(np.float32)
    y = NAMES[(x[:, 0] > 0).astype(int) + 2 * (x[:, 1] + 0.5 * x[:, 2] > 0.3).astype(int)]
    pipe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500))
    pipe.fit(x * 3 + 1, y)
    model = convert_sklearn(pipe, initial_types=[("x", FloatTensorType([None, 5]))],
                            options={id(pipe.steps[-1][1]): {"zipmap": False}},
                            target_opset={"": ONNX_OPSET, "ai.onnx.ml": ML_OPSET})
    w.save("logreg_labels", model, lambda b: {"x": x[10:10 + b] * 3 + 1})

    forest = RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0).fit(x, y)
    model = convert_sklearn(forest, initial_types=[("x", FloatTensorType([None, 5]))],
                            options={id(forest): {"zipmap": False}},
                            target_opset={"": ONNX_OPSET, "ai.onnx.ml": ML_OPSET})
    w.save("forest_labels", model, lambda b: {"x": x[40:40 + b]})


def text_codes(w):
    cities = ["paris", "tokyo", "amsterdam", "s\u00e3o paulo", "z\u00fcrich"]
    encoder = LabelEncoder().fit(cities)
    codes = convert_sklearn(encoder, initial_types=[("city", StringTensorType([None]))],
                            target_opset={"": ONNX_OPSET, "ai.onnx.ml": ML_OPSET})
    node = next(n for n in codes.graph.node if n.op_type == "LabelEncoder")
    raw = onnx.NodeProto()
    raw.CopyFrom(node)
    raw.input[0], raw.output[0], raw.name = "text", "raw_code", "raw_code"
    normalize = helper.make_node(
        "StringNormalizer", ["text"], ["city"], case_change_action="LOWER",
        is_case_sensitive=0, stopwords=["THE", "city"], locale="C.UTF-8", name="normalize")
    encode = onnx.NodeProto()
    encode.CopyFrom(node)
    encode.input[0], encode.output[0], encode.name = "city", "code", "encode"
    graph = helper.make_graph(
        [raw, normalize, encode], "text_codes",
        [helper.make_tensor_value_info("text", TensorProto.STRING, ["N"])],
        [helper.make_tensor_value_info("raw_code", TensorProto.INT64, ["N"]),
         helper.make_tensor_value_info("city", TensorProto.STRING, ["M"]),
         helper.make_tensor_value_info("code", TensorProto.INT64, ["M"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", ONNX_OPSET),
                                                    helper.make_opsetid("ai.onnx.ml", ML_OPSET)],
                              ir_version=8)
    words = np.array(["Paris", "the", "tokyo", "Z\u00fcrich", "city", "Berlin",
                      "S\u00c3O PAULO", "amsterdam"], dtype=object)
    w.save("text_codes", model, lambda b: {"text": words[-b:]})

    # Rows kept apart, so batches between plans run padded (with empty strings): the codes, and
    # the text with a suffix.
    shout = helper.make_node("StringConcat", ["text", "bang"], ["shout"], name="shout")
    graph = helper.make_graph(
        [raw, shout], "text_shout",
        [helper.make_tensor_value_info("text", TensorProto.STRING, ["N"])],
        [helper.make_tensor_value_info("raw_code", TensorProto.INT64, ["N"]),
         helper.make_tensor_value_info("shout", TensorProto.STRING, ["N"])],
        [helper.make_tensor("bang", TensorProto.STRING, [1], [b"!"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20),
                                                    helper.make_opsetid("ai.onnx.ml", ML_OPSET)],
                              ir_version=9)
    w.save("text_shout", model, lambda b: {"text": words[:b]})


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    w = Writer(outdir)
    nms_rows(w)
    string_labels(w)
    text_codes(w)
    with open(os.path.join(outdir, "manifest.txt"), "w") as f:
        f.write("\n".join(w.manifest) + "\n")


if __name__ == "__main__":
    main()
