// Indexing operators: Trilu, CumSum, CumProd, GatherND, ScatterElements, ScatterND,
// TensorScatter, EyeLike.
#include <cstring>

#include "collage/ops/indexing.h"
#include "ops/elementwise_common.h"
#include "ops/op_sets.h"

namespace collage::ops {
namespace {

constexpr TypeSet kIndexTypes = type_bit(DType::i32) | type_bit(DType::i64);

// ---- Trilu ----

absl::Status infer_trilu(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  if (ctx.input(0).shape.size() < 2)
    return ctx.error(str_cat("input has shape ", shape_to_string(ctx.input(0).shape),
                             ", expected rank >= 2"));
  if (ctx.has_input(1)) {
    if (ctx.input(1).dtype != DType::i64 || ctx.input(1).numel() != 1)
      return ctx.error(str_cat("k must be one i64, got ", type_to_string(ctx.input(1))));
  }
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

absl::Status trilu_kernel(const KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  const int64_t k = args.inputs.size() > 1 && !args.inputs[1].empty() ? args.inputs[1].get_as_int64(0) : 0;
  const bool upper = args.get<TriluAttrs>().upper != 0;
  const int64_t rows = x.shape()[x.rank() - 2], cols = x.shape()[x.rank() - 1];
  const size_t es = dtype_size(x.dtype());
  std::memset(y.raw(), 0, y.bytes());
  const int64_t mats = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
  for (int64_t m = 0; m < mats; ++m)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        if (upper ? j - i >= k : j - i <= k) {
          const int64_t at = (m * rows + i) * cols + j;
          copy_element(y.raw(), at, x.raw(), at, es);
        }
  return absl::OkStatus();
}

// ---- CumSum ----

absl::Status infer_cumsum(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 0, kNumericTypes); !s.ok()) return s;
  if (!in_set(kIndexTypes, ctx.input(1).dtype) || ctx.input(1).numel() != 1)
    return ctx.error(str_cat("axis must be one i32 or i64, got ", type_to_string(ctx.input(1))));
  if (ctx.input(0).shape.empty()) return ctx.error("input must have rank >= 1");
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

template <bool kProd>
absl::Status cumulative_kernel(const KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const auto& a = args.get<CumSumAttrs>();
  const int64_t given = args.inputs[1].get_as_int64(0);
  auto axis = normalize_axis(given, x.rank());
  if (!axis)
    return absl::InvalidArgumentError(str_cat("axis ", given, " is out of range for rank ", x.rank()));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < *axis; ++d) outer *= x.shape()[d];
  for (int64_t d = *axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];
  const int64_t len = x.shape()[*axis];
  return dispatch_codec<kNumericTypes>(x.dtype(), [&](auto codec) {
    using C = decltype(codec);
    using T = typename C::Compute;
    const auto* in = x.data<typename C::Storage>();
    auto* out = args.outputs[0].data<typename C::Storage>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const auto step = [](T acc, T v) { return kProd ? wrap_mul(acc, v) : wrap_add(acc, v); };
        T acc = T(kProd ? 1 : 0);
        for (int64_t s = 0; s < len; ++s) {
          const int64_t j = a.reverse ? len - 1 - s : s;
          const int64_t at = (o * len + j) * inner + i;
          const T v = C::load(in[at]);
          if (!a.exclusive) acc = step(acc, v);
          out[at] = C::store(acc);
          if (a.exclusive) acc = step(acc, v);
        }
      }
  });
}

// ---- GatherND ----

absl::Status infer_gather_nd(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  const Shape& data = ctx.input(0).shape;
  const Shape& idx = ctx.input(1).shape;
  if (ctx.input(1).dtype != DType::i64) return ctx.error("indices must be i64");
  const int64_t b = ctx.attrs<GatherNDAttrs>().batch_dims;
  const auto r = static_cast<int64_t>(data.size()), q = static_cast<int64_t>(idx.size());
  if (r < 1 || q < 1 || b < 0 || b >= std::min(r, q))
    return ctx.error(str_cat("batch_dims ", b, " must be less than the ranks of data ",
                             shape_to_string(data), " and indices ", shape_to_string(idx)));
  const int64_t last = idx.back();
  if (last < 1 || last > r - b)
    return ctx.error(str_cat("the last axis of indices ", shape_to_string(idx),
                             " must be 1 to ", r - b));
  for (int64_t d = 0; d < b; ++d)
    if (data[d] != idx[d]) return ctx.error("data and indices differ on a batch axis");
  Shape out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), data.begin() + b + last, data.end());
  ctx.set_output(0, {ctx.input(0).dtype, out});
  return absl::OkStatus();
}

