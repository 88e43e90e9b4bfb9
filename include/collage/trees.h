// Tree ensembles (XGBoost, LightGBM, ONNX-ML) and their compilation into graph-IR tensor programs
// with Hummingbird's three strategies: GEMM, tree traversal and perfect tree traversal.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/graph.h"
#include "collage/onnx.h"

namespace onnx {
class NodeProto;
}

namespace collage {

// --- The model -----------------------------------------------------------------------------------

// How an internal node compares the feature value x with its threshold t; true sends x to the
// left child. Each library's rule is kept as it is, so that a model means what the library that
// trained it computes; the graph builder turns every rule into one float32 `x < t'` (see
// tree_thresholds.cpp).
enum class TreeCompare : uint8_t {
  less_f32,        // float(x) < float(t): XGBoost, ONNX-ML BRANCH_LT
  less_equal_f32,  // float(x) <= float(t): ONNX-ML BRANCH_LEQ
  less_equal_f64,  // double(x) <= t: LightGBM, ONNX-ML BRANCH_LEQ with double thresholds
  less_f64,        // double(x) < t: ONNX-ML BRANCH_LT with double thresholds
};

// Which inputs a node treats as missing; a missing value goes to the default child.
enum class TreeMissing : uint8_t {
  nan,          // NaN is missing (XGBoost; LightGBM MissingType::NaN; ONNX-ML)
  nan_is_zero,  // nothing is missing: NaN is compared as 0 (LightGBM MissingType::None)
  zero_or_nan,  // NaN and |x| <= 1e-35f are missing (LightGBM MissingType::Zero)
};

struct TreeNode {
  int32_t feature = -1;  // internal node: the feature compared; leaf: -1
  double threshold = 0.0;
  TreeCompare compare = TreeCompare::less_f32;
  TreeMissing missing = TreeMissing::nan;
  bool default_left = false;      // where a missing value goes
  int32_t left = -1, right = -1;  // internal node: children, as indices into Tree::nodes
  double value = 0.0;             // leaf: what the tree adds to its output
  bool is_leaf() const { return feature < 0; }
};

// One tree; the root is nodes[0]. Every node other than the root is the child of exactly one node.
struct Tree {
  std::vector<TreeNode> nodes;
  int32_t output = 0;  // the model output its leaf values add to
};

// What is applied to the margins to give the predictions.
enum class TreePostTransform : uint8_t {
  none,     // prediction = margin
  sigmoid,  // 1 / (1 + exp(-sigmoid_scale * margin)), per output
  softmax,  // softmax over the outputs
  exp,      // exp(margin) (Poisson, gamma, Tweedie)
};

// A trained ensemble: margin[o] = base_score[o] + tree_scale * sum of the leaf values reached in
// the trees whose output is o, and prediction = post_transform(margin).
struct TreeEnsemble {
  std::string name;       // e.g. the file name, for messages
  std::string source;     // "xgboost", "lightgbm" or "onnx-ml"
  std::string objective;  // as the library names it ("binary:logistic", "multiclass", ...)
  int64_t num_features = 0;
  int64_t num_outputs = 1;  // 1 for regression and binary classification, else the classes
  std::vector<Tree> trees;
  std::vector<double> base_score;  // one margin per output
  double tree_scale = 1.0;         // 1 / number of iterations for averaged forests
  // Inputs with |x| <= zero_threshold are read as 0 before any split: LightGBM's predictors drop
  // such values from a row (1e-35f), and an absent value is 0. 0 leaves inputs as they are.
  double zero_threshold = 0.0;
  TreePostTransform post_transform = TreePostTransform::none;
  double sigmoid_scale = 1.0;
};

// Checks the structure: every tree a proper binary tree rooted at node 0 (children in range, each
// node reached once), features in [0, num_features), outputs in [0, num_outputs), thresholds not
// NaN, base_score of num_outputs entries. InvalidArgument naming the model, tree and node.
absl::Status validate_tree_ensemble(const TreeEnsemble& model);

// The largest number of internal nodes on a root-to-leaf path (0 when every tree is a leaf).
int tree_ensemble_depth(const TreeEnsemble& model);

// Predictions of `model` for the rows of `x` (f32 [batch, num_features]) computed by walking each
// tree with the library's own comparison; the oracle the tensor programs are tested against.
// Returns f32 [batch, num_outputs]. InvalidArgument for a wrong input type or shape.
absl::StatusOr<Tensor> evaluate_tree_ensemble(const TreeEnsemble& model, const Tensor& x);

// --- Importers -----------------------------------------------------------------------------------
// Errors name the file and, where one is at fault, the tree, node and field: NotFound for a missing
// file, Unimplemented for a valid model collage does not handle (categorical splits, an objective
// without a known transform, multi-target trees, linear trees), InvalidArgument for the rest.

// An XGBoost JSON model (`booster.save_model("m.json")`), gbtree or dart booster. Objectives:
// reg:squarederror, reg:squaredlogerror, reg:pseudohubererror, reg:absoluteerror,
// reg:quantileerror (identity), reg:logistic, binary:logistic (sigmoid), binary:logitraw
// (margin), multi:softprob and multi:softmax (softmax probabilities), count:poisson, reg:gamma,
// reg:tweedie (exp). base_score is turned into a margin as XGBoost does (logit for the logistic
// objectives, log for the exp ones).
absl::StatusOr<TreeEnsemble> import_xgboost_json(const std::filesystem::path& path);
absl::StatusOr<TreeEnsemble> parse_xgboost_json(std::string_view text, std::string_view name);

// A LightGBM text model (`booster.save_model("model.txt")`). Objectives: regression (and its L1,
// Huber, fair, quantile and MAPE variants), binary (sigmoid), multiclass (softmax), multiclassova
// and cross_entropy (sigmoid), poisson, gamma and tweedie (exp); averaged random forests.
absl::StatusOr<TreeEnsemble> import_lightgbm_text(const std::filesystem::path& path);
absl::StatusOr<TreeEnsemble> parse_lightgbm_text(std::string_view text, std::string_view name);

// --- Tensor programs -----------------------------------------------------------------------------

// Hummingbird's strategies, plus `fused`: the perfect-tree layout as one TreeEnsemble operator
// (include/collage/ops/trees.h), which the trees backend runs as one vectorized kernel.
// `automatic` is the default when nothing was measured: fused where the model allows it (no
// LightGBM zero band, depth <= 16), else by depth as Hummingbird does: GEMM up
// to depth 3, perfect tree traversal up to depth 10, tree traversal beyond. choose_tree_strategy
// picks by measurement instead.
enum class TreeStrategy : uint8_t {
  automatic,
  gemm,
  tree_traversal,
  perfect_tree_traversal,
  fused,
};
std::string_view tree_strategy_name(TreeStrategy s);  // "auto", "gemm", "tt", "ptt", "fused"
// Inverse of tree_strategy_name; also accepts "tree_traversal" and "perfect_tree_traversal".
absl::StatusOr<TreeStrategy> parse_tree_strategy(std::string_view name);
// The strategy `automatic` resolves to for this model.
TreeStrategy pick_tree_strategy(const TreeEnsemble& model);

struct TreeGraphOptions {
  TreeStrategy strategy = TreeStrategy::automatic;
  // Output the margins (before the post transform) instead of the predictions.
  bool output_margin = false;
};

// Adds the program computing `model` on `x` (f32 [batch, num_features]) to `b` and returns the
// value holding f32 [batch, num_outputs] predictions (margins with output_margin). Missing values
// (NaN) follow each node's default child and every comparison gives the library's result for
// every float32 input, NaN and infinities included. Errors: an invalid model, a wrong `x`, or a
// strategy whose tensors would be too large (ResourceExhausted, naming the tensor).
absl::StatusOr<ValueId> add_tree_ensemble(GraphBuilder& b, ValueId x, const TreeEnsemble& model,
                                          const TreeGraphOptions& options = {});

// A graph with one input "input" (f32 [batch, num_features]) and one output "predictions"
// (f32 [batch, num_outputs]).
absl::StatusOr<Graph> build_tree_graph(const Context& ctx, const TreeEnsemble& model,
                                       TreeStrategy strategy, int64_t batch,
                                       const TreeGraphOptions& options = {});

// --- Measured strategy choice --------------------------------------------------------------------

// One candidate: a strategy and, for `fused`, the kernel variant the measurer should build
// ("auto", "scalar", "avx512", "avx512_ranks" for the trees backend; empty for the graph
// strategies).
struct TreeStrategyCandidate {
  TreeStrategy strategy = TreeStrategy::fused;
  std::string variant;
};
// fused:auto, ptt, tt, gemm (in this order, which also breaks ties).
std::vector<TreeStrategyCandidate> default_tree_strategy_candidates();
std::string tree_strategy_label(const TreeStrategyCandidate& c);  // "ptt", "fused:avx512"

// Times one candidate's graph (build_tree_graph at the batch being chosen for): milliseconds per
// run on the device, as the placement measurer reports it; an error drops the candidate.
using TreeStrategyMeasurer =
    std::function<absl::StatusOr<double>(const TreeStrategyCandidate&, const Graph&)>;

struct TreeStrategyTiming {
  TreeStrategyCandidate candidate;
  double ms = -1.0;     // measured time, or -1 when skipped
  absl::Status status;  // why it was skipped
};

struct TreeStrategyChoice {
  TreeStrategyCandidate best;
  std::vector<TreeStrategyTiming> timings;  // one per candidate, in candidate order
};

struct TreeStrategyChoiceOptions {
  // A candidate whose graph holds a larger tensor at this batch is not measured (GEMM on deep
  // trees builds [batch, trees * nodes] intermediates).
  int64_t max_value_bytes = int64_t{1} << 30;
};

// Builds each candidate's graph for `model` at `batch`, measures it with `measure` and returns the
// fastest (the earlier candidate on a tie), with every timing. Candidates the model cannot use
// (ResourceExhausted, Unimplemented) or whose measurement fails are skipped with their reason.
// Errors: InvalidArgument for an invalid model or batch, or an `automatic` candidate;
// ResourceExhausted when no candidate could be measured.
absl::StatusOr<TreeStrategyChoice> choose_tree_strategy(
    const Context& ctx, const TreeEnsemble& model, int64_t batch,
    const std::vector<TreeStrategyCandidate>& candidates, const TreeStrategyMeasurer& measure,
    const TreeStrategyChoiceOptions& options = {});

// --- ONNX-ML -------------------------------------------------------------------------------------

// Converts an ai.onnx.ml TreeEnsembleRegressor or TreeEnsembleClassifier node applied to `x`
// (f32 [batch, features]) into graph nodes added to `b`, and sets `outputs` to the node's outputs
// as ONNX Runtime computes them: the regressor's Y (f32 [batch, n_targets]); the classifier's
// label (i64 [batch], from classlabels_int64s) and probabilities (f32 [batch, classes]). A
// TreeEnsemble node (ai.onnx.ml opset 5; x f32, f64 or f16) gives Y in x's type (docs/trees.md).
// Unimplemented for what collage does not handle (string class labels, BRANCH_EQ/BRANCH_NEQ,
// MIN/MAX aggregation of the opset-3 operators, a binary classifier's PROBIT); InvalidArgument
// naming the node and attribute for a malformed node.
// When `choose` is not empty it is asked for the strategy, which replaces options.strategy.
absl::Status convert_onnx_tree_ensemble(const onnx::NodeProto& node, GraphBuilder& b, ValueId x,
                                        std::vector<ValueId>& outputs,
                                        const TreeGraphOptions& options = {},
                                        const TreeStrategyChooser& choose = {});

// An ai.onnx.ml Scaler node applied to `x` (f32, i64 or i32; its last dimension the
// features): Y = (float(x) - offset) * scale in float32, as ONNX Runtime computes it, offset and
// scale holding one value or one per feature. InvalidArgument naming the node for anything else.
absl::Status convert_onnx_scaler(const onnx::NodeProto& node, GraphBuilder& b, ValueId x,
                                 std::vector<ValueId>& outputs);

// The tree model of a TreeEnsembleRegressor/Classifier node, whose margins are the node's scores
// before its post transform and output formatting.
absl::StatusOr<TreeEnsemble> tree_ensemble_from_onnx(const onnx::NodeProto& node);

// --- Any model file (library collage_model_file)
// ----------------------------------------------------

enum class ModelFormat : uint8_t { automatic, onnx, xgboost, lightgbm };
std::string_view model_format_name(ModelFormat f);  // "auto", "onnx", "xgboost", "lightgbm"
absl::StatusOr<ModelFormat> parse_model_format(std::string_view name);
// The format of a file from its first bytes: JSON with a "learner" key is XGBoost, text starting
// "tree\nversion=" is LightGBM, anything else is taken for ONNX. NotFound for a missing file.
absl::StatusOr<ModelFormat> detect_model_format(const std::filesystem::path& path);

struct ModelImportOptions {
  ModelFormat format = ModelFormat::automatic;
  // ONNX: as for import_onnx_file. Tree models: a shape for input "input" sets the batch size
  // (its second dimension must be the model's feature count); the default batch is 1.
  OnnxImportOptions onnx;
  // Tree models; trees.strategy also applies to an ONNX file's tree-ensemble nodes when
  // onnx.tree_strategy is empty.
  TreeGraphOptions trees;
};

// The tree ensemble of an XGBoost JSON or LightGBM text file (`format`, or detected from the
// content when automatic); std::nullopt for an ONNX file, which is left to import_onnx_file.
// Errors are the importer's.
absl::StatusOr<std::optional<TreeEnsemble>> import_tree_model_file(
    const std::filesystem::path& path, ModelFormat format = ModelFormat::automatic);

// The batch a tree model is compiled for: the first dimension of the shape given for input
// "input" (ModelImportOptions::onnx.input_shapes), 1 when none is given. InvalidArgument for a
// shape of another input, or one that is not [batch >= 1, num_features].
absl::StatusOr<int64_t> tree_model_batch(const TreeEnsemble& model,
                                         const std::map<std::string, Shape>& input_shapes);

// Imports an ONNX, XGBoost JSON or LightGBM text model into a graph. Tree models give the graph
// of build_tree_graph. Errors are the importer's.
absl::StatusOr<Graph> import_model_file(const Context& ctx, const std::filesystem::path& path,
                                        const ModelImportOptions& options = {});

}  // namespace collage
