// TE computes of the injective (data movement) operators: Reshape, Flatten, Squeeze, Unsqueeze,
// Transpose, Concat, Split, Slice, Gather, GatherElements, Pad, Expand, Tile, Shape,
// ConstantOfShape and Range.
#include <algorithm>
#include <limits>

#include "collage/ops/tensor.h"
#include "collage/ops/trees.h"
#include "core/str_cat.h"
#include "collage/te_ops.h"
#include "te_ops/concat_blocked.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;
using Outputs = absl::StatusOr<std::vector<te::Tensor>>;

std::vector<Expr> as_exprs(const std::vector<te::Var>& v) { return {v.begin(), v.end()}; }

// The node's output computed by `f`, in the output's type (a select between f16 or bf16 values
// computes in f32: Pad's fill, Concat's parts).
te::Tensor one(const Graph& g, const Node& node, const std::function<Expr(const std::vector<Expr>&)>& f) {
  const TensorType& out = output_type(g, node);
  return te::compute(
      out.shape, [&](const std::vector<te::Var>& i) { return cast_to(out.dtype, f(as_exprs(i))); },
      tensor_name(node));
}

// Same elements in row-major order, another shape.
Outputs reshape(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  te::Tensor x = in[0];
  const Shape& out = output_type(g, node).shape;
  return std::vector<te::Tensor>{one(g, node, [&](const std::vector<Expr>& i) {
    if (out == x.shape()) return x(i);
    return x(unravel(ravel(std::span<const Expr>(i), out), x.shape()));
  })};
}

Outputs transpose(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  te::Tensor x = in[0];
  std::vector<int64_t> perm = node.get<TransposeAttrs>().perm;
  if (perm.empty())
    for (int64_t k = x.ndim() - 1; k >= 0; --k) perm.push_back(k);
  if (static_cast<int>(perm.size()) != x.ndim()) return node_error(node, "perm has the wrong length");
  return std::vector<te::Tensor>{one(g, node, [&](const std::vector<Expr>& i) {
    std::vector<Expr> src(perm.size());
    for (size_t k = 0; k < perm.size(); ++k) src[perm[k]] = i[k];
    return x(src);
  })};
}

Outputs concat(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const TensorType& out = output_type(g, node);
  auto axis = normalize_axis(node, node.get<ConcatAttrs>().axis, static_cast<int64_t>(out.shape.size()));
  if (!axis.ok()) return axis.status();
  std::vector<te::Tensor> parts;
  std::vector<int64_t> offsets;
  int64_t off = 0;
  for (const te::Tensor& t : in) {
    if (t.shape()[*axis] == 0) continue;
    parts.push_back(t);
    offsets.push_back(off);
    off += t.shape()[*axis];
  }
  if (*axis == 1)
    if (te::Tensor b = concat_blocked(parts, out.dtype, tensor_name(node)); b.defined())
      return std::vector<te::Tensor>{b};
  return std::vector<te::Tensor>{one(g, node, [&](const std::vector<Expr>& i) {
    Expr v;
    for (size_t p = parts.size(); p-- > 0;) {
      std::vector<Expr> idx = i;
      idx[*axis] = parts.size() == 1 ? i[*axis] - offsets[p]
                                     : clamp_index(i[*axis] - offsets[p], parts[p].shape()[*axis]);
      Expr load = cast_to(out.dtype, parts[p](idx));
      v = v.defined() ? te::select(i[*axis] < offsets[p + 1], load, v) : load;
    }
    return v;
  })};
}

Outputs split(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  te::Tensor x = in[0];
  auto axis = normalize_axis(node, node.get<SplitAttrs>().axis, x.ndim());
  if (!axis.ok()) return axis.status();
  std::vector<te::Tensor> outs;
  int64_t off = 0;
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    const Shape& shape = output_type(g, node, static_cast<int>(o)).shape;
    outs.push_back(te::compute(
        shape,
        [&](const std::vector<te::Var>& i) {
          std::vector<Expr> idx = as_exprs(i);
          idx[*axis] = idx[*axis] + off;
          return x(idx);
        },
        tensor_name(node, static_cast<int>(o))));
    off += shape[*axis];
  }
  return outs;
}

