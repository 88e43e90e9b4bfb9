// TfIdfVectorizer on integer tokens (ONNX 9).
#include <algorithm>
#include <map>
#include <set>

#include "collage/ops/text.h"
#include "ops/elementwise_common.h"
#include "ops/op_sets.h"

namespace collage::ops {
namespace {

constexpr TypeSet kTokenTypes = type_bit(DType::i32) | type_bit(DType::i64);

// The pool's n-grams (of the sizes counted) by their id (their place in the pool, from 0), and
// every prefix of them, which is how far a walk along the input may go.
struct GramPool {
  std::map<std::vector<int64_t>, int64_t> ids;
  std::set<std::vector<int64_t>> prefixes;
};

absl::StatusOr<GramPool> build_pool(const TfIdfVectorizerAttrs& a) {
  GramPool p;
  const auto total = static_cast<int64_t>(a.pool_int64s.size());
  int64_t id = 0;
  for (size_t i = 0; i < a.ngram_counts.size(); ++i) {
    const int64_t n = static_cast<int64_t>(i) + 1;
    const int64_t start = a.ngram_counts[i];
    const int64_t end = i + 1 < a.ngram_counts.size() ? a.ngram_counts[i + 1] : total;
    if (start < 0 || end > total || end < start || (end - start) % n)
      return absl::InvalidArgumentError("ngram_counts does not split pool_int64s into n-grams");
    for (int64_t k = start; k < end; k += n, ++id) {
      if (n < a.min_gram_length || n > a.max_gram_length) continue;
      std::vector<int64_t> gram(a.pool_int64s.begin() + k, a.pool_int64s.begin() + k + n);
      p.ids[gram] = id;
      for (int64_t len = 1; len <= n; ++len) p.prefixes.insert({gram.begin(), gram.begin() + len});
    }
  }
  if (id != static_cast<int64_t>(a.ngram_indexes.size()))
    return absl::InvalidArgumentError(str_cat("ngram_indexes has ", a.ngram_indexes.size(),
                                              " entries for ", id, " n-grams"));
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
  auto pool = build_pool(a);
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
  const auto& a = args.get<TfIdfVectorizerAttrs>();
  auto pool = build_pool(a);
  if (!pool.ok()) return pool.status();
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  const int64_t rows = x.rank() == 2 ? x.shape()[0] : 1;
  const int64_t cols = x.rank() == 0 ? 1 : x.shape().back();
  const int64_t out = y.shape().back();
  std::vector<int64_t> counts(static_cast<size_t>(rows * out), 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t min_n = a.min_gram_length;
    for (int64_t skip = 1; skip <= a.max_skip_count + 1; ++skip) {
      for (int64_t start = 0; start < cols; ++start) {
        if (start + skip * (min_n - 1) >= cols) break;
        std::vector<int64_t> gram;
        for (int64_t at = start; at < cols && static_cast<int64_t>(gram.size()) < a.max_gram_length;
             at += skip) {
          gram.push_back(x.get_as_int64(r * cols + at));
          if (!pool->prefixes.count(gram)) break;
          auto hit = pool->ids.find(gram);
          if (hit != pool->ids.end() && static_cast<int64_t>(gram.size()) >= min_n)
            ++counts[r * out + a.ngram_indexes[hit->second]];
        }
      }
      // Unigrams are counted once, not once per skip distance.
      if (min_n == 1 && ++min_n > a.max_gram_length) break;
    }
  }
  float* py = y.data<float>();
  for (size_t i = 0; i < counts.size(); ++i) {
    const double w = a.weights.empty() ? 1.0 : a.weights[i % out];
    const double c = static_cast<double>(counts[i]);
    py[i] = static_cast<float>(a.mode == "TF" ? c : a.mode == "IDF" ? (c > 0 ? w : 0.0) : c * w);
  }
  return absl::OkStatus();
}

}  // namespace

void register_text_ops(OpRegistry& r) {
  add_builtin_op(r, make_op<TfIdfVectorizerAttrs>("TfIdfVectorizer", FusionKind::opaque, 1, 1,
                                                  infer_tfidf, tfidf_kernel));
}

}  // namespace collage::ops
