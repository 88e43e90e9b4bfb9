// ONNX-ML TreeEnsembleRegressor / TreeEnsembleClassifier: the node's trees as a TreeEnsemble, and
// the graph nodes that compute its outputs the way ONNX Runtime does; and the Scaler that
// scikit-learn pipelines put in front of them.
#include <onnx/onnx_pb.h>

#include <map>
#include <set>

#include "collage/ops.h"
#include "core/str_cat.h"
#include "frontends/trees/onnx_ml_attrs.h"
#include "frontends/trees/onnx_ml_internal.h"
#include "frontends/trees/tree_post_transform.h"
#include "frontends/trees/tree_program.h"
#include "frontends/trees/tree_util.h"

namespace collage {
namespace {

// What the classifier's output formatting needs to know beyond the trees.
struct ClassifierInfo {
  std::vector<int64_t> labels;
  // classlabels_strings: `labels` are then their positions, mapped to the strings at the end.
  std::vector<std::string> string_labels;
  bool binary = false;       // two labels, weights for class 0 only: one score column
  bool all_positive = true;  // every class weight >= 0
};

struct OnnxTrees {
  TreeEnsemble model;
  bool classifier = false;
  ClassifierInfo info;
  std::string post_transform;
};

// The nodes_* attributes, one entry per tree node, and the trees they form.
struct NodeTable {
  std::vector<int64_t> features, true_ids, false_ids, tracks;
  std::vector<std::string> modes;
  std::vector<double> thresholds;
  bool double_thresholds = false;
  // Tree ids in increasing order; within a tree, node id -> attribute index.
  std::map<int64_t, std::map<int64_t, size_t>> trees;
};

absl::StatusOr<NodeTable> read_nodes(const NodeAttrs& a) {
  NodeTable t;
  const auto tree_ids = a.ints("nodes_treeids"), node_ids = a.ints("nodes_nodeids");
  t.features = a.ints("nodes_featureids");
  t.true_ids = a.ints("nodes_truenodeids");
  t.false_ids = a.ints("nodes_falsenodeids");
  t.tracks = a.ints("nodes_missing_value_tracks_true");
  t.modes = a.strings("nodes_modes");
  auto thresholds = a.numbers("nodes_values", &t.double_thresholds);
  if (!thresholds.ok()) return thresholds.status();
  t.thresholds = *std::move(thresholds);
  const size_t n = tree_ids.size();
  if (n == 0) return a.error("has no nodes (nodes_treeids is empty)");
  if (t.tracks.empty()) t.tracks.assign(n, 0);
  for (auto [name, size] : {std::pair<const char*, size_t>{"nodes_nodeids", node_ids.size()},
                            {"nodes_featureids", t.features.size()},
                            {"nodes_truenodeids", t.true_ids.size()},
                            {"nodes_falsenodeids", t.false_ids.size()},
                            {"nodes_modes", t.modes.size()},
                            {"nodes_values", t.thresholds.size()},
                            {"nodes_missing_value_tracks_true", t.tracks.size()}})
    if (size != n) return a.error(str_cat(name, " has ", size, " entries, nodes_treeids has ", n));
  for (size_t i = 0; i < n; ++i)
    if (!t.trees[tree_ids[i]].emplace(node_ids[i], i).second)
      return a.error(str_cat("tree ", tree_ids[i], " has node id ", node_ids[i], " twice"));
  return t;
}

// Leaf weights: (tree, node) -> output -> weight.
using LeafWeights = std::map<std::pair<int64_t, int64_t>, std::map<int64_t, double>>;

// The leaf weights (class_* or target_*), the number of outputs, and what the classifier's
// output formatting needs (out.info).
absl::StatusOr<LeafWeights> read_leaf_weights(const NodeAttrs& a, OnnxTrees& out) {
  const std::string prefix = out.classifier ? "class_" : "target_";
  const auto w_trees = a.ints(prefix + "treeids"), w_nodes = a.ints(prefix + "nodeids"),
             w_ids = a.ints(prefix + "ids");
  auto weights = a.numbers(prefix + "weights", nullptr);
  if (!weights.ok()) return weights.status();
  if (w_nodes.size() != w_trees.size() || w_ids.size() != w_trees.size() ||
      weights->size() != w_trees.size())
    return a.error(str_cat(prefix, "treeids, ", prefix, "nodeids, ", prefix, "ids and ", prefix,
                           "weights must have the same length"));
  int64_t outputs = 0;
  if (out.classifier) {
    if (a.has("classlabels_strings")) {
      out.info.string_labels = a.strings("classlabels_strings");
      for (size_t i = 0; i < out.info.string_labels.size(); ++i)
        out.info.labels.push_back(static_cast<int64_t>(i));
    } else {
      out.info.labels = a.ints("classlabels_int64s");
    }
    if (out.info.labels.size() < 2)
      return a.error("classlabels_int64s or classlabels_strings needs at least 2 labels");
    outputs = static_cast<int64_t>(out.info.labels.size());
  } else {
    outputs = a.integer("n_targets", 1);
    if (outputs < 1 || outputs > (1 << 20)) return a.error(str_cat("n_targets is ", outputs));
  }
  LeafWeights leaf_weights;
  std::set<int64_t> used_ids;
  for (size_t k = 0; k < w_trees.size(); ++k) {
    if (w_ids[k] < 0 || w_ids[k] >= outputs)
      return a.error(
          str_cat(prefix, "ids entry ", k, " is ", w_ids[k], ", expected below ", outputs));
    leaf_weights[{w_trees[k], w_nodes[k]}][w_ids[k]] += (*weights)[k];
    used_ids.insert(w_ids[k]);
    out.info.all_positive &= (*weights)[k] >= 0;
  }
  if (out.classifier && outputs == 2) {
    // ONNX Runtime's binary case: weights for one class only make one score column.
    if (used_ids.size() == 1 && *used_ids.begin() == 0) {
      out.info.binary = true;
      outputs = 1;
    } else {
      return a.unsupported(
          "a binary classifier with weights for class 1 or for both classes "
          "is not supported");
    }
  }
  out.model.num_outputs = outputs;
  return leaf_weights;
}

// Split node `i` (tree `tree_id`, node `id`) of `t` as a TreeNode whose children are positions
// in the tree. ONNX Runtime sends NaN to the true branch when the node tracks missing values that
// way; otherwise NaN fails every comparison and takes the false branch. Greater-than rules are the
// complement of a less-than rule with the branches swapped.
absl::Status read_split(const NodeAttrs& a, const NodeTable& t, int64_t tree_id, int64_t id,
                        size_t i, const std::map<int64_t, int32_t>& position, TreeNode& node) {
  const std::string where = str_cat("tree ", tree_id, " node ", id);
  if (t.features[i] < 0 || t.features[i] >= (int64_t{1} << 30))
    return a.error(str_cat(where, " has feature id ", t.features[i]));
  auto child = [&](int64_t cid) -> absl::StatusOr<int32_t> {
    auto p = position.find(cid);
    if (p == position.end() || cid == 0)
      return a.error(str_cat(where, " has child ", cid, ", not a node of the tree"));
    return p->second;
  };
  auto yes = child(t.true_ids[i]);
  if (!yes.ok()) return yes.status();
  auto no = child(t.false_ids[i]);
  if (!no.ok()) return no.status();
  node.feature = static_cast<int32_t>(t.features[i]);
  node.threshold = t.thresholds[i];
  node.missing = TreeMissing::nan;
  const bool f64 = t.double_thresholds;
  const std::string& mode = t.modes[i];
  bool swap = false;
  if (mode == "BRANCH_LEQ") {
    node.compare = f64 ? TreeCompare::less_equal_f64 : TreeCompare::less_equal_f32;
  } else if (mode == "BRANCH_LT") {
    node.compare = f64 ? TreeCompare::less_f64 : TreeCompare::less_f32;
  } else if (mode == "BRANCH_GTE") {
    node.compare = f64 ? TreeCompare::less_f64 : TreeCompare::less_f32;
    swap = true;
  } else if (mode == "BRANCH_GT") {
    node.compare = f64 ? TreeCompare::less_equal_f64 : TreeCompare::less_equal_f32;
    swap = true;
  } else {
    return a.unsupported(str_cat(where, " has mode ", mode, ", which is not supported"));
  }
  const bool tracks_true = t.tracks[i] != 0;
  node.left = swap ? *no : *yes;
  node.right = swap ? *yes : *no;
  node.default_left = swap ? !tracks_true : tracks_true;
  return absl::OkStatus();
}

// Tree `tree_id` (node id -> attribute index `ids`) added to `m`: one copy per output its leaves
// feed. Raises *max_feature to the largest feature it splits on.
absl::Status add_tree(const NodeAttrs& a, const NodeTable& t, const LeafWeights& leaf_weights,
                      int64_t tree_id, const std::map<int64_t, size_t>& ids, TreeEnsemble& m,
                      int64_t* max_feature) {
  if (!ids.count(0)) return a.error(str_cat("tree ", tree_id, " has no node 0 (its root)"));
  // Node id -> position in the Tree; the root first.
  std::map<int64_t, int32_t> position;
  position[0] = 0;
  for (const auto& [id, i] : ids)
    if (id != 0) position.emplace(id, static_cast<int32_t>(position.size()));
  Tree tree;
  tree.nodes.resize(ids.size());
  std::set<int64_t> outputs_used;
  for (const auto& [id, i] : ids) {
    if (t.modes[i] == "LEAF") {
      if (auto w = leaf_weights.find({tree_id, id}); w != leaf_weights.end())
        for (const auto& [o, v] : w->second) outputs_used.insert(o);
      continue;
    }
    if (absl::Status s = read_split(a, t, tree_id, id, i, position, tree.nodes[position[id]]);
        !s.ok())
      return s;
    *max_feature = std::max(*max_feature, t.features[i]);
  }
  // A tree whose leaves feed several outputs becomes one copy per output.
  if (outputs_used.empty()) outputs_used.insert(0);
  for (int64_t o : outputs_used) {
    Tree copy = tree;
    copy.output = static_cast<int32_t>(o);
    for (const auto& [id, i] : ids) {
      if (t.modes[i] != "LEAF") continue;
      double v = 0.0;
      if (auto w = leaf_weights.find({tree_id, id}); w != leaf_weights.end())
        if (auto x = w->second.find(o); x != w->second.end()) v = x->second;
      copy.nodes[position.at(id)].value = v;
    }
    m.trees.push_back(std::move(copy));
  }
  return absl::OkStatus();
}

// base_values, aggregate_function (regressors) and post_transform.
absl::Status read_aggregation(const NodeAttrs& a, size_t num_trees, OnnxTrees& out) {
  TreeEnsemble& m = out.model;
  auto base = a.numbers("base_values", nullptr);
  if (!base.ok()) return base.status();
  if (base->empty()) {
    m.base_score.assign(static_cast<size_t>(m.num_outputs), 0.0);
  } else if (static_cast<int64_t>(base->size()) == m.num_outputs) {
    m.base_score = *base;
  } else {
    return a.unsupported(
        str_cat("base_values has ", base->size(), " entries for ", m.num_outputs, " scores"));
  }
  if (!out.classifier) {
    const std::string agg = a.string("aggregate_function", "SUM");
    if (agg == "AVERAGE") {
      m.tree_scale = 1.0 / static_cast<double>(num_trees);
    } else if (agg != "SUM") {
      return a.unsupported(str_cat("aggregate_function ", agg, " is not supported"));
    }
  }
  out.post_transform = a.string("post_transform", "NONE");
  const std::string& post = out.post_transform;
  if (!trees::is_ml_post_transform(post))
    return a.unsupported(str_cat("post_transform ", post, " is not supported"));
  return absl::OkStatus();
}

absl::StatusOr<OnnxTrees> read_onnx_trees(const onnx::NodeProto& node) {
  const NodeAttrs a(node);
  OnnxTrees out;
  TreeEnsemble& m = out.model;
  m.name = node.name();
  m.source = "onnx-ml";
  m.objective = node.op_type();
  if (node.op_type() == "TreeEnsembleClassifier") {
    out.classifier = true;
  } else if (node.op_type() != "TreeEnsembleRegressor") {
    return a.error("is not a TreeEnsembleRegressor or TreeEnsembleClassifier");
  }
  auto table = read_nodes(a);
  if (!table.ok()) return table.status();
  auto leaf_weights = read_leaf_weights(a, out);
  if (!leaf_weights.ok()) return leaf_weights.status();
  int64_t max_feature = -1;
  for (const auto& [tree_id, ids] : table->trees)
    if (absl::Status s = add_tree(a, *table, *leaf_weights, tree_id, ids, m, &max_feature); !s.ok())
      return s;
  m.num_features = std::max<int64_t>(1, max_feature + 1);
  if (absl::Status s = read_aggregation(a, table->trees.size(), out); !s.ok()) return s;
  return out;
}

}  // namespace

absl::StatusOr<TreeEnsemble> tree_ensemble_from_onnx(const onnx::NodeProto& node) {
  if (node.op_type() == "TreeEnsemble") return tree_ensemble5_from_onnx(node);
  auto trees = read_onnx_trees(node);
  if (!trees.ok()) return trees.status();
  return std::move(trees->model);
}

absl::StatusOr<ValueId> add_onnx_tree_margins(const onnx::NodeProto& node, GraphBuilder& b,
                                              ValueId x, TreeEnsemble& m,
                                              const TreeGraphOptions& options,
                                              const TreeStrategyChooser& choose) {
  const TensorType xt = b.value(x).type;  // a copy: adding nodes moves the builder's values
  if (xt.dtype != DType::f32 || xt.shape.size() != 2 || xt.shape[1] < m.num_features)
    return absl::InvalidArgumentError(str_cat(node.op_type(), " '", node.name(), "': input is ",
                                              type_to_string(xt), ", expected f32[Nx",
                                              m.num_features, "] or wider"));
  m.num_features = xt.shape[1];
  TreeGraphOptions o = options;
  o.output_margin = true;
  if (choose) {
    std::string label = node.name();
    if (label.empty()) label = node.output_size() ? node.output(0) : node.op_type();
    auto strategy = choose(label, m, xt.shape[0]);
    if (!strategy.ok())
      return absl::Status(strategy.status().code(),
                          str_cat(node.op_type(), " '", label,
                                  "': choosing its tree strategy: ", strategy.status().message()));
    o.strategy = *strategy;
  }
  return add_tree_ensemble(b, x, m, o);
}

absl::Status convert_onnx_tree_ensemble(const onnx::NodeProto& node, GraphBuilder& b, ValueId x,
                                        std::vector<ValueId>& outputs,
                                        const TreeGraphOptions& options,
                                        const TreeStrategyChooser& choose) {
  if (node.op_type() == "TreeEnsemble")
    return convert_onnx_tree_ensemble5(node, b, x, outputs, options, choose);
  auto trees = read_onnx_trees(node);
  if (!trees.ok()) return trees.status();
  TreeEnsemble& m = trees->model;
  const int64_t batch = b.value(x).type.shape.empty() ? 0 : b.value(x).type.shape[0];
  auto margin = add_onnx_tree_margins(node, b, x, m, options, choose);
  if (!margin.ok()) return margin.status();
  const std::string& post = trees->post_transform;
  trees::Emitter e(b, node.name().empty() ? node.op_type() : node.name());
  outputs.clear();
  if (!trees->classifier) {
    // ONNX Runtime applies only PROBIT to a single target.
    ValueId y = *margin;
    if (m.num_outputs > 1 || post == "PROBIT") y = trees::add_ml_post_transform(e, post, y);
    outputs.push_back(y);
  } else if (!trees->info.binary) {
    const ValueId p = trees::add_ml_post_transform(e, post, *margin);
    const ValueId top = e.op("ArgMax", {*margin}, make_attrs<ArgMaxAttrs>([](auto& a) {
                               a.axis = 1;
                               a.keepdims = 0;
                             }));
    const auto count = static_cast<int64_t>(trees->info.labels.size());
    outputs.push_back(e.op("Gather", {e.i64("labels", {count}, trees->info.labels), top}));
    outputs.push_back(p);
  } else {
    // One score s per row. With only non-negative weights ONNX Runtime reads s as the
    // probability of the second label: [1 - s, s], label 2 when s > 0.5. Otherwise s is a
    // margin: [sigmoid(-s), sigmoid(s)] under LOGISTIC, else [-s, s], label 2 when s > 0.
    // Under PROBIT the scores are ONNX's reference implementation's, [probit(1 - s),
    // probit(s)] = [-p, p] with p = probit(s): ONNX Runtime writes p first and leaves the
    // second column unwritten.
    const ValueId s = *margin;
    const bool positive = trees->info.all_positive;
    ValueId first, second = s;
    if (post == "PROBIT") {
      second = trees::add_probit(e, s);
      first = e.op("Neg", {second});
    } else if (positive) {
      first = e.op("Sub", {e.scalar_f32(1.f), s});
    } else if (post == "LOGISTIC") {
      first = e.op("Sigmoid", {e.op("Neg", {s})});
      second = e.op("Sigmoid", {s});
    } else {
      first = e.op("Neg", {s});
    }
    const ValueId pick = e.op("Greater", {s, e.scalar_f32(positive ? 0.5f : 0.f)});
    const ValueId label = e.op(
        "Where", {pick, e.scalar_i64(trees->info.labels[1]), e.scalar_i64(trees->info.labels[0])});
    outputs.push_back(
        e.op("Reshape", {label}, make_attrs<ReshapeAttrs>([&](auto& a) { a.shape = {batch}; })));
    outputs.push_back(
        e.op("Concat", {first, second}, make_attrs<ConcatAttrs>([](auto& a) { a.axis = 1; })));
  }
  if (const auto& names = trees->info.string_labels; !names.empty()) {
    // String labels: the label's position mapped to its string (the strings backend runs it).
    const auto count = static_cast<int64_t>(names.size());
    const std::vector<std::string> none(1);
    outputs[0] = e.op("LabelEncoder", {outputs[0]},
                      make_attrs<LabelEncoderAttrs>([&](auto& a) {
                        a.keys = Tensor::from_i64({count}, trees->info.labels);
                        a.values = Tensor::from_strings({count}, names);
                        a.default_value = Tensor::from_strings({1}, none);
                      }));
  }
  if (!e.status().ok()) return e.status();
  return absl::OkStatus();
}

absl::Status convert_onnx_scaler(const onnx::NodeProto& node, GraphBuilder& b, ValueId x,
                                 std::vector<ValueId>& outputs) {
  const NodeAttrs attrs(node);
  const TensorType xt = b.value(x).type;
  if (xt.dtype != DType::f32 && xt.dtype != DType::i64 && xt.dtype != DType::i32)
    return attrs.error(str_cat("input is ", type_to_string(xt), ", expected f32, i64 or i32"));
  const int64_t width = xt.shape.empty() ? 1 : xt.shape.back();
  std::vector<float> values[2];
  const char* names[2] = {"offset", "scale"};
  for (int k = 0; k < 2; ++k) {
    auto given = attrs.numbers(names[k], nullptr);
    if (!given.ok()) return given.status();
    values[k].assign(given->begin(), given->end());  // floats, exactly
    if (values[k].empty()) values[k] = {k == 0 ? 0.f : 1.f};
    if (values[k].size() != 1 && static_cast<int64_t>(values[k].size()) != width)
      return attrs.error(str_cat(names[k], " has ", values[k].size(),
                                 " values; expected 1 or the input's last dimension, ", width));
  }
  trees::Emitter e(b, node.name().empty() ? node.op_type() : node.name());
  ValueId y = x;
  if (xt.dtype != DType::f32)
    y = e.op("Cast", {y}, make_attrs<CastAttrs>([](auto& a) { a.to = "f32"; }));
  const auto length = [&](int k) { return static_cast<int64_t>(values[k].size()); };
  y = e.op("Sub", {y, e.f32("offset", {length(0)}, values[0])});
  y = e.op("Mul", {y, e.f32("scale", {length(1)}, values[1])});
  if (!e.status().ok()) return e.status();
  outputs = {y};
  return absl::OkStatus();
}

}  // namespace collage
