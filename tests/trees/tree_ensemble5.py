"""TreeEnsemble (ai.onnx.ml opset 5) test models for make_tree_models.py.

No converter writes opset 5 yet, so `from_regressor` rewrites an exported TreeEnsembleRegressor
(skl2onnx, ai.onnx.ml 3) into the single TreeEnsemble node a converter would write: interior
nodes in nodes_*, leaves in leaf_*, one tree per (tree, target) when leaves carry several targets.
`membership_model` builds a random ensemble with set-membership, equality and comparison splits
on a categorical feature, in float or double.
"""
import numpy as np
import onnx
from onnx import helper, numpy_helper

MODES = {"BRANCH_LEQ": 0, "BRANCH_LT": 1, "BRANCH_GTE": 2, "BRANCH_GT": 3, "BRANCH_EQ": 4,
         "BRANCH_NEQ": 5}
AGGREGATES = {"AVERAGE": 0, "SUM": 1, "MIN": 2, "MAX": 3}
POSTS = {"NONE": 0, "SOFTMAX": 1, "LOGISTIC": 2, "SOFTMAX_ZERO": 3, "PROBIT": 4}


def _attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


class _Builder:
    """Collects nodes_* and leaf_* arrays; nodes and leaves are appended as trees are walked."""

    def __init__(self, dtype):
        self.dtype = dtype
        self.nodes = {k: [] for k in ("feature", "split", "mode", "true", "false", "true_leaf",
                                      "false_leaf", "tracks")}
        self.members = []
        self.leaf_targets, self.leaf_weights, self.roots = [], [], []

    def leaf(self, target, weight):
        self.leaf_targets.append(int(target))
        self.leaf_weights.append(float(weight))
        return len(self.leaf_targets) - 1

    def node(self, feature, split, mode, tracks=0, members=None):
        for k, v in (("feature", feature), ("split", split), ("mode", mode), ("true", 0),
                     ("false", 0), ("true_leaf", 0), ("false_leaf", 0), ("tracks", tracks)):
            self.nodes[k].append(v)
        if members is not None:
            self.members += list(members) + [np.nan]
        return len(self.nodes["feature"]) - 1

    def link(self, at, branch, child, is_leaf):
        self.nodes[branch][at] = child
        self.nodes[branch + "_leaf"][at] = int(is_leaf)

    def make_node(self, name, n_targets, aggregate, post):
        t = self.dtype
        kw = dict(
            nodes_featureids=self.nodes["feature"], nodes_truenodeids=self.nodes["true"],
            nodes_falsenodeids=self.nodes["false"], nodes_trueleafs=self.nodes["true_leaf"],
            nodes_falseleafs=self.nodes["false_leaf"],
            nodes_missing_value_tracks_true=self.nodes["tracks"],
            nodes_modes=numpy_helper.from_array(np.array(self.nodes["mode"], np.uint8)),
            nodes_splits=numpy_helper.from_array(np.array(self.nodes["split"], t)),
            leaf_targetids=self.leaf_targets,
            leaf_weights=numpy_helper.from_array(np.array(self.leaf_weights, t)),
            tree_roots=self.roots, n_targets=n_targets, aggregate_function=aggregate,
            post_transform=post)
        if self.members:
            kw["membership_values"] = numpy_helper.from_array(np.array(self.members, t))
        return helper.make_node("TreeEnsemble", ["x"], ["y"], name=name, domain="ai.onnx.ml", **kw)


def scores_with_post(model, x, run):
    """The model's Y: `run` (ONNX Runtime) on a copy without post transform, then the transform
    of the opset-5 spec (1 SOFTMAX over the targets, 2 LOGISTIC). ONNX Runtime 1.31 reads 1 as
    LOGISTIC and 2 as SOFTMAX (its own enum order), so its transformed output is not the spec's.
    SOFTMAX_ZERO (3) and PROBIT (4) it numbers as the spec does: those are ONNX Runtime's own."""
    node_post = {a.name: a.i for a in model.graph.node[0].attribute}.get("post_transform", 0)
    if node_post in (POSTS["SOFTMAX_ZERO"], POSTS["PROBIT"]):  # numbered alike in both
        return run(model).astype(x.dtype)
    plain = onnx.ModelProto()
    plain.CopyFrom(model)
    post = 0
    for a in plain.graph.node[0].attribute:
        if a.name == "post_transform":
            post, a.i = a.i, 0
    y = run(plain)
    if post == POSTS["LOGISTIC"]:
        y = 1 / (1 + np.exp(-y))
    elif post == POSTS["SOFTMAX"]:
        e = np.exp(y - y.max(axis=1, keepdims=True))
        y = e / e.sum(axis=1, keepdims=True)
    elif post != 0:
        raise ValueError(f"post_transform {post}")
    return y.astype(x.dtype)


