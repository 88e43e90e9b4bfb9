// ai.onnx.ml LinearClassifier and LinearRegressor: one Gemm (X times the coefficients, plus the
// intercepts: the fast backends run it) followed by the post transform and the labels, with ONNX
// Runtime's rules for a single score column.
#include "collage/ops.h"
#include "frontends/trees/onnx_ml_models.h"
#include "frontends/trees/tree_post_transform.h"

namespace collage::ml {
namespace {

// The coefficients as a [rows, features] matrix; `rows` gets their number (0: `rows` must
// follow from the coefficients). Errors name the node.
absl::StatusOr<std::vector<float>> read_coefficients(const NodeAttrs& a, int64_t features,
                                                     int64_t* rows) {
  std::vector<float> c = a.floats("coefficients");
  const auto n = static_cast<int64_t>(c.size());
  if (n == 0) return a.error("coefficients is empty");
  if (*rows == 0) {
    if (features == 0 || n % features != 0)
      return a.error(str_cat("coefficients has ", n, " values, not a multiple of the input's ",
                             features, " features"));
    *rows = n / features;
  } else if (n != *rows * features) {
    return a.error(str_cat("coefficients has ", n, " values, expected ", *rows, " x ", features,
                           " features = ", *rows * features));
  }
  return c;
}

// X [batch, features] times the coefficient rows, plus the intercepts when there are any.
ValueId add_scores(trees::Emitter& e, ValueId x, const std::vector<float>& coefficients,
                   const std::vector<float>& intercepts, int64_t rows, int64_t features) {
  const auto gemm = make_attrs<GemmAttrs>([](auto& g) { g.transB = 1; });
  const ValueId w = e.f32("coefficients", {rows, features}, coefficients);
  if (intercepts.empty()) return e.op("Gemm", {x, w}, gemm);
  return e.op("Gemm", {x, w, e.f32("intercepts", {rows}, intercepts)}, gemm);
}

absl::StatusOr<std::string> read_post_transform(const NodeAttrs& a) {
  std::string post = a.string("post_transform", "NONE");
  if (!trees::is_ml_post_transform(post))
    return a.unsupported(str_cat("post_transform ", post, " is not supported"));
  return post;
}

}  // namespace

absl::Status convert_linear_classifier(const NodeAttrs& a, GraphBuilder& b, trees::Emitter& e,
                                       ValueId x, std::vector<ValueId>& outputs) {
  int64_t batch = 0, features = 0;
  auto in = features_as_f32(e, a, b, x, &batch, &features);
  if (!in.ok()) return in.status();
  const ClassLabels labels = read_class_labels(a, "classlabels_ints");
  if (labels.size() == 0) return a.error("needs classlabels_ints or classlabels_strings");
  int64_t rows = 0;
  auto coefficients = read_coefficients(a, features, &rows);
  if (!coefficients.ok()) return coefficients.status();
  const std::vector<float> intercepts = a.floats("intercepts");
  if (!intercepts.empty() && static_cast<int64_t>(intercepts.size()) != rows)
    return a.error(str_cat("intercepts has ", intercepts.size(), " values for ", rows,
                           " coefficient rows"));
  auto post = read_post_transform(a);
  if (!post.ok()) return post.status();
  if (rows > 1 && static_cast<int64_t>(labels.size()) != rows)
    return a.error(str_cat(rows, " coefficient rows (one score per class) for ", labels.size(),
                           " class labels"));
  const ValueId scores = add_scores(e, *in, *coefficients, intercepts, rows, features);
  if (rows > 1) {
    // The first of the highest scores names the class; the transform changes only the scores.
    const ValueId top = e.op("ArgMax", {scores}, make_attrs<ArgMaxAttrs>([](auto& m) {
                               m.axis = 1;
                               m.keepdims = 0;
                             }));
    outputs = {label_of(e, labels, top), trees::add_ml_post_transform(e, *post, scores)};
    return absl::OkStatus();
  }
  // One score column s: the second label where s is positive, and the scores [1 - t, t] with
  // t = logistic(s) under LOGISTIC, else s (ONNX Runtime 1.31 applies no other transform there,
  // and needs exactly two labels).
  if (labels.size() != 2)
    return a.error(str_cat("one coefficient row (a binary classifier) needs exactly 2 class "
                           "labels, it has ", labels.size()));
  const ValueId positive = e.op("Greater", {scores, e.scalar_f32(0.f)});
  const ValueId flat =
      e.op("Reshape", {positive}, make_attrs<ReshapeAttrs>([&](auto& r) { r.shape = {batch}; }));
  const ValueId position =
      e.op("Cast", {flat}, make_attrs<CastAttrs>([](auto& c) { c.to = "i64"; }));
  outputs.push_back(label_of(e, labels, position));
  if (*post == "PROBIT")
    return a.unsupported(
        "post_transform PROBIT with one coefficient row and two class labels is not supported: "
        "ONNX Runtime writes only the first half of its [N, 2] scores");
  const ValueId t = *post == "LOGISTIC" ? e.op("Sigmoid", {scores}) : scores;
  const ValueId other = e.op("Sub", {e.scalar_f32(1.f), t});
  outputs.push_back(
      e.op("Concat", {other, t}, make_attrs<ConcatAttrs>([](auto& c) { c.axis = 1; })));
  return absl::OkStatus();
}

absl::Status convert_linear_regressor(const NodeAttrs& a, GraphBuilder& b, trees::Emitter& e,
                                      ValueId x, std::vector<ValueId>& outputs) {
  int64_t batch = 0, features = 0;
  auto in = features_as_f32(e, a, b, x, &batch, &features);
  if (!in.ok()) return in.status();
  int64_t targets = a.integer("targets", 1);
  if (targets < 1 || targets > (int64_t{1} << 20)) return a.error(str_cat("targets is ", targets));
  auto coefficients = read_coefficients(a, features, &targets);
  if (!coefficients.ok()) return coefficients.status();
  const std::vector<float> intercepts = a.floats("intercepts");
  if (!intercepts.empty() && static_cast<int64_t>(intercepts.size()) != targets)
    return a.error(str_cat("intercepts has ", intercepts.size(), " values for ", targets,
                           " targets"));
  auto post = read_post_transform(a);
  if (!post.ok()) return post.status();
  ValueId y = add_scores(e, *in, *coefficients, intercepts, targets, features);
  // ONNX Runtime applies only PROBIT to a single target.
  if (targets > 1 || *post == "PROBIT") y = trees::add_ml_post_transform(e, *post, y);
  outputs = {y};
  return absl::OkStatus();
}

}  // namespace collage::ml
