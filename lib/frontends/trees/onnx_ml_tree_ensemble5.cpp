// ONNX-ML TreeEnsemble (ai.onnx.ml opset 5): nodes_* / leaf_* arrays, tree_roots, set-membership
// and equality splits, SUM/AVERAGE/MIN/MAX aggregation; read into the TreeEnsemble that every
// tree strategy (the fused trees kernel included) compiles. Equality and membership splits
// become small subtrees of `<` / `<=` comparisons over the sorted set values.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "collage/ops.h"
#include "core/str_cat.h"
#include "frontends/trees/onnx_ml_internal.h"
#include "frontends/trees/tree_post_transform.h"
#include "frontends/trees/tree_program.h"

namespace collage {
namespace {

enum Mode : int64_t { kLeq = 0, kLt, kGte, kGt, kEq, kNeq, kMember };
enum Aggregate : int64_t { kAverage = 0, kSum, kMin, kMax };
enum Post : int64_t { kNone = 0, kSoftmax, kLogistic, kSoftmaxZero, kProbit };

// Nodes one tree may expand to (membership splits copy their subtrees) before it is refused.
constexpr size_t kMaxTreeNodes = size_t{1} << 20;
// Split levels followed from a root before the node is refused as cyclic or too deep.
constexpr int kMaxLevels = 512;

// The node's name in messages: its name, else its first output.
std::string shown_name(const onnx::NodeProto& node) {
  if (!node.name().empty() || node.output_size() == 0) return node.name();
  return node.output(0);
}

struct Attrs {
  explicit Attrs(const onnx::NodeProto& node) {
    label = str_cat("TreeEnsemble '", shown_name(node), "'");
    for (const auto& a : node.attribute()) by_name[a.name()] = &a;
  }
  absl::Status error(std::string_view m) const {
    return absl::InvalidArgumentError(str_cat(label, ": ", m));
  }
  std::vector<int64_t> ints(const std::string& n) const {
    auto it = by_name.find(n);
    if (it == by_name.end()) return {};
    return {it->second->ints().begin(), it->second->ints().end()};
  }
  int64_t integer(const std::string& n, int64_t fallback) const {
    auto it = by_name.find(n);
    return it == by_name.end() ? fallback : it->second->i();
  }
  // A tensor attribute's values as doubles (FLOAT, DOUBLE, FLOAT16 or UINT8); empty when absent.
  // *dtype gets its element type.
  absl::StatusOr<std::vector<double>> numbers(const std::string& n, DType* dtype) const {
    auto it = by_name.find(n);
    if (it == by_name.end()) return std::vector<double>{};
    const onnx::TensorProto& t = it->second->t();
    DType d;
    switch (t.data_type()) {
      case onnx::TensorProto::FLOAT:
        d = DType::f32;
        break;
      case onnx::TensorProto::DOUBLE:
        d = DType::f64;
        break;
      case onnx::TensorProto::FLOAT16:
        d = DType::f16;
        break;
      case onnx::TensorProto::UINT8:
        d = DType::u8;
        break;
      default:
        return error(str_cat(n, " has element type ", t.data_type(),
                             "; expected FLOAT, DOUBLE, FLOAT16 or UINT8"));
    }
    if (dtype) *dtype = d;
    int64_t count = 1;
    for (int64_t dim : t.dims()) count *= dim;
    if (count < 0 || count > (int64_t{1} << 30))
      return error(str_cat(n, " has ", count, " values"));
    Tensor v(d, {count});
    const size_t bytes = static_cast<size_t>(count) * dtype_size(d);
    if (t.has_raw_data()) {
      if (t.raw_data().size() != bytes)
        return error(
            str_cat(n, " has ", t.raw_data().size(), " bytes of raw_data for ", count, " values"));
      std::memcpy(v.raw(), t.raw_data().data(), bytes);
    } else {
      const int64_t given = d == DType::f32   ? t.float_data_size()
                            : d == DType::f64 ? t.double_data_size()
                                              : t.int32_data_size();
      if (given != count) return error(str_cat(n, " has ", given, " values, dims say ", count));
      for (int64_t i = 0; i < count; ++i) {
        if (d == DType::f32) v.data<float>()[i] = t.float_data(static_cast<int>(i));
        if (d == DType::f64) v.data<double>()[i] = t.double_data(static_cast<int>(i));
        if (d == DType::u8)
          v.data<uint8_t>()[i] = static_cast<uint8_t>(t.int32_data(static_cast<int>(i)));
        if (d == DType::f16) {
          const auto bits = static_cast<uint16_t>(t.int32_data(static_cast<int>(i)));
          std::memcpy(static_cast<uint8_t*>(v.raw()) + 2 * i, &bits, 2);
        }
      }
    }
    std::vector<double> out(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) out[i] = v.get_as_double(i);
    return out;
  }