def _model(node, features, dtype):
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    graph = helper.make_graph([node], node.name,
                              [helper.make_tensor_value_info("x", elem, [None, features])],
                              [helper.make_tensor_value_info("y", elem, None)])
    return helper.make_model(graph, ir_version=10, opset_imports=[
        helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", 5)])


def from_regressor(model, name, features, aggregate=None):
    """The TreeEnsembleRegressor of `model` as a TreeEnsemble model (input "x", output "y")."""
    reg = next(n for n in model.graph.node if n.op_type == "TreeEnsembleRegressor")
    a = _attrs(reg)
    if any(v != 0 for v in a.get("base_values", [])):
        raise ValueError("TreeEnsemble has no base values")
    n_targets = a.get("n_targets", 1)
    index = {(t, i): k for k, (t, i) in enumerate(zip(a["nodes_treeids"], a["nodes_nodeids"]))}
    weights = {}
    for t, i, target, w in zip(a["target_treeids"], a["target_nodeids"], a["target_ids"],
                               a["target_weights"]):
        weights.setdefault((t, i), {})[target] = weights.get((t, i), {}).get(target, 0.0) + w
    b = _Builder(np.float32)

    def walk(tree, nid, target):
        k = index[(tree, nid)]
        mode = a["nodes_modes"][k].decode()
        if mode == "LEAF":
            return b.leaf(target, weights.get((tree, nid), {}).get(target, 0.0)), True
        at = b.node(a["nodes_featureids"][k], a["nodes_values"][k], MODES[mode],
                    a.get("nodes_missing_value_tracks_true", [0] * len(index))[k])
        for branch, child in (("true", a["nodes_truenodeids"][k]),
                              ("false", a["nodes_falsenodeids"][k])):
            b.link(at, branch, *walk(tree, child, target))
        return at, False

    for tree in sorted(set(a["nodes_treeids"])):
        for target in range(n_targets):
            root, is_leaf = walk(tree, 0, target)
            if is_leaf:  # a tree that is one leaf: both branches of a node name it
                root_node = b.node(0, 0.0, 0)
                b.link(root_node, "true", root, True)
                b.link(root_node, "false", root, True)
                root = root_node
            b.roots.append(root)
    agg = aggregate or a.get("aggregate_function", b"SUM").decode()
    post = a.get("post_transform", b"NONE").decode()
    node = b.make_node(name, n_targets, AGGREGATES[agg], POSTS[post])
    return _model(node, features, np.float32)


def membership_model(name, rng, dtype, trees, depth, n_targets, aggregate, post):
    """Random trees over feature 0 (categories 0..9) and features 1..3 (uniform): set
    membership, equality and comparison splits, some tracking missing values to the true side.
    Returns the model and test rows with NaNs and every category."""
    b = _Builder(dtype)

    def grow(level):
        if level == depth or rng.random() < 0.15:
            return b.leaf(rng.integers(n_targets), rng.normal()), True
        kind = rng.integers(4)
        tracks = int(rng.random() < 0.3)
        if kind == 0:
            members = rng.choice(10, size=rng.integers(1, 5), replace=False).astype(float)
            at = b.node(0, 0.0, 6, tracks, members)
        elif kind == 1:
            at = b.node(0, float(rng.integers(10)), int(rng.choice([4, 5])), tracks)
        else:
            at = b.node(int(rng.integers(1, 4)), float(rng.uniform(-1, 1)),
                        int(rng.integers(0, 4)), tracks)
        for branch in ("true", "false"):
            b.link(at, branch, *grow(level + 1))
        return at, False

    for _ in range(trees):
        root, is_leaf = grow(0)
        if is_leaf:
            root_node = b.node(0, 0.0, 0)
            b.link(root_node, "true", root, True)
            b.link(root_node, "false", root, True)
            root = root_node
        b.roots.append(root)
    node = b.make_node(name, n_targets, AGGREGATES[aggregate], POSTS[post])
    rows = 200
    x = np.column_stack([rng.integers(0, 10, rows).astype(float),
                         rng.uniform(-1.2, 1.2, (rows, 3))]).astype(dtype)
    x[rng.random((rows, 4)) < 0.08] = np.nan
    return _model(node, 4, dtype), x