Outputs slice(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const auto& a = node.get<SliceAttrs>();
  te::Tensor x = in[0];
  const int64_t rank = x.ndim();
  std::vector<int64_t> start(rank, 0), step(rank, 1);
  for (size_t s = 0; s < a.starts.size(); ++s) {
    auto axis = normalize_axis(node, a.axes.empty() ? static_cast<int64_t>(s) : a.axes[s], rank);
    if (!axis.ok()) return axis.status();
    const int64_t dim = x.shape()[*axis];
    const int64_t st = a.steps.empty() ? 1 : a.steps[s];
    if (st == 0) return node_error(node, "a step is 0");
    int64_t b = a.starts[s];
    if (b < 0) b = b < -dim ? -1 : b + dim;  // stays clamped below
    b = st > 0 ? std::clamp<int64_t>(b, 0, dim) : std::clamp<int64_t>(b, 0, std::max<int64_t>(dim - 1, 0));
    start[*axis] = b;
    step[*axis] = st;
  }
  return std::vector<te::Tensor>{one(g, node, [&](const std::vector<Expr>& i) {
    std::vector<Expr> idx;
    for (int64_t k = 0; k < rank; ++k) idx.push_back(i[k] * step[k] + start[k]);
    return x(idx);
  })};
}

// An index read from an i32/i64 tensor, negative counting from the end, clamped into [0, dim).
Expr checked_index(const Expr& raw, int64_t dim) {
  Expr v = cast_to(DType::i64, raw);
  return clamp_index(te::select(v < int64_t{0}, v + dim, v), dim);
}

Outputs gather(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  te::Tensor data = in[0], indices = in[1];
  auto axis = normalize_axis(node, node.get<GatherAttrs>().axis, data.ndim());
  if (!axis.ok()) return axis.status();
  const int64_t q = indices.ndim();
  return std::vector<te::Tensor>{one(g, node, [&](const std::vector<Expr>& i) {
    std::vector<Expr> ii(i.begin() + *axis, i.begin() + *axis + q);
    std::vector<Expr> idx(i.begin(), i.begin() + *axis);
    idx.push_back(checked_index(indices(ii), data.shape()[*axis]));
    idx.insert(idx.end(), i.begin() + *axis + q, i.end());
    return data(idx);
  })};
}

Outputs gather_elements(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  te::Tensor data = in[0], indices = in[1];
  auto axis = normalize_axis(node, node.get<GatherElementsAttrs>().axis, data.ndim());
  if (!axis.ok()) return axis.status();
  return std::vector<te::Tensor>{one(g, node, [&](const std::vector<Expr>& i) {
    std::vector<Expr> idx = i;
    idx[*axis] = checked_index(indices(i), data.shape()[*axis]);
    return data(idx);
  })};
}

Outputs pad(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const auto& a = node.get<PadAttrs>();
  te::Tensor x = in[0];
  const int64_t rank = x.ndim();
  if (static_cast<int64_t>(a.pads.size()) != 2 * rank || !a.axes.empty())
    return node_error(node, str_cat("pads has ", a.pads.size(), " entries, expected ", 2 * rank,
                                    " (one per axis, no axes list)"));
  if (a.mode != "constant" && a.mode != "reflect" && a.mode != "edge")
    return node_error(node, str_cat("mode '", a.mode, "' is not supported"));
  const DType t = x.dtype();
  return std::vector<te::Tensor>{one(g, node, [&](const std::vector<Expr>& i) {
    std::vector<Expr> idx;
    Expr inside = true;
    for (int64_t k = 0; k < rank; ++k) {
      const int64_t pb = a.pads[k], pe = a.pads[k + rank], d = x.shape()[k];
      // The cropped input region [lo, lo + len) and the output position j inside it.
      const int64_t lo = std::max<int64_t>(0, -pb);
      const int64_t len = d - lo - std::max<int64_t>(0, -pe);
      Expr j = i[k] - std::max<int64_t>(pb, 0);
      if (pb <= 0 && pe <= 0) {
        idx.push_back(j + lo);
      } else if (a.mode == "constant") {
        inside = te::logical_and(inside, te::logical_and(j >= int64_t{0}, j < len));
        idx.push_back(clamp_index(j + lo, d));
      } else if (a.mode == "edge" || len == 1) {
        idx.push_back(clamp_index(j, len) + lo);
      } else {
        Expr m = te::floormod(j, 2 * (len - 1));
        idx.push_back(te::select(m < len, m, 2 * (len - 1) - m) + lo);
      }
    }
    Expr v = x(idx);
    if (a.mode != "constant") return v;
    Expr fill = t == DType::boolean ? Expr(a.value != 0.f)
                                    : cast_to(t, te::make_const(DType::f32, a.value));
    return te::select(inside, v, fill);
  })};
}