// The data offset of the slice named by index tuple `t` (of `last` entries) in batch `batch`;
// an error for an index out of range.
absl::StatusOr<int64_t> slice_offset(const Shape& data, const std::vector<int64_t>& strides,
                                     int64_t b, int64_t batch_offset, const int64_t* t,
                                     int64_t last) {
  int64_t off = batch_offset;
  for (int64_t k = 0; k < last; ++k) {
    const int64_t dim = data[b + k];
    int64_t v = t[k];
    if (v < -dim || v >= dim)
      return absl::InvalidArgumentError(str_cat("index ", v, " is out of range for axis ", b + k,
                                                " of size ", dim));
    if (v < 0) v += dim;
    off += v * strides[b + k];
  }
  return off;
}

absl::Status gather_nd_kernel(const KernelArgs& args) {
  const Tensor& data = args.inputs[0];
  const Tensor& idx = args.inputs[1];
  Tensor& out = args.outputs[0];
  const int64_t b = args.get<GatherNDAttrs>().batch_dims;
  const int64_t last = idx.shape().back();
  const auto strides = shape_strides(data.shape());
  int64_t slice = 1;
  for (int64_t d = b + last; d < data.rank(); ++d) slice *= data.shape()[d];
  int64_t batches = 1;
  for (int64_t d = 0; d < b; ++d) batches *= data.shape()[d];
  const int64_t tuples = idx.numel() / last;
  const int64_t per_batch = batches ? tuples / batches : 0;
  const size_t es = dtype_size(data.dtype());
  const int64_t* t = idx.data<int64_t>();
  for (int64_t i = 0; i < tuples; ++i) {
    const int64_t batch = per_batch ? i / per_batch : 0;
    auto off = slice_offset(data.shape(), strides, b, b ? batch * strides[b - 1] : 0, t + i * last, last);
    if (!off.ok()) return off.status();
    std::memcpy(static_cast<char*>(out.raw()) + i * slice * es,
                static_cast<const char*>(data.raw()) + *off * es, slice * es);
  }
  return absl::OkStatus();
}

// ---- ScatterElements, ScatterND ----

absl::Status check_reduction(const InferContext& ctx) {
  const std::string& r = ctx.attrs<ScatterAttrs>().reduction;
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
    return ctx.error(str_cat("reduction '", r, "' is not none, add, mul, max or min"));
  return absl::OkStatus();
}

absl::Status infer_scatter_elements(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  if (absl::Status s = check_reduction(ctx); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 1, kIndexTypes); !s.ok()) return s;
  if (absl::Status s = check_same_dtype(ctx, 0, 2); !s.ok()) return s;
  const Shape& data = ctx.input(0).shape;
  if (ctx.input(1).shape != ctx.input(2).shape || ctx.input(1).shape.size() != data.size())
    return ctx.error("indices and updates must have one shape, of the rank of data");
  if (!normalize_axis(ctx.attrs<ScatterAttrs>().axis, static_cast<int64_t>(data.size())))
    return ctx.error("axis is out of range");
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

