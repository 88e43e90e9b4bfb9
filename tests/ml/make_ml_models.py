"""Exports scikit-learn models with ai.onnx.ml linear and SVM operators (skl2onnx, random data),
plus variants of their nodes for every post_transform, with inputs and ONNX Runtime's outputs.

    .venv/bin/python tests/ml/make_ml_models.py OUTDIR

Writes, per case, <case>.onnx and <case>.npz (the inputs under the model's input names, then
ONNX Runtime's outputs under "out_<output name>"; strings as numpy U arrays). manifest.txt lists
one case per line: "<name> <model file> <npz file> <zipmap>", zipmap being "refuse" or
"probabilities" (the case needs --zipmap probabilities; its expected probabilities are ONNX
Runtime's maps as one row per sample, columns in label order). Everything is seeded.
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
from skl2onnx.common.data_types import FloatTensorType  # noqa: E402
from sklearn.linear_model import LinearRegression, LogisticRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import Normalizer, StandardScaler  # noqa: E402
from sklearn.svm import SVC, SVR, LinearSVC, OneClassSVM  # noqa: E402

ONNX_OPSET = 17
ML_OPSET = 3
BATCH = 24
FEATURES = 5
NAMES = np.array(["setosa", "versicolor", "virginica", "caf\u00e9 cr\u00e8me"])


def ort_outputs(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return names, session.run(None, feeds)


def as_array(v):
    if isinstance(v, list):  # ZipMap: one {label: probability} per row, in label order
        return np.array([[row[k] for k in row] for row in v], dtype=np.float32)
    return np.asarray(v, dtype=str) if v.dtype == object else v


class Cases:
    def __init__(self, outdir):
        self.outdir = outdir
        self.manifest = []
        rng = np.random.default_rng(11)
        self.x = rng.normal(size=(400, FEATURES)).astype(np.float32)
        self.feeds = {"x": self.x[:BATCH]}

    def labels(self, classes, strings=False):
        x = self.x
        k = (x[:, 0] > 0).astype(int) + 2 * (x[:, 1] + 0.5 * x[:, 2] > 0.3).astype(int)
        k = k % classes
        return NAMES[k] if strings else k * 3 + 1

    def convert(self, est, zipmap=False):
        options = {id(est): {"zipmap": False}} if not zipmap and hasattr(est, "classes_") else None
        if hasattr(est, "steps") and not zipmap:
            options = {id(est.steps[-1][1]): {"zipmap": False}}
        def run(options):
            return convert_sklearn(est, initial_types=[("x", FloatTensorType([BATCH, FEATURES]))],
                                   options=options,
                                   target_opset={"": ONNX_OPSET, "ai.onnx.ml": ML_OPSET})
        try:
            return run(options)
        except NameError:  # no zipmap option: the model has no probabilities to zip
            return run(None)

    def save(self, name, model, zipmap="refuse", scores="ort"):
        """scores="spec": a binary tree classifier under PROBIT, whose second score column ONNX
        Runtime leaves unwritten: the expected scores are ONNX's reference implementation's,
        [probit(1 - s), probit(s)] = [-p, p], p being ONNX Runtime's first column."""
        onnx.checker.check_model(model)
        names, outputs = ort_outputs(model, self.feeds)
        if scores == "spec":
            p = outputs[1][:, :1]
            outputs[1] = np.concatenate([-p, p], axis=1)
        onnx.save(model, os.path.join(self.outdir, f"{name}.onnx"))
        arrays = {k: as_array(v) for k, v in self.feeds.items()}
        arrays.update({f"out_{k}": as_array(v) for k, v in zip(names, outputs)})
        np.savez(os.path.join(self.outdir, f"{name}.npz"), **arrays)
        self.manifest.append(f"{name} {name}.onnx {name}.npz {zipmap}")

    def node_variants(self, base, op_type, name, posts, **changes):
        """`base` with its `op_type` node's post_transform (and other attributes) changed."""
        for post in posts:
            model = onnx.ModelProto()
            model.CopyFrom(base)
            node = next(n for n in model.graph.node if n.op_type == op_type)
            attrs = {a.name: a for a in node.attribute}
            kept = [a for a in node.attribute if a.name not in changes and a.name != "post_transform"]
            del node.attribute[:]
            node.attribute.extend(kept)
            node.attribute.extend([helper.make_attribute("post_transform", post)])
            for k, v in changes.items():
                node.attribute.extend([helper.make_attribute(k, v)])
            del attrs
            self.save(f"{name}_{post.lower()}", model)


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    c = Cases(outdir)
    x = c.x
    posts = ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"]

    # The real pipelines.
    logreg = LogisticRegression(max_iter=500).fit(x, c.labels(4))
    c.save("logreg", c.convert(logreg))
    logreg2 = LogisticRegression(max_iter=500).fit(x, c.labels(2))
    c.save("logreg_binary", c.convert(logreg2))
    c.save("linear_svc", c.convert(LinearSVC(max_iter=5000).fit(x, c.labels(3))))
    c.save("linear_svc_binary", c.convert(LinearSVC(max_iter=5000).fit(x, c.labels(2))))
    svc = SVC(kernel="rbf", probability=True, random_state=0).fit(x[:200], c.labels(3)[:200])
    c.save("svc_rbf_proba", c.convert(svc))
    svc2 = SVC(kernel="rbf", probability=True, random_state=0).fit(x[:200], c.labels(2)[:200])
    c.save("svc_rbf_proba_binary", c.convert(svc2))
    pipe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500))
    pipe.fit(x * 3 + 1, c.labels(4, strings=True))
    c.save("scaler_logreg_strings", c.convert(pipe))
    svc_s = SVC(kernel="rbf", probability=True, random_state=0)
    svc_s.fit(x[:200], c.labels(3, strings=True)[:200])
    c.save("svc_rbf_proba_strings", c.convert(svc_s))
    c.save("zipmap_logreg", c.convert(logreg, zipmap=True), "probabilities")

    # Kernels and modes without probabilities.
    for kernel in ["linear", "poly", "sigmoid", "rbf"]:
        svm = SVC(kernel=kernel, gamma=0.3, coef0=0.5, degree=3).fit(x[:150], c.labels(3)[:150])
        c.save(f"svc_{kernel}", c.convert(svm))
    svm2 = SVC(kernel="poly", gamma=0.3, coef0=0.5, degree=2).fit(x[:150], c.labels(2)[:150])
    c.save("svc_poly_binary", c.convert(svm2))
    c.save("svr_rbf", c.convert(SVR(kernel="rbf").fit(x[:150], x[:150, 0] - x[:150, 1] ** 2)))
    c.save("svr_linear", c.convert(SVR(kernel="linear").fit(x[:150], x[:150, 0] * 2 + 1)))
    c.save("one_class_svm", c.convert(OneClassSVM(gamma=0.2).fit(x[:150])))
    c.save("linear_regression", c.convert(LinearRegression().fit(x, x[:, :3] @ [[1, 2, 0],
                                                                                [0, 1, 1],
                                                                                [3, 0, 1]])))
    for norm in ["l1", "l2", "max"]:
        c.save(f"normalizer_{norm}", c.convert(Normalizer(norm=norm)))

    # Every post transform of the classifiers and regressors (ONNX Runtime's arithmetic).
    c.node_variants(c.convert(logreg), "LinearClassifier", "linear_classifier", posts)
    one_row = onnx.ModelProto()
    one_row.CopyFrom(c.convert(logreg2))
    lin = next(n for n in one_row.graph.node if n.op_type == "LinearClassifier")
    coef = next(a for a in lin.attribute if a.name == "coefficients")
    inter = next(a for a in lin.attribute if a.name == "intercepts")
    half = len(coef.floats) // 2
    new_coef, new_inter = list(coef.floats)[half:], list(inter.floats)[1:]
    c.node_variants(one_row, "LinearClassifier", "linear_classifier_one_row",
                    ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO"],  # PROBIT: refused
                    coefficients=new_coef, intercepts=new_inter)
    regressor = c.convert(LinearRegression().fit(x, x[:, :3] @ [[0.1, 0.2, 0.0], [0.0, 0.1, 0.1],
                                                                 [0.3, 0.0, 0.1]] * 0.2 + 0.4))
    c.node_variants(regressor, "LinearRegressor", "linear_regressor", posts)
    one_target = c.convert(LinearRegression().fit(x, 0.1 * x[:, 0] + 0.5))
    c.node_variants(one_target, "LinearRegressor", "linear_regressor_one", ["NONE", "PROBIT"])
    svc3 = c.convert(SVC(kernel="rbf").fit(x[:150], c.labels(3)[:150]))
    c.node_variants(svc3, "SVMClassifier", "svm_classifier", ["LOGISTIC", "SOFTMAX"])
    c.node_variants(c.convert(svc2), "SVMClassifier", "svm_classifier_proba", ["SOFTMAX"])
    svc2n = c.convert(SVC(kernel="rbf").fit(x[:150], c.labels(2)[:150]))
    c.node_variants(svc2n, "SVMClassifier", "svm_classifier_binary",
                    ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO"])
    tree_probit(c)
    svm_liblinear(c)
    cast_strings(c)

    with open(os.path.join(outdir, "manifest.txt"), "w") as f:
        f.write("\n".join(c.manifest) + "\n")


def tree_probit(c):
    """A binary TreeEnsembleClassifier with post_transform PROBIT (ONNX Runtime: [probit(s), 0])."""
    node = helper.make_node(
        "TreeEnsembleClassifier", ["x"], ["label", "probabilities"], domain="ai.onnx.ml",
        nodes_treeids=[0, 0, 0, 0, 0], nodes_nodeids=[0, 1, 2, 3, 4],
        nodes_featureids=[0, 0, 0, 1, 0], nodes_modes=["BRANCH_LEQ", "LEAF", "BRANCH_LT", "LEAF",
                                                       "LEAF"],
        nodes_values=[0.0, 0, 0.5, 0, 0], nodes_truenodeids=[1, 0, 3, 0, 0],
        nodes_falsenodeids=[2, 0, 4, 0, 0], class_treeids=[0, 0, 0], class_nodeids=[1, 3, 4],
        class_ids=[0, 0, 0], class_weights=[0.2, 0.55, 0.9], classlabels_int64s=[3, 7],
        post_transform="PROBIT", name="forest")
    graph = helper.make_graph(
        [node], "probit", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, FEATURES])],
        [helper.make_tensor_value_info("label", TensorProto.INT64, [BATCH]),
         helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [BATCH, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", ONNX_OPSET),
                                                    helper.make_opsetid("ai.onnx.ml", ML_OPSET)],
                              ir_version=8)
    c.save("tree_binary_probit", model, scores="spec")