  std::string label;
  std::map<std::string, const onnx::AttributeProto*> by_name;
};

// The node's arrays, checked for matching lengths.
struct Table {
  std::vector<int64_t> features, true_ids, false_ids, true_leaf, false_leaf, tracks, modes;
  std::vector<double> splits, leaf_weights;
  std::vector<int64_t> leaf_targets, roots;
  std::vector<std::vector<double>> member_sets;  // per node: its set (MEMBER nodes only)
  bool f64_splits = false;
  int64_t n_targets = 1;
};

absl::StatusOr<Table> read_table(const Attrs& a) {
  Table t;
  t.features = a.ints("nodes_featureids");
  t.true_ids = a.ints("nodes_truenodeids");
  t.false_ids = a.ints("nodes_falsenodeids");
  t.true_leaf = a.ints("nodes_trueleafs");
  t.false_leaf = a.ints("nodes_falseleafs");
  t.tracks = a.ints("nodes_missing_value_tracks_true");
  t.leaf_targets = a.ints("leaf_targetids");
  t.roots = a.ints("tree_roots");
  t.n_targets = a.integer("n_targets", 1);
  DType split_type = DType::f32, mode_type = DType::u8;
  auto modes = a.numbers("nodes_modes", &mode_type);
  if (!modes.ok()) return modes.status();
  auto splits = a.numbers("nodes_splits", &split_type);
  if (!splits.ok()) return splits.status();
  auto weights = a.numbers("leaf_weights", nullptr);
  if (!weights.ok()) return weights.status();
  auto members = a.numbers("membership_values", nullptr);
  if (!members.ok()) return members.status();
  if (mode_type != DType::u8) return a.error("nodes_modes must be a UINT8 tensor");
  t.f64_splits = split_type == DType::f64;
  t.splits = *std::move(splits);
  t.leaf_weights = *std::move(weights);
  for (double m : *modes) t.modes.push_back(static_cast<int64_t>(m));
  const size_t n = t.features.size();
  if (n == 0) return a.error("has no nodes (nodes_featureids is empty)");
  if (t.tracks.empty()) t.tracks.assign(n, 0);
  for (auto [name, size] : {std::pair<const char*, size_t>{"nodes_truenodeids", t.true_ids.size()},
                            {"nodes_falsenodeids", t.false_ids.size()},
                            {"nodes_trueleafs", t.true_leaf.size()},
                            {"nodes_falseleafs", t.false_leaf.size()},
                            {"nodes_modes", t.modes.size()},
                            {"nodes_splits", t.splits.size()},
                            {"nodes_missing_value_tracks_true", t.tracks.size()}})
    if (size != n)
      return a.error(str_cat(name, " has ", size, " entries, nodes_featureids has ", n));
  if (t.leaf_weights.size() != t.leaf_targets.size())
    return a.error(str_cat("leaf_weights has ", t.leaf_weights.size(), " entries, leaf_targetids ",
                           t.leaf_targets.size()));
  if (t.roots.empty()) return a.error("tree_roots is empty");
  if (t.n_targets < 1 || t.n_targets > (1 << 20))
    return a.error(str_cat("n_targets is ", t.n_targets));
  for (size_t k = 0; k < t.leaf_targets.size(); ++k)
    if (t.leaf_targets[k] < 0 || t.leaf_targets[k] >= t.n_targets)
      return a.error(str_cat("leaf_targetids entry ", k, " is ", t.leaf_targets[k],
                             ", expected below n_targets ", t.n_targets));
  // membership_values: one NaN-terminated run per MEMBER node, in node order.
  t.member_sets.resize(n);
  size_t next = 0;
  for (size_t i = 0; i < n; ++i) {
    if (t.modes[i] < kLeq || t.modes[i] > kMember)
      return a.error(str_cat("node ", i, " has mode ", t.modes[i], "; expected 0 to 6"));
    if (t.modes[i] != kMember) continue;
    for (;; ++next) {
      if (next >= members->size())
        return a.error(str_cat("membership_values has no set for member node ", i,
                               " (each set ends with a NaN)"));
      if (std::isnan((*members)[next])) break;
      t.member_sets[i].push_back((*members)[next]);
    }
    ++next;
  }
  return t;
}

// Builds one tree, copying the subtrees below set-membership splits.
// With `double_input` the trees see X rounded to float, so every comparison is made between
// floats (x <= t as float(x) <= float(t): the double comparison but for x within float rounding
// of t); otherwise X is exactly a float and double splits compare exactly.
class TreeBuilder {
 public:
  TreeBuilder(const Attrs& a, const Table& t, bool double_input, int64_t target, double other,
              int64_t* max_feature)
      : a_(a),
        t_(t),
        double_input_(double_input),
        target_(target),
        other_(other),
        max_feature_(max_feature) {}