absl::Status infer_scatter_nd(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  if (absl::Status s = check_reduction(ctx); !s.ok()) return s;
  if (ctx.input(1).dtype != DType::i64) return ctx.error("indices must be i64");
  if (absl::Status s = check_same_dtype(ctx, 0, 2); !s.ok()) return s;
  const Shape& data = ctx.input(0).shape;
  const Shape& idx = ctx.input(1).shape;
  if (idx.empty() || idx.back() < 1 || idx.back() > static_cast<int64_t>(data.size()))
    return ctx.error("the last axis of indices must be 1 to the rank of data");
  Shape want(idx.begin(), idx.end() - 1);
  want.insert(want.end(), data.begin() + idx.back(), data.end());
  if (ctx.input(2).shape != want)
    return ctx.error(str_cat("updates has shape ", shape_to_string(ctx.input(2).shape),
                             ", expected ", shape_to_string(want)));
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

// Writes or combines update u into y[at].
template <typename C>
void combine(typename C::Storage* y, int64_t at, typename C::Compute u, const std::string& r) {
  using T = typename C::Compute;
  const T cur = C::load(y[at]);
  T v = u;
  if (r == "add") v = wrap_add(cur, u);
  else if (r == "mul") v = wrap_mul(cur, u);
  else if (r == "max") v = cur < u ? u : cur;
  else if (r == "min") v = u < cur ? u : cur;
  y[at] = C::store(v);
}

absl::Status scatter_elements_kernel(const KernelArgs& args) {
  const Tensor& data = args.inputs[0];
  const Tensor& idx = args.inputs[1];
  const Tensor& upd = args.inputs[2];
  Tensor& out = args.outputs[0];
  const auto& a = args.get<ScatterAttrs>();
  const int64_t axis = *normalize_axis(a.axis, data.rank());
  std::memcpy(out.raw(), data.raw(), data.bytes());
  const auto ds = shape_strides(data.shape());
  const Shape& is = idx.shape();
  return dispatch_codec<kAllTypes>(data.dtype(), [&](auto codec) -> absl::Status {
    using C = decltype(codec);
    auto* y = out.data<typename C::Storage>();
    const auto* u = upd.data<typename C::Storage>();
    std::vector<int64_t> pos(is.size(), 0);
    for (int64_t e = 0; e < idx.numel(); ++e) {
      int64_t v = idx.get_as_int64(e);
      const int64_t dim = data.shape()[axis];
      if (v < -dim || v >= dim)
        return absl::InvalidArgumentError(str_cat("index ", v, " is out of range for axis ",
                                                  axis, " of size ", dim));
      if (v < 0) v += dim;
      int64_t at = 0;
      for (size_t d = 0; d < is.size(); ++d)
        at += (static_cast<int64_t>(d) == axis ? v : pos[d]) * ds[d];
      if constexpr (std::is_same_v<C, BoolCodec>) {
        y[at] = u[e];
      } else {
        combine<C>(y, at, C::load(u[e]), a.reduction);
      }
      for (int64_t d = static_cast<int64_t>(is.size()) - 1; d >= 0; --d) {
        if (++pos[d] < is[d]) break;
        pos[d] = 0;
      }
    }
    return absl::OkStatus();
  });
}

absl::Status scatter_nd_kernel(const KernelArgs& args) {
  const Tensor& data = args.inputs[0];
  const Tensor& idx = args.inputs[1];
  const Tensor& upd = args.inputs[2];
  Tensor& out = args.outputs[0];
  const std::string& r = args.get<ScatterAttrs>().reduction;
  std::memcpy(out.raw(), data.raw(), data.bytes());
  const int64_t last = idx.shape().back();
  const auto strides = shape_strides(data.shape());
  int64_t slice = 1;
  for (int64_t d = last; d < data.rank(); ++d) slice *= data.shape()[d];
  const int64_t tuples = idx.numel() / last;
  const int64_t* t = idx.data<int64_t>();
  return dispatch_codec<kAllTypes>(data.dtype(), [&](auto codec) -> absl::Status {
    using C = decltype(codec);
    auto* y = out.data<typename C::Storage>();
    const auto* u = upd.data<typename C::Storage>();
    for (int64_t i = 0; i < tuples; ++i) {
      auto off = slice_offset(data.shape(), strides, 0, 0, t + i * last, last);
      if (!off.ok()) return off.status();
      for (int64_t j = 0; j < slice; ++j) {
        if constexpr (std::is_same_v<C, BoolCodec>) {
          y[*off + j] = u[i * slice + j];
        } else {
          combine<C>(y, *off + j, C::load(u[i * slice + j]), r);
        }
      }
    }
    return absl::OkStatus();
  });
}

// ---- TensorScatter ----

absl::Status infer_tensor_scatter(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  if (absl::Status s = check_same_dtype(ctx, 0, 1); !s.ok()) return s;
  const auto& a = ctx.attrs<TensorScatterAttrs>();
  if (a.mode != "linear" && a.mode != "circular")
    return ctx.error(str_cat("mode '", a.mode, "' is not linear or circular"));
  const Shape& cache = ctx.input(0).shape;
  const Shape& upd = ctx.input(1).shape;
  const auto rank = static_cast<int64_t>(cache.size());
  auto axis = normalize_axis(a.axis, rank);
  if (!axis || *axis == 0 || upd.size() != cache.size())
    return ctx.error("axis must name a non-batch axis of caches and updates of one rank");
  for (int64_t d = 0; d < rank; ++d)
    if (d == *axis ? upd[d] > cache[d] : upd[d] != cache[d])
      return ctx.error(str_cat("update ", shape_to_string(upd), " does not fit the cache ",
                               shape_to_string(cache)));
  if (ctx.has_input(2) && (ctx.input(2).shape != Shape{cache[0]} ||
                           !in_set(kIndexTypes, ctx.input(2).dtype)))
    return ctx.error("write_indices must be one integer per batch");
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

absl::Status tensor_scatter_kernel(const KernelArgs& args) {
  const Tensor& cache = args.inputs[0];
  const Tensor& upd = args.inputs[1];
  Tensor& out = args.outputs[0];
  const auto& a = args.get<TensorScatterAttrs>();
  const int64_t axis = *normalize_axis(a.axis, cache.rank());
  std::memcpy(out.raw(), cache.raw(), cache.bytes());
  const int64_t max_len = cache.shape()[axis], len = upd.shape()[axis];
  int64_t inner = 1, prefix = 1;
  for (int64_t d = axis + 1; d < cache.rank(); ++d) inner *= cache.shape()[d];
  for (int64_t d = 0; d < axis; ++d) prefix *= cache.shape()[d];
  const int64_t per_batch = cache.shape()[0] ? prefix / cache.shape()[0] : 0;
  const size_t es = dtype_size(cache.dtype());
  for (int64_t p = 0; p < prefix; ++p) {
    const int64_t batch = per_batch ? p / per_batch : 0;
    const bool given = args.inputs.size() > 2 && !args.inputs[2].empty();
    const int64_t start = given ? args.inputs[2].get_as_int64(batch) : 0;
    for (int64_t s = 0; s < len; ++s) {
      int64_t at = start + s;
      if (a.mode == "circular") at = ((at % max_len) + max_len) % max_len;
      if (at < 0 || at >= max_len)
        return absl::InvalidArgumentError(str_cat("write index ", at, " is outside the cache (",
                                                  max_len, " positions)"));
      std::memcpy(static_cast<char*>(out.raw()) + ((p * max_len + at) * inner) * es,
                  static_cast<const char*>(upd.raw()) + ((p * len + s) * inner) * es, inner * es);
    }
  }
  return absl::OkStatus();
}

// ---- EyeLike ----

absl::Status infer_eye_like(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  if (ctx.input(0).shape.size() != 2) return ctx.error("input must be 2-D");
  DType t = ctx.input(0).dtype;
  if (const std::string& name = ctx.attrs<EyeLikeAttrs>().dtype; !name.empty()) {
    auto parsed = parse_dtype(name);
    if (!parsed) return ctx.error(str_cat("unknown dtype '", name, "'"));
    t = *parsed;
  }
  ctx.set_output(0, {t, ctx.input(0).shape});
  return absl::OkStatus();
}

absl::Status eye_like_kernel(const KernelArgs& args) {
  Tensor& y = args.outputs[0];
  const int64_t k = args.get<EyeLikeAttrs>().k;
  const int64_t rows = y.shape()[0], cols = y.shape()[1];
  return dispatch_codec<kAllTypes>(y.dtype(), [&](auto codec) {
    using C = decltype(codec);
    using T = typename C::Compute;
    auto* p = y.data<typename C::Storage>();
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) p[i * cols + j] = C::store(T(j - i == k ? 1 : 0));
  });
}

}  // namespace

