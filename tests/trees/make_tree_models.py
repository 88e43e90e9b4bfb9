"""Trains small tree ensembles and writes them with inputs and reference predictions.

    .venv/bin/python tests/trees/make_tree_models.py OUTDIR

For three synthetic datasets (dense, with NaNs, with many ties and zeros) and three tasks
(regression, binary, 10-class) it trains an XGBoost and a LightGBM model and writes:
  <case>.json / <case>.txt   the model as the library saves it
  <case>.npz                 x (f32 test rows), predictions and margins (f32 [rows, outputs]) as
                             the library computes them
and ONNX-ML exports (onnxmltools / skl2onnx), each cut down to its single tree-ensemble node:
  <case>.onnx, <case>.npz    x and the node's outputs as ONNX Runtime computes them
and TreeEnsemble (ai.onnx.ml opset 5) models written by tree_ensemble5.py (format onnx),
and whole ONNX graphs (format onnx-graph) with input "x": a forest after a scikit-learn
StandardScaler (Scaler + TreeEnsemble), and an XGBoost model beside a small network:
  <case>.onnx, <case>.npz    x and the graph's outputs as ONNX Runtime computes them
manifest.txt lists one case per line: "<name> <format> <model file> <npz file>".
Everything is seeded, so the output is the same on every run.
"""

import json
import os
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")

import lightgbm as lgb  # noqa: E402
import onnx  # noqa: E402
import onnx.numpy_helper  # noqa: E402
import onnxruntime as ort  # noqa: E402
import xgboost as xgb  # noqa: E402

import tree_ensemble5  # noqa: E402

TASKS = ("reg", "bin", "multi")
CLASSES = 10


def make_dataset(kind, rows, seed):
    rng = np.random.default_rng(seed)
    if kind == "dense":
        x = rng.normal(size=(rows, 12))
    elif kind == "nan":
        x = rng.normal(size=(rows, 10))
        x[rng.random(x.shape) < 0.15] = np.nan
        x[rng.random(x.shape) < 0.05] = 0.0
    else:  # "ties": few distinct values, many exact zeros, mixed scales
        x = rng.integers(-3, 4, size=(rows, 8)).astype(np.float64)
        x[:, :4] *= np.array([1.0, 0.25, 100.0, 1e-3])
        x[:, 4:] = np.where(rng.random((rows, 4)) < 0.3, 0.0, rng.normal(size=(rows, 4)))
    x = x.astype(np.float32)
    filled = np.nan_to_num(x.astype(np.float64))
    w = np.linspace(-1.0, 1.0, x.shape[1])
    score = np.tanh(filled @ w / np.sqrt(x.shape[1])) + 0.3 * np.sin(3 * filled[:, 0])
    score += np.isnan(x[:, 1]) * 0.5
    return x, score


def labels(task, score, rng):
    if task == "reg":
        return score + 0.05 * rng.normal(size=score.shape)
    if task == "bin":
        return (score + 0.2 * rng.normal(size=score.shape) > 0).astype(np.int64)
    cuts = np.quantile(score, np.linspace(0, 1, CLASSES + 1)[1:-1])
    return np.searchsorted(cuts, score + 0.1 * rng.normal(size=score.shape)).astype(np.int64)


def edge_rows(x, thresholds, rng):
    """Rows whose values sit on, just below and just above the model's thresholds, and zeros and
    tiny values around LightGBM's zero threshold."""
    rows = []
    base = x[rng.integers(0, len(x), size=64)].copy()
    for k, row in enumerate(base):
        for f, ts in thresholds.items():
            if ts and rng.random() < 0.6:
                t = np.float32(ts[rng.integers(0, len(ts))])
                row[f] = [t, np.nextafter(t, np.float32(-np.inf)), np.nextafter(t, np.float32(np.inf))][k % 3]
        rows.append(row)
    special = x[:8].copy()
    special[0, :] = 0.0
    special[1, :] = np.float32(-0.0)
    special[2, :] = np.float32(1e-36)
    special[3, :] = np.float32(-1e-36)
    special[4, :] = np.float32(1e-35)
    special[5, :] = np.nextafter(np.float32(1e-35), np.float32(1))
    rows.extend(special[:6])
    return np.array(rows, dtype=np.float32)