def svm_liblinear(c):
    """SVMClassifier without support vectors (liblinear's form: one weight row per class plus
    rho[0]), three classes and two (positive weights: the second label from a top score of 0.5)."""
    rng = np.random.default_rng(5)
    for name, classes, weights in [("svm_liblinear", 3, rng.normal(size=3 * FEATURES)),
                                   ("svm_liblinear_binary", 2,
                                    np.abs(rng.normal(size=2 * FEATURES)) * 0.2)]:
        node = helper.make_node(
            "SVMClassifier", ["x"], ["label", "scores"], domain="ai.onnx.ml", name="svm",
            coefficients=[float(w) for w in weights], rho=[0.1], kernel_type="LINEAR",
            kernel_params=[0.0, 0.0, 0.0],
            classlabels_strings=list(NAMES[:classes]),
            post_transform="NONE" if classes == 2 else "SOFTMAX")
        graph = helper.make_graph(
            [node], name,
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, FEATURES])],
            [helper.make_tensor_value_info("label", TensorProto.STRING, [BATCH]),
             helper.make_tensor_value_info("scores", TensorProto.FLOAT, [BATCH, classes])])
        model = helper.make_model(graph, opset_imports=[
            helper.make_opsetid("", ONNX_OPSET), helper.make_opsetid("ai.onnx.ml", ML_OPSET)],
            ir_version=8)
        c.save(name, model)