void register_indexing_ops(OpRegistry& r) {
  add_builtin_op(r, make_op<TriluAttrs>("Trilu", FusionKind::injective, 1, 2, infer_trilu,
                                        trilu_kernel));
  add_builtin_op(r, make_op<CumSumAttrs>("CumSum", FusionKind::opaque, 2, 2, infer_cumsum,
                                         cumulative_kernel<false>));
  add_builtin_op(r, make_op<CumSumAttrs>("CumProd", FusionKind::opaque, 2, 2, infer_cumsum,
                                         cumulative_kernel<true>));
  add_builtin_op(r, make_op<GatherNDAttrs>("GatherND", FusionKind::injective, 2, 2,
                                           infer_gather_nd, gather_nd_kernel));
  add_builtin_op(r, make_op<ScatterAttrs>("ScatterElements", FusionKind::opaque, 3, 3,
                                          infer_scatter_elements, scatter_elements_kernel));
  add_builtin_op(r, make_op<ScatterAttrs>("ScatterND", FusionKind::opaque, 3, 3,
                                          infer_scatter_nd, scatter_nd_kernel));
  add_builtin_op(r, make_op<TensorScatterAttrs>("TensorScatter", FusionKind::opaque, 2, 3,
                                                infer_tensor_scatter, tensor_scatter_kernel));
  add_builtin_op(r, make_op<EyeLikeAttrs>("EyeLike", FusionKind::injective, 1, 1, infer_eye_like,
                                          eye_like_kernel));
}

}  // namespace collage::ops