  // The subtree at array index `i` (a leaf index when `leaf`), appended; its position.
  absl::StatusOr<int32_t> add(int64_t i, bool leaf, int level) {
    if (tree_.nodes.size() >= kMaxTreeNodes)
      return a_.error(str_cat("a tree expands to more than ", kMaxTreeNodes, " nodes"));
    if (leaf) {
      if (i < 0 || i >= static_cast<int64_t>(t_.leaf_weights.size()))
        return a_.error(
            str_cat("leaf index ", i, " is out of range (", t_.leaf_weights.size(), " leaves)"));
      TreeNode node;
      node.value = t_.leaf_targets[i] == target_ ? t_.leaf_weights[i] : other_;
      tree_.nodes.push_back(node);
      return static_cast<int32_t>(tree_.nodes.size() - 1);
    }
    if (i < 0 || i >= static_cast<int64_t>(t_.features.size()))
      return a_.error(
          str_cat("node index ", i, " is out of range (", t_.features.size(), " nodes)"));
    if (level >= kMaxLevels)
      return a_.error(str_cat("node ", i, " lies ", kMaxLevels,
                              " splits below its root (a cycle, or too deep)"));
    if (t_.features[i] < 0 || t_.features[i] >= (int64_t{1} << 30))
      return a_.error(str_cat("node ", i, " has feature id ", t_.features[i]));
    *max_feature_ = std::max(*max_feature_, t_.features[i]);
    const int64_t mode = t_.modes[i];
    if (mode >= kEq) return add_set(i, level);
    // x <= t, x < t, and the complements (>=, >) with the branches swapped.
    const bool swap = mode == kGte || mode == kGt;
    const bool equal = mode == kLeq || mode == kGt;
    const bool f64 = t_.f64_splits && !double_input_;
    TreeNode node;
    node.feature = static_cast<int32_t>(t_.features[i]);
    node.threshold = t_.splits[i];
    if (std::isnan(node.threshold)) return a_.error(str_cat("node ", i, " has a NaN split"));
    node.compare = equal ? (f64 ? TreeCompare::less_equal_f64 : TreeCompare::less_equal_f32)
                         : (f64 ? TreeCompare::less_f64 : TreeCompare::less_f32);
    node.missing = TreeMissing::nan;
    const bool tracks_true = t_.tracks[i] != 0;
    node.default_left = swap ? !tracks_true : tracks_true;
    const int32_t at = push(node);
    auto yes = add(t_.true_ids[i], t_.true_leaf[i] != 0, level + 1);
    if (!yes.ok()) return yes.status();
    auto no = add(t_.false_ids[i], t_.false_leaf[i] != 0, level + 1);
    if (!no.ok()) return no.status();
    tree_.nodes[at].left = swap ? *no : *yes;
    tree_.nodes[at].right = swap ? *yes : *no;
    return at;
  }