def xgb_thresholds(booster):
    out = {}
    for tree in json.loads(booster.save_raw("json"))["learner"]["gradient_booster"]["model"]["trees"]:
        for left, f, t in zip(tree["left_children"], tree["split_indices"], tree["split_conditions"]):
            if left != -1:
                out.setdefault(f, []).append(t)
    return out


def lgb_thresholds(booster):
    out = {}

    def walk(node):
        if "split_feature" in node:
            out.setdefault(node["split_feature"], []).append(node["threshold"])
            walk(node["left_child"])
            walk(node["right_child"])

    for tree in booster.dump_model()["tree_info"]:
        walk(tree["tree_structure"])
    return out


def as_2d(a):
    a = np.asarray(a, dtype=np.float32)
    return a.reshape(len(a), -1)


def train_xgboost(task, x, y, depth, rounds):
    params = {"max_depth": depth, "eta": 0.3, "seed": 0, "nthread": 1}
    if task == "reg":
        params["objective"] = "reg:squarederror"
    elif task == "bin":
        params["objective"] = "binary:logistic"
    else:
        params.update(objective="multi:softprob", num_class=CLASSES)
    return xgb.train(params, xgb.DMatrix(x, y), rounds)


def train_lightgbm(task, x, y, leaves, rounds, zero_as_missing):
    params = {"num_leaves": leaves, "learning_rate": 0.3, "seed": 0, "num_threads": 1,
              "verbose": -1, "min_data_in_leaf": 5, "zero_as_missing": zero_as_missing,
              "deterministic": True}
    if task == "reg":
        params["objective"] = "regression"
    elif task == "bin":
        params["objective"] = "binary"
    else:
        params.update(objective="multiclass", num_class=CLASSES)
    return lgb.train(params, lgb.Dataset(x, y), rounds)


def single_node_model(model, name):
    """The tree-ensemble node of an exported model as a model of its own, with its first input
    renamed 'x' and its outputs kept as they are."""
    node = next(n for n in model.graph.node if n.op_type.startswith("TreeEnsemble"))
    node.name = name
    features = model.graph.input[0].type.tensor_type.shape.dim[1].dim_value
    node.input[0] = "x"
    inp = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [None, features])
    outs = []
    for o in node.output:
        elem = onnx.TensorProto.INT64 if node.op_type.endswith("Classifier") and o == node.output[0] \
            else onnx.TensorProto.FLOAT
        outs.append(onnx.helper.make_tensor_value_info(o, elem, None))
    graph = onnx.helper.make_graph([node], name, [inp], outs)
    ml = [op for op in model.opset_import if op.domain == "ai.onnx.ml"]
    return onnx.helper.make_model(
        graph, opset_imports=[onnx.helper.make_opsetid("", 17)] + ml, ir_version=8)


