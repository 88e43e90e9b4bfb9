// ai.onnx.ml SVMClassifier and SVMRegressor as graph nodes: the kernel between the input and the
// support vectors on a GEMM (RBF through |x|^2 + |s|^2 - 2 x.s), the one-against-one decision
// values as a second GEMM, the votes as a third, and Platt scaling with the pairwise coupling of
// libsvm (SVMPairwiseCoupling) when prob_a/prob_b are given, all as ONNX Runtime computes them.
#include "collage/ops.h"
#include "collage/ops/ml.h"
#include "frontends/trees/onnx_ml_models.h"
#include "frontends/trees/tree_post_transform.h"

namespace collage::ml {
namespace {

std::shared_ptr<const OpAttrs> gemm_attrs(float alpha, int64_t trans_b) {
  return make_attrs<GemmAttrs>([=](auto& g) {
    g.alpha = alpha;
    g.transB = trans_b;
  });
}

struct SvmKernel {
  std::string type = "LINEAR";
  float gamma = 0.f, coef0 = 0.f, degree = 0.f;
};

absl::StatusOr<SvmKernel> read_kernel(const NodeAttrs& a) {
  SvmKernel k;
  k.type = a.string("kernel_type", "LINEAR");
  if (k.type != "LINEAR" && k.type != "POLY" && k.type != "RBF" && k.type != "SIGMOID")
    return a.error(str_cat("kernel_type is '", k.type, "'; it must be LINEAR, POLY, RBF or SIGMOID"));
  const std::vector<float> p = a.floats("kernel_params");
  if (!p.empty() && p.size() != 3)
    return a.error(str_cat("kernel_params has ", p.size(), " values, expected 3 (gamma, coef0, "
                           "degree)"));
  if (p.size() == 3) {
    k.gamma = p[0];
    k.coef0 = p[1];
    k.degree = p[2];
  }
  return k;
}

// The kernel of each row of x (f32 [batch, features]) with each support vector: f32 [batch, V].
ValueId add_kernel(trees::Emitter& e, const SvmKernel& k, ValueId x, const std::vector<float>& sv,
                   int64_t count, int64_t features) {
  const ValueId s = e.f32("support_vectors", {count, features}, sv);
  if (k.type == "RBF") {
    // exp(-gamma |x - s|^2), the squared distance as |x|^2 + |s|^2 - 2 x.s (not below 0).
    std::vector<float> norms(static_cast<size_t>(count), 0.f);
    for (int64_t v = 0; v < count; ++v)
      for (int64_t f = 0; f < features; ++f) norms[v] += sv[v * features + f] * sv[v * features + f];
    const ValueId xx = e.op("ReduceSum", {e.op("Mul", {x, x})}, make_attrs<ReduceAttrs>([](auto& r) {
                              r.axes = {1};
                              r.keepdims = 1;
                            }));
    const ValueId cross = e.op("Gemm", {x, s, e.f32("sv_norms", {count}, norms)},
                               make_attrs<GemmAttrs>([](auto& g) {
                                 g.alpha = -2.f;
                                 g.transB = 1;
                               }));
    const ValueId d = e.op("Max", {e.op("Add", {cross, xx}), e.scalar_f32(0.f)});
    return e.op("Exp", {e.op("Mul", {d, e.scalar_f32(-k.gamma)})});
  }
  if (k.type == "LINEAR") return e.op("Gemm", {x, s}, gemm_attrs(1.f, 1));
  // gamma x.s + coef0, then the power or tanh.
  const ValueId dot = e.op("Gemm", {x, s, e.f32("coef0", {1}, {k.coef0})}, gemm_attrs(k.gamma, 1));
  if (k.type == "SIGMOID") return e.op("Tanh", {dot});
  return e.op("Pow", {dot, e.scalar_f32(k.degree)});
}

// What a classifier's attributes say about its support vectors.
struct SvcModel {
  std::vector<int64_t> per_class, start;
  int64_t vectors = 0, features = 0, classes = 0;
  std::vector<float> support_vectors, coefficients, rho, prob_a, prob_b;
};

}  // namespace

absl::Status convert_svm_regressor(const NodeAttrs& a, GraphBuilder& b, trees::Emitter& e,
                                   ValueId x, std::vector<ValueId>& outputs) {
  int64_t batch = 0, features = 0;
  auto in = features_as_f32(e, a, b, x, &batch, &features);
  if (!in.ok()) return in.status();
  auto kernel = read_kernel(a);
  if (!kernel.ok()) return kernel.status();
  const int64_t count = a.integer("n_supports", 0);
  const std::vector<float> sv = a.floats("support_vectors"), coef = a.floats("coefficients"),
                           rho = a.floats("rho");
  if (rho.empty()) return a.error("rho is empty");
  const ValueId bias = e.f32("rho", {1}, {rho[0]});
  ValueId y = kNoValue;
  if (count > 0) {
    if (static_cast<int64_t>(sv.size()) != count * features ||
        static_cast<int64_t>(coef.size()) != count)
      return a.error(str_cat("n_supports ", count, " with ", features, " features needs ",
                             count * features, " support_vectors values and ", count,
                             " coefficients; it has ", sv.size(), " and ", coef.size()));
    const ValueId k = add_kernel(e, *kernel, *in, sv, count, features);
    y = e.op("Gemm", {k, e.f32("coefficients", {1, count}, coef), bias}, gemm_attrs(1.f, 1));
  } else {
    // liblinear: the coefficients are one weight per feature, the kernel linear.
    if (static_cast<int64_t>(coef.size()) != features)
      return a.error(str_cat("coefficients has ", coef.size(), " values for ", features,
                             " features (n_supports is 0)"));
    y = e.op("Gemm", {*in, e.f32("coefficients", {1, features}, coef), bias}, gemm_attrs(1.f, 1));
  }
  if (a.integer("one_class", 0) != 0)
    y = e.op("Where", {e.op("Greater", {y, e.scalar_f32(0.f)}), e.scalar_f32(1.f),
                       e.scalar_f32(-1.f)});
  outputs = {y};
  return absl::OkStatus();
}

namespace {

absl::StatusOr<SvcModel> read_svc(const NodeAttrs& a, int64_t features, size_t classes) {
  SvcModel m;
  m.per_class = a.ints("vectors_per_class");
  m.classes = static_cast<int64_t>(classes);
  m.features = features;
  m.support_vectors = a.floats("support_vectors");
  m.coefficients = a.floats("coefficients");
  m.rho = a.floats("rho");
  m.prob_a = a.floats("prob_a");
  m.prob_b = a.floats("prob_b");
  if (m.prob_a.size() != m.prob_b.size())
    return a.error(str_cat("prob_a has ", m.prob_a.size(), " values, prob_b ", m.prob_b.size()));
  for (int64_t n : m.per_class) {
    if (n < 0) return a.error("vectors_per_class has a negative count");
    m.start.push_back(m.vectors);
    m.vectors += n;
  }
  if (m.vectors > 0 && static_cast<int64_t>(m.per_class.size()) != m.classes)
    return a.error(str_cat("vectors_per_class has ", m.per_class.size(), " entries for ",
                           m.classes, " class labels"));
  const int64_t pairs = m.classes * (m.classes - 1) / 2;
  const int64_t want_coef = m.vectors > 0 ? (m.classes - 1) * m.vectors : m.classes * features;
  if (static_cast<int64_t>(m.coefficients.size()) != want_coef)
    return a.error(str_cat("coefficients has ", m.coefficients.size(), " values, expected ",
                           want_coef));
  if (m.vectors > 0 && static_cast<int64_t>(m.support_vectors.size()) != m.vectors * features)
    return a.error(str_cat("support_vectors has ", m.support_vectors.size(), " values, expected ",
                           m.vectors, " vectors x ", features, " features"));
  const int64_t want_rho = m.vectors > 0 ? pairs : 1;
  if (static_cast<int64_t>(m.rho.size()) < want_rho)
    return a.error(str_cat("rho has ", m.rho.size(), " values, expected ", want_rho));
  m.rho.resize(static_cast<size_t>(want_rho));
  if (m.vectors > 0 && !m.prob_a.empty() && static_cast<int64_t>(m.prob_a.size()) < pairs)
    return a.error(str_cat("prob_a has ", m.prob_a.size(), " values for ", pairs,
                           " pairs of classes"));
  return m;
}

// liblinear mode (no support vectors): scores X.W^T + rho[0], one per class.
absl::Status convert_svm_linear(trees::Emitter& e, ValueId x,
                                const SvcModel& m, const ClassLabels& labels,
                                const std::string& post, std::vector<ValueId>& outputs) {
  const ValueId scores = e.op("Gemm", {x, e.f32("coefficients", {m.classes, m.features},
                                                  m.coefficients),
                                       e.f32("rho", {1}, {m.rho[0]})},
                              gemm_attrs(1.f, 1));
  ValueId position = e.op("ArgMax", {scores}, make_attrs<ArgMaxAttrs>([](auto& r) {
                            r.axis = 1;
                            r.keepdims = 0;
                          }));
  if (m.classes == 2 && m.prob_a.empty()) {
    // ONNX Runtime's binary rule: the second label when the top score is >= 0.5 (weights all
    // non-negative) or > 0 (otherwise), else the top class.
    bool positive = true;
    for (float c : m.coefficients) positive = positive && c >= 0.f;
    const ValueId top = e.op("ReduceMax", {scores}, make_attrs<ReduceAttrs>([](auto& r) {
                               r.axes = {1};
                               r.keepdims = 0;
                             }));
    const ValueId second = e.op(positive ? "GreaterOrEqual" : "Greater",
                                {top, e.scalar_f32(positive ? 0.5f : 0.f)});
    position = e.op("Where", {second, e.scalar_i64(1), position});
  }
  outputs = {label_of(e, labels, position), trees::add_ml_post_transform(e, post, scores)};
  return absl::OkStatus();
}

}  // namespace

absl::Status convert_svm_classifier(const NodeAttrs& a, GraphBuilder& b, trees::Emitter& e,
                                    ValueId x, std::vector<ValueId>& outputs) {
  int64_t batch = 0, features = 0;
  auto in = features_as_f32(e, a, b, x, &batch, &features);
  if (!in.ok()) return in.status();
  auto kernel = read_kernel(a);
  if (!kernel.ok()) return kernel.status();
  const ClassLabels labels = read_class_labels(a, "classlabels_ints");
  if (labels.size() < 2) return a.error("needs at least 2 classlabels_ints or classlabels_strings");
  const std::string post = a.string("post_transform", "NONE");
  if (!trees::is_ml_post_transform(post))
    return a.unsupported(str_cat("post_transform ", post, " is not supported"));
  auto m = read_svc(a, features, labels.size());
  if (!m.ok()) return m.status();
  if (m->vectors == 0) return convert_svm_linear(e, *in, *m, labels, post, outputs);

  // Decision value of pair p = (i, j), i < j in order: the coefficients of row j - 1 on class
  // i's vectors and of row i on class j's, plus rho[p]; as one [V, pairs] matrix.
  const int64_t c = m->classes, v = m->vectors, pairs = c * (c - 1) / 2;
  std::vector<float> w(static_cast<size_t>(v * pairs), 0.f);
  std::vector<float> vote_w(static_cast<size_t>(pairs * c), 0.f), vote_base(c, 0.f);
  for (int64_t i = 0, p = 0; i < c; ++i) {
    for (int64_t j = i + 1; j < c; ++j, ++p) {
      for (int64_t k = 0; k < m->per_class[i]; ++k) {
        const int64_t sv = m->start[i] + k;
        w[sv * pairs + p] = m->coefficients[(j - 1) * v + sv];
      }
      for (int64_t k = 0; k < m->per_class[j]; ++k) {
        const int64_t sv = m->start[j] + k;
        w[sv * pairs + p] = m->coefficients[i * v + sv];
      }
      // A positive decision is a vote for i, any other for j.
      vote_w[p * c + i] += 1.f;
      vote_w[p * c + j] -= 1.f;
      vote_base[j] += 1.f;
    }
  }
  const ValueId k = add_kernel(e, *kernel, *in, m->support_vectors, v, features);
  const ValueId d = e.op("Gemm", {k, e.f32("pair_weights", {v, pairs}, w),
                                  e.f32("rho", {pairs}, m->rho)},
                         gemm_attrs(1.f, 0));
  const ValueId positive = e.op("Cast", {e.op("Greater", {d, e.scalar_f32(0.f)})},
                                make_attrs<CastAttrs>([](auto& t) { t.to = "f32"; }));
  const ValueId votes = e.op("Gemm", {positive, e.f32("vote_weights", {pairs, c}, vote_w),
                                      e.f32("vote_base", {c}, vote_base)},
                             gemm_attrs(1.f, 0));
  const ValueId top = e.op("ArgMax", {votes}, make_attrs<ArgMaxAttrs>([](auto& r) {
                             r.axis = 1;
                             r.keepdims = 0;
                           }));
  outputs.push_back(label_of(e, labels, top));
  if (!m->prob_a.empty()) {
    // Platt scaling of each decision value, 1 - logistic(d A + B) = logistic(-(d A + B)),
    // clipped to [1e-7, 1 - 1e-7], then libsvm's coupling into one probability per class.
    m->prob_a.resize(static_cast<size_t>(pairs));
    m->prob_b.resize(static_cast<size_t>(pairs));
    const ValueId z = e.op("Add", {e.op("Mul", {d, e.f32("prob_a", {pairs}, m->prob_a)}),
                                   e.f32("prob_b", {pairs}, m->prob_b)});
    const ValueId r = e.op("Clip", {e.op("Sigmoid", {e.op("Neg", {z})})},
                           make_attrs<ClipAttrs>([](auto& cl) {
                             cl.min = 1e-7f;
                             cl.max = 1.f - 1e-7f;
                           }));
    const ValueId p = e.op("SVMPairwiseCoupling", {r},
                           make_attrs<PairwiseCouplingAttrs>([&](auto& pc) { pc.classes = c; }));
    outputs.push_back(trees::add_ml_post_transform(e, post, p));
    return absl::OkStatus();
  }
  if (c > 2) {
    outputs.push_back(trees::add_ml_post_transform(e, post, d));
    return absl::OkStatus();
  }
  // Two classes, one decision value d: [-d, d] without a transform, else [1 - t, t] with
  // t = logistic(d) under LOGISTIC and d otherwise (ONNX Runtime 1.31's rule; its PROBIT
  // writes only the first half of the scores).
  if (post == "PROBIT")
    return a.unsupported(
        "post_transform PROBIT of a two-class SVM without prob_a/prob_b is not supported: "
        "ONNX Runtime writes only the first half of its [N, 2] scores");
  const ValueId t = post == "LOGISTIC" ? e.op("Sigmoid", {d}) : d;
  const ValueId other = post == "NONE" ? e.op("Neg", {d}) : e.op("Sub", {e.scalar_f32(1.f), t});
  outputs.push_back(
      e.op("Concat", {other, t}, make_attrs<ConcatAttrs>([](auto& c) { c.axis = 1; })));
  return absl::OkStatus();
}

}  // namespace collage::ml