  Tree take() { return std::move(tree_); }

 private:
  int32_t push(const TreeNode& n) {
    tree_.nodes.push_back(n);
    return static_cast<int32_t>(tree_.nodes.size() - 1);
  }

  // EQ, NEQ and MEMBER over the sorted values v1 < ... < vk: the real line in 2k + 1 pieces,
  // (-inf, v1), [v1], (v1, v2), ..., [vk], (vk, inf); the odd pieces are the members. A balanced
  // tree of `x < v` / `x <= v` picks the piece; each piece holds a copy of its branch. NaN is no
  // member (NEQ: NaN != v holds) unless the node tracks missing values to the true branch.
  absl::StatusOr<int32_t> add_set(int64_t i, int level) {
    const int64_t mode = t_.modes[i];
    std::vector<double> values =
        mode == kMember ? t_.member_sets[i] : std::vector<double>{t_.splits[i]};
    if (values.empty()) return a_.error(str_cat("member node ", i, " has an empty set"));
    for (double v : values)
      if (std::isnan(v)) return a_.error(str_cat("node ", i, " compares with NaN"));
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    const bool neq = mode == kNeq;
    const bool nan_true = neq || t_.tracks[i] != 0;
    // The piece NaN ends in: a member piece (1) when it goes where members go, else piece 0.
    const int64_t nan_piece = nan_true != neq ? 1 : 0;
    const auto pieces = static_cast<int64_t>(2 * values.size() + 1);
    return add_pieces(i, values, 0, pieces - 1, nan_piece, neq, level);
  }

  absl::StatusOr<int32_t> add_pieces(int64_t i, const std::vector<double>& v, int64_t lo,
                                     int64_t hi, int64_t nan_piece, bool neq, int level) {
    if (lo == hi) {
      const bool member = lo % 2 == 1;
      const bool to_true = member != neq;
      return add(to_true ? t_.true_ids[i] : t_.false_ids[i],
                 (to_true ? t_.true_leaf[i] : t_.false_leaf[i]) != 0, level + 1);
    }
    const int64_t mid = (lo + hi) / 2;  // boundary between piece mid and mid + 1
    TreeNode node;
    node.feature = static_cast<int32_t>(t_.features[i]);
    node.threshold = v[static_cast<size_t>(mid / 2)];
    // Exact for a float X (the values compare as given); between floats for a double X.
    const bool below = mid % 2 == 0;  // the boundary before a member: x < v, else x <= v
    if (double_input_)
      node.compare = below ? TreeCompare::less_f32 : TreeCompare::less_equal_f32;
    else
      node.compare = below ? TreeCompare::less_f64 : TreeCompare::less_equal_f64;
    node.missing = TreeMissing::nan;
    node.default_left = nan_piece <= mid;
    const int32_t at = push(node);
    auto left = add_pieces(i, v, lo, mid, nan_piece, neq, level);
    if (!left.ok()) return left.status();
    auto right = add_pieces(i, v, mid + 1, hi, nan_piece, neq, level);
    if (!right.ok()) return right.status();
    tree_.nodes[at].left = *left;
    tree_.nodes[at].right = *right;
    return at;
  }