def with_post(model, post):
    """A copy of an exported model whose tree-ensemble node has post_transform `post`."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    node = next(n for n in out.graph.node if n.op_type.startswith("TreeEnsemble"))
    for a in node.attribute:
        if a.name == "post_transform":
            a.s = post.encode()
            return out
    node.attribute.append(onnx.helper.make_attribute("post_transform", post))
    return out


def network_beside_trees(trees, rng):
    """One graph: x -> MatMul, Add, Relu, MatMul -> "net" beside x -> the exported tree ensemble
    -> "trees", and y = net + trees."""
    node = next(n for n in trees.graph.node if n.op_type.startswith("TreeEnsemble"))
    node.name, node.input[0], node.output[0] = "trees", "x", "trees"
    features = trees.graph.input[0].type.tensor_type.shape.dim[1].dim_value
    h = onnx.helper
    weights = {"w1": rng.normal(size=(features, 16)) / np.sqrt(features),
               "b1": rng.normal(size=16) * 0.1, "w2": rng.normal(size=(16, 1)) / 4}
    nodes = [h.make_node("MatMul", ["x", "w1"], ["h0"], name="fc1"),
             h.make_node("Add", ["h0", "b1"], ["h1"], name="bias1"),
             h.make_node("Relu", ["h1"], ["h2"], name="relu1"),
             h.make_node("MatMul", ["h2", "w2"], ["net"], name="fc2"),
             node,
             h.make_node("Add", ["net", "trees"], ["y"], name="sum")]
    graph = h.make_graph(
        nodes, "network_beside_trees",
        [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [None, features])],
        [h.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [None, 1]) for n in ("y", "trees")],
        [onnx.numpy_helper.from_array(v.astype(np.float32), k) for k, v in weights.items()])
    ml = [op for op in trees.opset_import if op.domain == "ai.onnx.ml"]
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)] + ml, ir_version=8)


class Writer:
    def __init__(self, out):
        self.out = out
        self.manifest = []

    def add(self, name, fmt, model_file, arrays):
        np.savez(os.path.join(self.out, name + ".npz"), **arrays)
        self.manifest.append(f"{name} {fmt} {model_file} {name}.npz")

    def onnx_case(self, name, model, x):
        m = single_node_model(model, name)
        path = os.path.join(self.out, name + ".onnx")
        onnx.save(m, path)
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        results = sess.run(None, {"x": x})
        arrays = {"x": x}
        for out, value in zip(m.graph.output, results):
            arrays[out.name] = value
        self.add(name, "onnx", name + ".onnx", arrays)

    def v5_case(self, name, model, x):
        """A TreeEnsemble model (format onnx) with ONNX Runtime's scores, post-transformed as
        the opset-5 spec says (tree_ensemble5.scores_with_post)."""
        onnx.save(model, os.path.join(self.out, name + ".onnx"))
        y = tree_ensemble5.scores_with_post(model, x, lambda m: ort.InferenceSession(
            m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0])
        self.add(name, "onnx", name + ".onnx", {"x": x, "y": y})

    def graph_case(self, name, model, x):
        """A whole graph with input "x" (format onnx-graph) and its outputs from ONNX Runtime."""
        path = os.path.join(self.out, name + ".onnx")
        onnx.save(model, path)
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        arrays = {"x": x}
        for out, value in zip(sess.get_outputs(), sess.run(None, {"x": x})):
            arrays[out.name] = value
        self.add(name, "onnx-graph", name + ".onnx", arrays)

    def finish(self):
        with open(os.path.join(self.out, "manifest.txt"), "w") as f:
            f.write("\n".join(self.manifest) + "\n")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    from onnxmltools import convert_lightgbm, convert_xgboost
    from onnxmltools.convert.common.data_types import FloatTensorType as MlFloat
    from skl2onnx import convert_sklearn
    from skl2onnx.common.data_types import FloatTensorType as SkFloat
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    w = Writer(out)
    # (dataset, XGBoost depth, LightGBM leaves, zero_as_missing): depths chosen so the automatic
    # strategy picks GEMM, perfect tree traversal and tree traversal across the cases.
    configs = [("dense", 3, 7, False), ("nan", 6, 31, False), ("ties", 8, 63, True)]
    for seed, (kind, depth, leaves, zam) in enumerate(configs):
        x, score = make_dataset(kind, 600, seed)
        x_test, _ = make_dataset(kind, 160, seed + 100)
        rng = np.random.default_rng(seed + 7)
        for task in TASKS:
            y = labels(task, score, rng)
            rounds = 6 if task == "multi" else 20
            name = f"xgb_{kind}_{task}"
            bst = train_xgboost(task, x, y, depth, rounds)
            bst.save_model(os.path.join(out, name + ".json"))
            xt = np.concatenate([x_test, edge_rows(x_test, xgb_thresholds(bst), rng)])
            dm = xgb.DMatrix(xt)
            w.add(name, "xgboost", name + ".json",
                  {"x": xt, "predictions": as_2d(bst.predict(dm)),
                   "margins": as_2d(bst.predict(dm, output_margin=True))})
            if task != "reg":
                est = xgb.XGBClassifier(max_depth=depth, n_estimators=rounds, learning_rate=0.3,
                                        random_state=0, n_jobs=1).fit(x, y)
                w.onnx_case(f"onnx_{name}", convert_xgboost(
                    est, initial_types=[("input", MlFloat([None, x.shape[1]]))]), xt)
            else:
                est = xgb.XGBRegressor(max_depth=depth, n_estimators=rounds, learning_rate=0.3,
                                       random_state=0, n_jobs=1).fit(x, y)
                w.onnx_case(f"onnx_{name}", convert_xgboost(
                    est, initial_types=[("input", MlFloat([None, x.shape[1]]))]), xt)

            name = f"lgb_{kind}_{task}"
            gbm = train_lightgbm(task, x, y, leaves, rounds, zam)
            gbm.save_model(os.path.join(out, name + ".txt"))
            xt = np.concatenate([x_test, edge_rows(x_test, lgb_thresholds(gbm), rng)])
            w.add(name, "lightgbm", name + ".txt",
                  {"x": xt, "predictions": as_2d(gbm.predict(xt)),
                   "margins": as_2d(gbm.predict(xt, raw_score=True))})
            cls = lgb.LGBMRegressor if task == "reg" else lgb.LGBMClassifier
            est = cls(num_leaves=leaves, n_estimators=rounds, learning_rate=0.3, random_state=0,
                      n_jobs=1, verbose=-1, min_child_samples=5).fit(x, y)
            w.onnx_case(f"onnx_{name}", convert_lightgbm(
                est, initial_types=[("input", MlFloat([None, x.shape[1]]))], zipmap=False), xt)

        # scikit-learn forests: averaged trees, class weights on every leaf.
        if kind != "nan":
            for task in TASKS:
                y = labels(task, score, rng)
                est = (RandomForestRegressor if task == "reg" else RandomForestClassifier)(
                    n_estimators=8, max_depth=depth, random_state=0).fit(x, y)
                options = {} if task == "reg" else {type(est): {"zipmap": False}}
                w.onnx_case(f"onnx_skl_{kind}_{task}", convert_sklearn(
                    est, initial_types=[("input", SkFloat([None, x.shape[1]]))],
                    options=options, target_opset={"": 17, "ai.onnx.ml": 3}), x_test)
    # TreeEnsemble (ai.onnx.ml opset 5): forests rewritten from their opset-3 export, and random
    # ensembles with set-membership and equality splits in float and double.
    x, score = make_dataset("dense", 600, 21)
    x_test, _ = make_dataset("dense", 160, 121)
    rng = np.random.default_rng(22)
    forest = RandomForestRegressor(n_estimators=8, max_depth=6, random_state=0).fit(
        x, labels("reg", score, rng))
    export = convert_sklearn(forest, initial_types=[("input", SkFloat([None, x.shape[1]]))],
                             target_opset={"": 17, "ai.onnx.ml": 3})
    v5_forest = tree_ensemble5.from_regressor(export, "onnx_v5_forest_reg", x.shape[1])
    w.v5_case("onnx_v5_forest_reg", v5_forest, x_test)
    # The same model as a whole graph: compiled through the C API, its strategy measured.
    w.graph_case("graph_v5_forest_reg", v5_forest, x_test)
    two = np.column_stack([labels("reg", score, rng), labels("reg", -score, rng)])
    forest = RandomForestRegressor(n_estimators=6, max_depth=5, random_state=1).fit(x, two)
    export = convert_sklearn(forest, initial_types=[("input", SkFloat([None, x.shape[1]]))],
                             target_opset={"": 17, "ai.onnx.ml": 3})
    for agg in ("MAX", "MIN"):
        name = f"onnx_v5_forest_2targets_{agg.lower()}"
        w.v5_case(name, tree_ensemble5.from_regressor(export, name, x.shape[1], agg), x_test)
    for name, dtype, trees, targets, agg, post in (
            ("onnx_v5_member_f32_softmax", np.float32, 12, 3, "SUM", "SOFTMAX"),
            ("onnx_v5_member_f32_logistic_1target", np.float32, 9, 1, "SUM", "LOGISTIC"),
            ("onnx_v5_member_f64_average_logistic", np.float64, 7, 3, "AVERAGE", "LOGISTIC")):
        model, xm = tree_ensemble5.membership_model(name, rng, dtype, trees, 5, targets, agg, post)
        w.v5_case(name, model, xm)
    # Post transforms SOFTMAX_ZERO and PROBIT, computed by ONNX Runtime: forests on targets in
    # (0.1, 0.9) (where PROBIT is finite) and a 10-class forest, whose class probabilities hold
    # exact zeros, which SOFTMAX_ZERO keeps.
    squashed = 0.1 + 0.8 / (1 + np.exp(-3 * labels("reg", score, rng)))
    for targets in (1, 2):
        y = squashed if targets == 1 else np.column_stack([squashed, 1 - squashed ** 2])
        export = convert_sklearn(
            RandomForestRegressor(n_estimators=6, max_depth=5, random_state=2).fit(x, y),
            initial_types=[("input", SkFloat([None, x.shape[1]]))],
            target_opset={"": 17, "ai.onnx.ml": 3})
        posts = ("PROBIT",) if targets == 1 else ("PROBIT", "SOFTMAX_ZERO")
        for post in posts:
            name = f"onnx_skl_reg_{targets}targets_{post.lower()}"
            w.onnx_case(name, with_post(export, post), x_test)
        if targets == 2:
            name = "onnx_v5_forest_2targets_probit"
            w.v5_case(name, tree_ensemble5.from_regressor(with_post(export, "PROBIT"), name,
                                                          x.shape[1]), x_test)
    est = RandomForestClassifier(n_estimators=4, max_depth=4, random_state=3).fit(
        x, labels("multi", score, rng))
    w.onnx_case("onnx_skl_multi_softmax_zero", with_post(convert_sklearn(
        est, initial_types=[("input", SkFloat([None, x.shape[1]]))],
        options={type(est): {"zipmap": False}}, target_opset={"": 17, "ai.onnx.ml": 3}),
        "SOFTMAX_ZERO"), x_test)
    model, xm = tree_ensemble5.membership_model("onnx_v5_member_f32_softmax_zero", rng,
                                                np.float32, 6, 3, 4, "SUM", "SOFTMAX_ZERO")
    w.v5_case("onnx_v5_member_f32_softmax_zero", model, xm)
    # Whole graphs: a forest after a scikit-learn StandardScaler (ai.onnx.ml Scaler), and an
    # XGBoost model beside a small network.
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    x, score = make_dataset("dense", 600, 11)
    x_test, _ = make_dataset("dense", 160, 111)
    rng = np.random.default_rng(12)
    for task in ("reg", "multi"):
        y = labels(task, score, rng)
        forest = (RandomForestRegressor if task == "reg" else RandomForestClassifier)(
            n_estimators=8, max_depth=6, random_state=0)
        pipe = make_pipeline(StandardScaler(), forest).fit(x * 3.0 + 1.0, y)
        options = {} if task == "reg" else {type(forest): {"zipmap": False}}
        w.graph_case(f"graph_scaler_forest_{task}", convert_sklearn(
            pipe, initial_types=[("x", SkFloat([None, x.shape[1]]))], options=options,
            target_opset={"": 17, "ai.onnx.ml": 3}), x_test * 3.0 + 1.0)
    y = labels("reg", score, rng)
    est = xgb.XGBRegressor(max_depth=4, n_estimators=20, learning_rate=0.3, random_state=0,
                           n_jobs=1).fit(x, y)
    w.graph_case("graph_network_beside_trees", network_beside_trees(convert_xgboost(
        est, initial_types=[("x", MlFloat([None, x.shape[1]]))]), rng), x_test)
    w.finish()
    print(f"wrote {len(w.manifest)} tree-model cases to {out}")


if __name__ == "__main__":
    main()