def cast_strings(c):
    """Cast to and from STRING: numbers as ONNX Runtime prints them ("%.8g", NaN, INF, -INF) and
    text read as numbers; labels of a classifier printed as text."""
    nodes = [
        helper.make_node("Cast", ["x"], ["x_text"], to=TensorProto.STRING, name="print_floats"),
        helper.make_node("Cast", ["n"], ["n_text"], to=TensorProto.STRING, name="print_ints"),
        helper.make_node("Cast", ["text"], ["as_float"], to=TensorProto.FLOAT, name="read_floats"),
        helper.make_node("Cast", ["text"], ["as_double"], to=TensorProto.DOUBLE, name="read_doubles"),
        helper.make_node("Cast", ["whole"], ["as_int"], to=TensorProto.INT64, name="read_ints"),
        helper.make_node("Cast", ["whole"], ["as_u8"], to=TensorProto.UINT8, name="read_bytes"),
        helper.make_node("Cast", ["flags"], ["flags_text"], to=TensorProto.STRING, name="print_bool"),
    ]
    graph = helper.make_graph(
        nodes, "casts",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, FEATURES]),
         helper.make_tensor_value_info("n", TensorProto.INT64, [7]),
         helper.make_tensor_value_info("text", TensorProto.STRING, [8]),
         helper.make_tensor_value_info("whole", TensorProto.STRING, [5]),
         helper.make_tensor_value_info("flags", TensorProto.BOOL, [3])],
        [helper.make_tensor_value_info("x_text", TensorProto.STRING, [BATCH, FEATURES]),
         helper.make_tensor_value_info("n_text", TensorProto.STRING, [7]),
         helper.make_tensor_value_info("as_float", TensorProto.FLOAT, [8]),
         helper.make_tensor_value_info("as_double", TensorProto.DOUBLE, [8]),
         helper.make_tensor_value_info("as_int", TensorProto.INT64, [5]),
         helper.make_tensor_value_info("as_u8", TensorProto.UINT8, [5]),
         helper.make_tensor_value_info("flags_text", TensorProto.STRING, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", ONNX_OPSET)],
                              ir_version=8)
    x = c.x[:BATCH].copy()
    x[0, :4] = [np.nan, np.inf, -np.inf, 1e30]
    x[1, :3] = [1e-30, 123456789.0, -0.0]
    saved = c.feeds
    c.feeds = {
        "x": x,
        "n": np.array([0, -1, 7, 2**40, -2**63, 2**63 - 1, 42], dtype=np.int64),
        "text": np.array(["1.5", " -2.25", "1e3", "NaN", "INF", "-inf", "0.1", "3.4e38"],
                         dtype=object),
        "whole": np.array(["12", "-3", " 255", "300", "7abc"], dtype=object),
        "flags": np.array([True, False, True]),
    }
    c.save("cast_strings", model)
    c.feeds = saved


if __name__ == "__main__":
    main()