  const Attrs& a_;
  const Table& t_;
  bool double_input_;
  int64_t target_;
  double other_;
  int64_t* max_feature_;
  Tree tree_;
};

// The targets the leaves reachable from a root feed (following the arrays, each node once, so
// that shared children and cycles cost nothing; below kMaxLevels TreeBuilder fails anyway).
void reachable_targets(const Table& t, int64_t i, bool leaf, int level, std::vector<bool>& seen,
                       std::set<int64_t>& out) {
  if (leaf) {
    if (i >= 0 && i < static_cast<int64_t>(t.leaf_targets.size())) out.insert(t.leaf_targets[i]);
    return;
  }
  if (i < 0 || i >= static_cast<int64_t>(t.features.size()) || seen[i] || level >= kMaxLevels)
    return;
  seen[i] = true;
  reachable_targets(t, t.true_ids[i], t.true_leaf[i] != 0, level + 1, seen, out);
  reachable_targets(t, t.false_ids[i], t.false_leaf[i] != 0, level + 1, seen, out);
}

struct Ensemble5 {
  TreeEnsemble model;
  int64_t aggregate = kSum;
  int64_t post = kNone;
  int64_t n_targets = 1;
  int64_t columns_per_target = 1;  // MIN/MAX: one margin column per tree copy
};

absl::StatusOr<Ensemble5> read_ensemble5(const onnx::NodeProto& node, bool double_input) {
  const Attrs a(node);
  auto t = read_table(a);
  if (!t.ok()) return t.status();
  Ensemble5 e;
  e.n_targets = t->n_targets;
  e.aggregate = a.integer("aggregate_function", kSum);
  e.post = a.integer("post_transform", kNone);
  if (e.aggregate < kAverage || e.aggregate > kMax)
    return a.error(str_cat("aggregate_function is ", e.aggregate, "; expected 0 to 3"));
  if (e.post < kNone || e.post > kProbit)
    return a.error(str_cat("post_transform is ", e.post, "; expected 0 to 4"));
  const bool extreme = e.aggregate == kMin || e.aggregate == kMax;
  // MIN/MAX: a leaf of another target leaves the result alone, as the start value does.
  const double identity = e.aggregate == kMin ? FLT_MAX : -FLT_MAX;
  TreeEnsemble& m = e.model;
  m.name = node.name();
  m.source = "onnx-ml";
  m.objective = "TreeEnsemble";
  int64_t max_feature = -1;
  std::vector<std::vector<Tree>> per_target(static_cast<size_t>(e.n_targets));
  for (int64_t root : t->roots) {
    if (root < 0 || root >= static_cast<int64_t>(t->features.size()))
      return a.error(str_cat("tree root ", root, " is out of range"));
    // A tree that is one leaf: both branches of the root name the same leaf.
    const bool single =
        t->true_leaf[root] && t->false_leaf[root] && t->true_ids[root] == t->false_ids[root];
    const int64_t start = single ? t->true_ids[root] : root;
    std::set<int64_t> targets;
    std::vector<bool> seen(t->features.size(), false);
    reachable_targets(*t, start, single, 0, seen, targets);
    if (targets.empty()) targets.insert(0);
    for (int64_t target : targets) {
      TreeBuilder builder(a, *t, double_input, target, extreme ? identity : 0.0, &max_feature);
      auto r = builder.add(start, single, 0);
      if (!r.ok()) return r.status();
      per_target[target].push_back(builder.take());
    }
  }
  if (extreme) {
    size_t k = 1;
    for (const auto& trees : per_target) k = std::max(k, trees.size());
    e.columns_per_target = static_cast<int64_t>(k);
    for (size_t o = 0; o < per_target.size(); ++o) {
      for (size_t j = 0; j < k; ++j) {
        Tree tree;
        if (j < per_target[o].size()) {
          tree = std::move(per_target[o][j]);
        } else {
          TreeNode leaf;
          leaf.value = identity;
          tree.nodes.push_back(leaf);
        }
        tree.output = static_cast<int32_t>(o * k + j);
        m.trees.push_back(std::move(tree));
      }
    }
    m.num_outputs = e.n_targets * e.columns_per_target;
  } else {
    for (size_t o = 0; o < per_target.size(); ++o)
      for (Tree& tree : per_target[o]) {
        tree.output = static_cast<int32_t>(o);
        m.trees.push_back(std::move(tree));
      }
    m.num_outputs = e.n_targets;
    if (e.aggregate == kAverage) m.tree_scale = 1.0 / static_cast<double>(t->roots.size());
  }
  m.base_score.assign(static_cast<size_t>(m.num_outputs), 0.0);
  m.num_features = std::max<int64_t>(1, max_feature + 1);
  return e;
}

}  // namespace

absl::StatusOr<TreeEnsemble> tree_ensemble5_from_onnx(const onnx::NodeProto& node) {
  auto e = read_ensemble5(node, /*double_input=*/false);
  if (!e.ok()) return e.status();
  return std::move(e->model);
}

absl::Status convert_onnx_tree_ensemble5(const onnx::NodeProto& node, GraphBuilder& b, ValueId x,
                                         std::vector<ValueId>& outputs,
                                         const TreeGraphOptions& options,
                                         const TreeStrategyChooser& choose) {
  const TensorType xt = b.value(x).type;  // a copy: adding nodes moves the builder's values
  auto e = read_ensemble5(node, xt.dtype == DType::f64);
  if (!e.ok()) return e.status();
  const std::string name = shown_name(node);
  if ((xt.dtype != DType::f32 && xt.dtype != DType::f64 && xt.dtype != DType::f16) ||
      xt.shape.size() != 2 || xt.shape[1] < e->model.num_features)
    return absl::InvalidArgumentError(str_cat("TreeEnsemble '", name, "': input is ",
                                              type_to_string(xt), ", expected f32, f64 or f16 [Nx",
                                              e->model.num_features, "] or wider"));
  trees::Emitter em(b, name.empty() ? "TreeEnsemble" : name);
  ValueId in = x;
  // The trees compare in float32; a double input is rounded to float first (TreeBuilder).
  if (xt.dtype != DType::f32)
    in = em.op("Cast", {x}, make_attrs<CastAttrs>([](auto& a) { a.to = "f32"; }));
  if (!em.status().ok()) return em.status();
  auto margin = add_onnx_tree_margins(node, b, in, e->model, options, choose);
  if (!margin.ok()) return margin.status();
  ValueId y = *margin;
  const int64_t batch = xt.shape[0];
  if (e->aggregate == kMin || e->aggregate == kMax) {
    y = em.op("Reshape", {y}, make_attrs<ReshapeAttrs>([&](auto& a) {
                a.shape = {batch, e->n_targets, e->columns_per_target};
              }));
    y = em.op(e->aggregate == kMin ? "ReduceMin" : "ReduceMax", {y},
              make_attrs<ReduceAttrs>([](auto& a) {
                a.axes = {2};
                a.keepdims = 0;
              }));
  }
  // As the opset-5 spec numbers them (1 SOFTMAX, 2 LOGISTIC; ONNX Runtime 1.31 swaps the two),
  // for any number of targets.
  if (e->post == kLogistic) y = em.op("Sigmoid", {y});
  if (e->post == kSoftmax)
    y = em.op("Softmax", {y}, make_attrs<SoftmaxAttrs>([](auto& a) { a.axis = -1; }));
  if (e->post == kSoftmaxZero) y = trees::add_softmax_zero(em, y);
  if (e->post == kProbit) y = trees::add_probit(em, y);
  if (xt.dtype != DType::f32)
    y = em.op("Cast", {y},
              make_attrs<CastAttrs>([&](auto& a) { a.to = std::string(dtype_name(xt.dtype)); }));
  if (!em.status().ok()) return em.status();
  outputs = {y};
  return absl::OkStatus();
}

}  // namespace collage
