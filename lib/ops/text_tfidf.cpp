// TfIdfVectorizer on integer tokens (ONNX 9).
#include <algorithm>

#include "collage/ops/text.h"
#include "dyn_tfidf.h"
#include "ops/elementwise_common.h"
#include "ops/op_sets.h"

namespace collage::ops {
namespace {

constexpr TypeSet kTokenTypes = type_bit(DType::i32) | type_bit(DType::i64);

// The attributes as the shared algorithm's (runtime/algorithms/dyn_tfidf.h) and its pool.
rt_dynamic::TfIdfSpec spec_of(const TfIdfVectorizerAttrs& a) {
  rt_dynamic::TfIdfSpec s;
  s.mode = a.mode == "IDF"     ? rt_dynamic::TfIdfMode::idf
           : a.mode == "TFIDF" ? rt_dynamic::TfIdfMode::tfidf
                               : rt_dynamic::TfIdfMode::tf;
  s.min_gram_length = a.min_gram_length;
  s.max_gram_length = a.max_gram_length;
  s.max_skip_count = a.max_skip_count;
  s.ngram_counts = a.ngram_counts;
  s.ngram_indexes = a.ngram_indexes;
  s.pool_int64s = a.pool_int64s;
  s.weights = a.weights;
  return s;
}

absl::StatusOr<rt_dynamic::TfIdfPool> build_pool(const rt_dynamic::TfIdfSpec& s) {
  rt_dynamic::TfIdfPool p;
  if (std::string e = rt_dynamic::build_tfidf_pool(s, p); !e.empty())
    return absl::InvalidArgumentError(e);
  return p;
}

absl::Status infer_tfidf(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  const auto& a = ctx.attrs<TfIdfVectorizerAttrs>();
  if (!a.pool_strings.empty()) return ctx.error("string pools are not supported");
  if (absl::Status s = check_dtype(ctx, 0, kTokenTypes); !s.ok()) return s;
  if (a.mode != "TF" && a.mode != "IDF" && a.mode != "TFIDF")
    return ctx.error(str_cat("mode '", a.mode, "' is not TF, IDF or TFIDF"));
  if (a.min_gram_length < 1 || a.max_gram_length < a.min_gram_length || a.max_skip_count < 0)
    return ctx.error("the gram lengths and max_skip_count are inconsistent");
  auto pool = build_pool(spec_of(a));
  if (!pool.ok()) return ctx.error(str_cat(pool.status().message()));
  if (a.ngram_indexes.empty() ||
      *std::min_element(a.ngram_indexes.begin(), a.ngram_indexes.end()) < 0)
    return ctx.error("ngram_indexes must be given and non-negative");
  const int64_t out = *std::max_element(a.ngram_indexes.begin(), a.ngram_indexes.end()) + 1;
  if (!a.weights.empty() && static_cast<int64_t>(a.weights.size()) < out)
    return ctx.error("weights has fewer entries than the output");
  const Shape& x = ctx.input(0).shape;
  if (x.size() > 2 || (x.size() == 2 && x[0] < 1)) return ctx.error("X must be [C] or [B, C]");
  ctx.set_output(0, {DType::f32, x.size() == 2 ? Shape{x[0], out} : Shape{out}});
  return absl::OkStatus();
}

absl::Status tfidf_kernel(const KernelArgs& args) {
  const rt_dynamic::TfIdfSpec spec = spec_of(args.get<TfIdfVectorizerAttrs>());
  auto pool = build_pool(spec);
  if (!pool.ok()) return pool.status();
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  const int64_t rows = x.rank() == 2 ? x.shape()[0] : 1;
  const int64_t cols = x.rank() == 0 ? 1 : x.shape().back();
  rt_dynamic::tfidf_count(spec, *pool, rows, cols, y.shape().back(),
                          [&](int64_t i) { return x.get_as_int64(i); }, y.data<float>());
  return absl::OkStatus();
}

}  // namespace

void register_text_ops(OpRegistry& r) {
  add_builtin_op(r, make_op<TfIdfVectorizerAttrs>("TfIdfVectorizer", FusionKind::opaque, 1, 1,
                                                  infer_tfidf, tfidf_kernel));
}

}  // namespace collage::ops
