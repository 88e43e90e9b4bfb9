// MaxUnpool and TfIdfVectorizer in the dynamic module, which no generated code runs: MaxUnpool
// puts MaxPool's values back where its indices say (zeros elsewhere), in the shape its attributes
// give or the output_shape operand read at run time; TfIdfVectorizer counts the pool's n-grams by
// the algorithm the reference kernel uses (runtime/algorithms/dyn_tfidf.h).
#include <algorithm>
#include <cstring>

#include "dyn_tfidf.h"
#include "dyn_value.h"

namespace collage::rt_dynamic {
namespace {

// Lists: kernel_shape, strides (empty: ones), pads (empty: zeros). Operands: X, I (i64 of X's
// shape), optionally output_shape.
void max_unpool(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
  const Value &x = in[0], &idx = in[1];
  const auto r = static_cast<int64_t>(x.shape.size()) - 2;
  const std::vector<int64_t>& kernel = p.list(0);
  const std::vector<int64_t>& strides = p.list(1);
  const std::vector<int64_t>& pads = p.list(2);
  if (r < 1 || static_cast<int64_t>(kernel.size()) != r ||
      (!strides.empty() && static_cast<int64_t>(strides.size()) != r) ||
      (!pads.empty() && static_cast<int64_t>(pads.size()) != 2 * r))
    throw KernelError("X " + type_text(x.dtype, x.shape) + " does not fit kernel_shape, strides and pads");
  if (idx.dtype != COLLAGE_DTYPE_I64 || idx.shape != x.shape)
    throw KernelError("I is " + type_text(idx.dtype, idx.shape) + ", expected i64 of X's shape " +
                      type_text(x.dtype, x.shape));
  std::vector<int64_t> block = x.shape;
  for (int64_t i = 0; i < r; ++i) {
    block[i + 2] = (x.shape[i + 2] - 1) * (strides.empty() ? 1 : strides[i]) + kernel[i] -
                   (pads.empty() ? 0 : pads[i] + pads[i + r]);
    if (block[i + 2] < 0) throw KernelError("the pads make spatial axis " + std::to_string(i) + " negative");
  }
  std::vector<int64_t> shape = block;
  if (in.size() > 2 && in[2].data) {
    const Value& os = in[2];
    if (os.numel() != r + 2)
      throw KernelError("output_shape " + type_text(os.dtype, os.shape) + " has not " +
                        std::to_string(r + 2) + " entries");
    for (int64_t i = 0; i < r + 2; ++i) {
      shape[i] = int_at(os, i);
      if (shape[i] < block[i])
        throw KernelError("output_shape entry " + std::to_string(i) + " (" +
                          std::to_string(shape[i]) + ") is smaller than the unpooled " +
                          std::to_string(block[i]));
    }
  }
  const size_t es = element_size(x.dtype);
  uint8_t* y = out.make(0, shape);
  std::memset(y, 0, static_cast<size_t>(numel(shape)) * es);
  const std::vector<int64_t> bs = strides_of(block), os = strides_of(shape);
  const int64_t block_size = numel(block);
  const int64_t* at = idx.as<int64_t>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) {
    if (at[i] < 0 || at[i] >= block_size)
      throw KernelError("index " + std::to_string(at[i]) + " (element " + std::to_string(i) +
                        " of I) is outside the unpooled " + std::to_string(block_size) +
                        " elements");
    int64_t dst = 0;
    for (int64_t d = 0; d < r + 2; ++d) dst += at[i] / bs[d] % block[d] * os[d];
    std::memcpy(y + dst * es, x.data + i * es, es);
  }
}

// Lists: [mode], [min_gram_length, max_gram_length, max_skip_count], ngram_counts,
// ngram_indexes, pool_int64s, weights (f32 bits). Operand: the tokens, i32 or i64, [C] or [B, C].
void tfidf(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
  TfIdfSpec spec;
  const int64_t mode = p.value(0, 0);
  const std::vector<int64_t>& lengths = p.list(1);
  if (mode < 0 || mode > static_cast<int64_t>(TfIdfMode::tfidf) || lengths.size() != 3)
    throw KernelError("bad parameters");
  spec.mode = static_cast<TfIdfMode>(mode);
  spec.min_gram_length = lengths[0];
  spec.max_gram_length = lengths[1];
  spec.max_skip_count = lengths[2];
  spec.ngram_counts = p.list(2);
  spec.ngram_indexes = p.list(3);
  spec.pool_int64s = p.list(4);
  for (int64_t bits : p.list(5)) {
    const auto u = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &u, sizeof f);
    spec.weights.push_back(f);
  }
  TfIdfPool pool;
  if (std::string e = build_tfidf_pool(spec, pool); !e.empty()) throw KernelError(e);
  if (spec.ngram_indexes.empty() ||
      *std::min_element(spec.ngram_indexes.begin(), spec.ngram_indexes.end()) < 0)
    throw KernelError("ngram_indexes must be given and non-negative");
  const int64_t width =
      *std::max_element(spec.ngram_indexes.begin(), spec.ngram_indexes.end()) + 1;
  if (!spec.weights.empty() && static_cast<int64_t>(spec.weights.size()) < width)
    throw KernelError("weights has fewer entries than the output");
  const Value& x = in[0];
  if (x.shape.size() > 2) throw KernelError("X is " + type_text(x.dtype, x.shape) + ", expected [C] or [B, C]");
  const int64_t rows = x.shape.size() == 2 ? x.shape[0] : 1;
  const int64_t cols = x.shape.empty() ? 1 : x.shape.back();
  const std::vector<int64_t> shape =
      x.shape.size() == 2 ? std::vector<int64_t>{rows, width} : std::vector<int64_t>{width};
  float* y = out.make_as<float>(0, shape);
  tfidf_count(spec, pool, rows, cols, width, [&](int64_t i) { return int_at(x, i); }, y);
}

}  // namespace

bool run_unpool_tfidf_op(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
  if (p.op == DynOp::max_unpool) {
    max_unpool(p, in, out);
    return true;
  }
  if (p.op == DynOp::tfidf_vectorizer) {
    tfidf(p, in, out);
    return true;
  }
  return false;
}

}  // namespace collage::rt_dynamic