Outputs expand(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  te::Tensor x = in[0];
  return std::vector<te::Tensor>{te::compute(
      output_type(g, node).shape,
      [&](const std::vector<te::Var>& i) { return x(broadcast_index(x, i)); }, tensor_name(node))};
}

Outputs tile(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  te::Tensor x = in[0];
  return std::vector<te::Tensor>{one(g, node, [&](const std::vector<Expr>& i) {
    std::vector<Expr> idx;
    for (int k = 0; k < x.ndim(); ++k)
      idx.push_back(x.shape()[k] == 1 ? Expr(int64_t{0}) : te::floormod(i[k], x.shape()[k]));
    return x(idx);
  })};
}

// A 1-D tensor holding `values` (selected by position).
Expr constant_vector(const std::vector<Expr>& i, const std::vector<int64_t>& values, DType t) {
  Expr v = te::make_int(t, values.empty() ? 0 : values.back());
  for (size_t k = values.size(); k-- > 1;)
    v = te::select(i[0] < static_cast<int64_t>(k), te::make_int(t, values[k - 1]), v);
  return v;
}

Outputs shape_op(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const auto& a = node.get<ShapeAttrs>();
  const Shape& s = in[0].shape();
  const auto rank = static_cast<int64_t>(s.size());
  auto clampr = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t b = clampr(a.start), e = clampr(a.end);
  std::vector<int64_t> dims(s.begin() + b, s.begin() + std::max(b, e));
  return std::vector<te::Tensor>{one(g, node, [&](const std::vector<Expr>& i) {
    return constant_vector(i, dims, DType::i64);
  })};
}

Outputs constant_of_shape(const Graph& g, const Node& node, std::span<const te::Tensor>) {
  const auto& a = node.get<ConstantOfShapeAttrs>();
  const DType t = output_type(g, node).dtype;
  const double v = a.value.empty() ? 0.0 : a.value.get_as_double(0);
  Expr fill = t == DType::boolean ? Expr(v != 0.0)
              : t == DType::f64   ? te::make_const(t, v)
              : is_float_like(t)  ? cast_to(t, te::make_const(DType::f32, v))
                                  : te::make_int(t, a.value.empty() ? 0 : a.value.get_as_int64(0));
  return std::vector<te::Tensor>{one(g, node, [&](const std::vector<Expr>&) { return fill; })};
}

Outputs range(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const DType t = output_type(g, node).dtype;
  te::Tensor start = in[0], delta = in[2];
  return std::vector<te::Tensor>{one(g, node, [&](const std::vector<Expr>& i) {
    Expr s = start(std::vector<Expr>{}), d = delta(std::vector<Expr>{});
    if (is_float(t)) {
      const DType c = t == DType::f64 ? DType::f64 : DType::f32;  // f16/bf16 count in f32
      return cast_to(t, cast_to(c, s) + te::cast(c, i[0]) * cast_to(c, d));
    }
    return cast_to(t, cast_to(DType::i64, s) + i[0] * cast_to(DType::i64, d));
  })};
}

}  // namespace

void register_injective_ops(TeOpRegistry& r) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}) r.add(op, {reshape, nullptr});
  r.add("Transpose", {transpose, nullptr});
  r.add("Concat", {concat, nullptr});
  r.add("Split", {split, nullptr});
  r.add("Slice", {slice, nullptr});
  r.add("Gather", {gather, nullptr});
  r.add("GatherElements", {gather_elements, nullptr});
  r.add("Pad", {pad, nullptr});
  r.add("Expand", {expand, nullptr});
  r.add("Tile", {tile, nullptr});
  r.add("Shape", {shape_op, nullptr});
  r.add("ConstantOfShape", {constant_of_shape, nullptr});
  r.add("Range", {range, nullptr});
}

}  // namespace collage::te_ops
