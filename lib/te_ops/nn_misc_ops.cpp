// TE computes of the remaining nn operators: MaxPool, AveragePool, LpPool and GlobalAveragePool
// (pads, ceil_mode, dilations, auto_pad), inference BatchNormalization and ConvTranspose (groups,
// dilations, output_padding, output_shape) as a direct reduction.
#include <algorithm>
#include <limits>

#include "collage/ops/nn.h"
#include "collage/ops/pooling.h"
#include "collage/te_ops.h"
#include "core/str_cat.h"
#include "ops/nn_window.h"
#include "te_ops/conv_transpose_phases.h"
#include "te_ops/max_pool_indices.h"
#include "te_ops/pool_schedule.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;
using Outputs = absl::StatusOr<std::vector<te::Tensor>>;

Shape spatial(const Shape& s) { return Shape(s.begin() + 2, s.end()); }

absl::StatusOr<ops::Window> window(const Node& node, const Shape& x, const Shape& kernel,
                                   const ops::WindowAttrs& a) {
  auto w = ops::resolve_window(spatial(x), kernel, a);
  if (!w.ok()) return node_error(node, std::string(w.status().message()));
  return w;
}

// MaxPool, AveragePool and LpPool: a reduction over the window taps (the largest; the sum, then
// divided by the taps counted; the sum of |x|^p, then its p-th root); taps in the padding are
// masked. MaxPool's Indices come from max_pool_indices.cpp.
template <typename A>
Outputs pool(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  constexpr bool is_max = std::is_same_v<A, MaxPoolAttrs>;
  constexpr bool is_lp = std::is_same_v<A, LpPoolAttrs>;
  const auto& a = node.get<A>();
  te::Tensor x = in[0];
  // MaxPool takes 8-bit integers too (a window's largest element, in the element type).
  const bool int8 = x.dtype() == DType::u8 || x.dtype() == DType::i8;
  if (x.dtype() != DType::f32 && !(is_max && int8))
    return node_error(node, is_max ? "only f32, u8 and i8 inputs are supported"
                                   : "only f32 inputs are supported");
  const bool indices = node.outputs.size() > 1 && node.outputs[1] != kNoValue;
  ops::WindowAttrs wa{a.auto_pad, a.strides, {}, a.pads, a.ceil_mode != 0};
  wa.dilations = a.dilations;
  auto w = window(node, x.shape(), a.kernel_shape, wa);
  if (!w.ok()) return w.status();
  const int64_t rank = w->rank();
  std::vector<te::IterVar> taps;
  for (int64_t k = 0; k < rank; ++k)
    taps.push_back(te::reduce_axis({0, w->kernel[k]}, str_cat("k", k)));
  const std::string name = tensor_name(node);
  const bool lp_norm_1 = [&] {  // LpPool with p = 1: the sum is the result
    if constexpr (is_lp) return a.p == 1;
    return false;
  }();
  te::Tensor acc = te::compute(
      output_type(g, node).shape,
      [&](const std::vector<te::Var>& i) {
        std::vector<Expr> idx = {i[0], i[1]};
        Expr valid = true;
        for (int64_t k = 0; k < rank; ++k) {
          Expr pos = i[2 + k] * w->stride[k] - w->pad_begin[k] + Expr(taps[k]) * w->dilation[k];
          valid = te::logical_and(valid, te::logical_and(pos >= int64_t{0}, pos < w->in[k]));
          idx.push_back(clamp_index(pos, w->in[k]));
        }
        Expr v = x(idx);
        if constexpr (is_lp) {
          const int64_t p = a.p;
          v = p == 1   ? te::fabs(v)
              : p == 2 ? v * v
                       : te::pow(te::fabs(v), Expr(static_cast<double>(p)));
        }
        if (is_max) {
          const double lowest = x.dtype() == DType::u8 ? 0 : x.dtype() == DType::i8 ? -128 : -INFINITY;
          return te::max(te::select(valid, v, te::make_const(x.dtype(), lowest)), taps);
        }
        return te::sum(te::select(valid, v, te::make_const(DType::f32, 0)), taps);
      },
      is_max || lp_norm_1 ? name : name + ".sum");
  if constexpr (is_max) {
    if (indices)
      return std::vector<te::Tensor>{
          acc, max_pool_indices(x, *w, a.storage_order, output_type(g, node, 1).shape,
                                tensor_name(node, 1))};
    return std::vector<te::Tensor>{acc};
  }
  if constexpr (is_lp) {
    const int64_t p = a.p;
    if (p == 1) return std::vector<te::Tensor>{acc};
    return std::vector<te::Tensor>{te::compute(
        acc.shape(),
        [&](const std::vector<te::Var>& i) {
          Expr s = acc(std::vector<Expr>(i.begin(), i.end()));
          return p == 2 ? te::sqrt(s) : te::pow(s, Expr(1.0 / static_cast<double>(p)));
        },
        name)};
  }
  const bool include_pad = [&] {
    if constexpr (std::is_same_v<A, AveragePoolAttrs>) return a.count_include_pad != 0;
    return false;
  }();
  return std::vector<te::Tensor>{te::compute(
      acc.shape(),
      [&](const std::vector<te::Var>& i) {
        // The divisor: taps inside the input (or inside the padded input with count_include_pad,
        // not counting what a ceil_mode window hangs past the end padding).
        Expr count = int64_t{1};
        for (int64_t k = 0; k < rank; ++k) {
          // Taps t in [0, kernel) with 0 <= o + t * dilation < extent, o the window's start
          // relative to the counted region.
          const int64_t d = w->dilation[k], kernel = w->kernel[k];
          Expr o = i[2 + k] * w->stride[k] - (include_pad ? int64_t{0} : w->pad_begin[k]);
          const int64_t extent =
              include_pad ? w->pad_begin[k] + w->in[k] + w->pad_end[k] : w->in[k];
          auto ceil_div = [d](const Expr& a) { return te::floordiv(a + (d - 1), Expr(d)); };
          Expr lo = te::select(o >= int64_t{0}, Expr(int64_t{0}), ceil_div(Expr(int64_t{0}) - o));
          Expr hi = te::select(o >= extent, Expr(int64_t{0}),
                               te::minimum(ceil_div(Expr(extent) - o), Expr(kernel)));
          count = count * te::maximum(hi - te::minimum(lo, hi), int64_t{1});
        }
        std::vector<Expr> idx(i.begin(), i.end());
        return acc(idx) / te::cast(DType::f32, count);
      },
      name)};
}

Outputs global_average_pool(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  te::Tensor x = in[0];
  if (x.dtype() != DType::f32) return node_error(node, "only f32 inputs are supported");
  std::vector<te::IterVar> axes;
  int64_t count = 1;
  for (int k = 2; k < x.ndim(); ++k) {
    axes.push_back(te::reduce_axis({0, x.shape()[k]}, str_cat("r", k)));
    count *= x.shape()[k];
  }
  const std::string name = tensor_name(node);
  te::Tensor acc = te::compute(
      output_type(g, node).shape,
      [&](const std::vector<te::Var>& i) {
        std::vector<Expr> idx = {i[0], i[1]};
        for (const te::IterVar& r : axes) idx.push_back(r);
        return te::sum(x(idx), axes);
      },
      name + ".sum");
  return std::vector<te::Tensor>{te::compute(
      acc.shape(),
      [&](const std::vector<te::Var>& i) {
        return acc(std::vector<Expr>(i.begin(), i.end())) /
               te::make_const(DType::f32, static_cast<double>(count));
      },
      name)};
}

Outputs batch_norm(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const auto& a = node.get<BatchNormalizationAttrs>();
  if (a.training_mode != 0) return node_error(node, "training_mode is not supported");
  if (absl::Status s = require_dtypes(g, node, {DType::f32}); !s.ok()) return s;
  te::Tensor x = in[0], scale = in[1], bias = in[2], mean = in[3], var = in[4];
  if (x.ndim() < 2) return node_error(node, "input rank must be at least 2");
  return std::vector<te::Tensor>{te::compute(
      output_type(g, node).shape,
      [&](const std::vector<te::Var>& i) {
        Expr c = i[1];
        Expr mul = scale(c) / te::sqrt(var(c) + te::make_const(DType::f32, a.epsilon));
        return x(std::vector<Expr>(i.begin(), i.end())) * mul + (bias(c) - mean(c) * mul);
      },
      tensor_name(node))};
}

Outputs conv_transpose(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const auto& a = node.get<ConvTransposeAttrs>();
  if (absl::Status s = require_dtypes(g, node, {DType::f32}); !s.ok()) return s;
  te::Tensor x = in[0], w = in[1];
  te::Tensor b = in.size() > 2 ? in[2] : te::Tensor();
  const Shape& out = output_type(g, node).shape;
  const int64_t rank = x.ndim() - 2;
  const int64_t group = a.group;
  if (group < 1 || x.shape()[1] % group != 0)
    return node_error(node, str_cat("group ", group, " does not divide the channels"));
  const int64_t cg = x.shape()[1] / group;  // input channels per group
  const int64_t mg = w.shape()[1];          // output channels per group
  absl::StatusOr<deconv::Window> win = deconv::resolve_window(node, x.shape(), w.shape(), out);
  if (!win.ok()) return win.status();
  if (std::optional<deconv::PhaseGeometry> pg =
          deconv::phase_geometry(x.shape(), w.shape(), out, group, *win))
    return deconv::phases_compute(tensor_name(node), *pg, x, w, b);
  const std::vector<int64_t>& stride = win->stride;
  const std::vector<int64_t>& dil = win->dilation;
  const std::vector<int64_t>& pad = win->pad;
  te::IterVar rc = te::reduce_axis({0, cg}, "rc");
  // Without dilation, output position o receives input i through tap o + pad - i * stride, so
  // only ceil(kernel / stride) inputs (counted back from (o + pad) / stride) can reach it: the
  // reduction runs over those (`window`), or over every input position when there are fewer
  // (`inputs`, e.g. a 1x1 input), instead of over every tap, most of which would be masked.
  enum class Walk { taps, window, inputs };
  std::vector<Walk> walk(rank);
  std::vector<te::IterVar> taps;
  for (int64_t k = 0; k < rank; ++k) {
    const int64_t kernel = w.shape()[2 + k], len = x.shape()[2 + k];
    const int64_t window = (kernel + stride[k] - 1) / stride[k];
    walk[k] = dil[k] != 1 ? Walk::taps
              : len <= window ? Walk::inputs
              : stride[k] > 1 ? Walk::window
                              : Walk::taps;
    const int64_t extent = walk[k] == Walk::inputs ? len : walk[k] == Walk::window ? window : kernel;
    taps.push_back(te::reduce_axis({0, extent}, str_cat("k", k)));
  }
  std::vector<te::IterVar> all = {rc};
  all.insert(all.end(), taps.begin(), taps.end());
  const std::string name = tensor_name(node);
  // The weight with the output channel innermost (wp[c, taps..., m]): the anchor schedule packs it
  // once and vectorizes over output channels; the default schedule inlines it.
  Shape wp_shape = {w.shape()[0]};
  for (int64_t k = 0; k < rank; ++k) wp_shape.push_back(w.shape()[2 + k]);
  wp_shape.push_back(mg);
  te::Tensor wp = te::compute(
      wp_shape,
      [&](const std::vector<te::Var>& i) {
        std::vector<Expr> wi = {i[0], i[rank + 1]};
        for (int64_t k = 0; k < rank; ++k) wi.push_back(i[1 + k]);
        return w(wi);
      },
      name + ".wpack", "pack");
  te::Tensor acc = te::compute(
      out,
      [&](const std::vector<te::Var>& i) {
        Expr m = i[1];
        Expr c = group == 1 ? Expr(rc) : te::floordiv(m, mg) * cg + Expr(rc);
        std::vector<Expr> xi = {i[0], c};
        std::vector<Expr> wi = {c};
        Expr valid = true;
        for (int64_t k = 0; k < rank; ++k) {
          const int64_t len = x.shape()[2 + k];
          const int64_t kernel = w.shape()[2 + k];
          if (walk[k] == Walk::inputs) {
            Expr tap = i[2 + k] + pad[k] - Expr(taps[k]) * stride[k];
            valid = te::logical_and(valid, te::logical_and(tap >= int64_t{0}, tap < kernel));
            xi.push_back(taps[k]);
            wi.push_back(clamp_index(tap, kernel));
            continue;
          }
          if (walk[k] == Walk::window) {
            Expr shifted = i[2 + k] + pad[k];
            Expr src = te::floordiv(shifted, stride[k]) - Expr(taps[k]);
            Expr tap = te::floormod(shifted, stride[k]) + Expr(taps[k]) * stride[k];
            valid = te::logical_and(valid, te::logical_and(tap < kernel,
                                                           te::logical_and(src >= int64_t{0}, src < len)));
            xi.push_back(clamp_index(src, len));
            wi.push_back(clamp_index(tap, kernel));
            continue;
          }
          // Output position o receives input (o + pad - tap * dilation) / stride when divisible.
          Expr num = i[2 + k] + pad[k] - Expr(taps[k]) * dil[k];
          Expr src = te::floordiv(num, stride[k]);
          valid = te::logical_and(valid, te::logical_and(num >= int64_t{0}, src < len));
          if (stride[k] > 1)
            valid = te::logical_and(valid, te::floormod(num, stride[k]) == int64_t{0});
          xi.push_back(clamp_index(src, len));
          wi.push_back(taps[k]);
        }
        wi.push_back(group == 1 ? m : te::floormod(m, mg));
        return te::sum(te::select(valid, x(xi) * wp(wi), te::make_const(DType::f32, 0)), all);
      },
      b.defined() ? name + ".acc" : name, "conv_transpose");
  if (!b.defined()) return std::vector<te::Tensor>{acc};
  return std::vector<te::Tensor>{te::compute(
      out,
      [&](const std::vector<te::Var>& i) {
        return acc(std::vector<Expr>(i.begin(), i.end())) + b(i[1]);
      },
      name)};
}

// ConvTranspose with constant weights and one group: the weights packed once (output channel
// innermost), the output's spatial positions in parallel, and at each position the accumulator
// of every output channel computed with the channels as vector lanes (input reads broadcast,
// packed weight reads contiguous). Anything else is refused, and the default schedule runs it.
absl::StatusOr<ScheduledGroup> conv_transpose_schedule(const AnchorGroup& group) {
  const Node& node = group.graph->node(group.anchor);
  if (group.anchor_output.defined() && group.anchor_output->tag == "conv_transpose_unpack") {
    std::optional<deconv::PhaseGeometry> pg = deconv::phase_geometry(*group.graph, node);
    if (!pg) return node_error(node, "no phase geometry for a phase compute");
    return deconv::schedule_phases(group, *pg);
  }
  if (node.get<ConvTransposeAttrs>().group != 1 || group.outputs.size() != 1)
    return node_error(node, "the vectorized schedule takes one group and one output");
  te::Schedule s = te::create_schedule(group.outputs);
  te::Tensor wp, acc;
  for (const te::Tensor& t : s.stage_tensors()) {
    if (t.op_kind() != te::OpKind::compute) continue;
    if (t->tag == "pack") wp = t;
    if (t->tag == "conv_transpose") acc = t;
  }
  if (!wp.defined() || !acc.defined()) return node_error(node, "no packed weight stage");
  const std::vector<te::Tensor> sources = te::input_tensors(wp);
  bool constant = false;
  for (size_t i = 0; i < group.inputs.size(); ++i)
    if (sources.size() == 1 && group.inputs[i].same_as(sources[0])) constant = group.input_is_constant[i];
  if (!constant) return node_error(node, "the weight is not a constant");

  const te::Tensor out = group.outputs[0];
  te::Tensor local = out.same_as(acc) ? s.cache_write(out) : acc;
  for (const te::Tensor& t : s.stage_tensors()) {
    if (t.op_kind() != te::OpKind::compute || t.same_as(out) || t.same_as(local) || t.same_as(wp))
      continue;
    s[t].compute_inline();
  }
  s[wp].pack();
  const int rank = out.ndim() - 2;
  const int lanes = std::max(1, group.target.vector_bytes() / 4);
  const int64_t channels = out.shape()[1];
  // Output loops: n, spatial..., channel (vectorized).
  te::Stage main = s[out];
  std::vector<te::IterVar> order = {main.axis(0)};
  for (int k = 0; k < rank; ++k) order.push_back(main.axis(2 + k));
  order.push_back(main.axis(1));
  main.reorder(order);
  te::IterVar last = main.axis(1 + rank);
  if (channels >= lanes) main.vectorize(main.split(main.axis(1), lanes).second);
  te::IterVar fused = main.axis(0);
  for (int k = 0; k + 1 < rank; ++k) fused = main.fuse(fused, main.axis(2 + k));
  // The accumulators of one output position: reduction loops outside, channel lanes inside.
  te::Stage st = s[local];
  if (channels >= lanes) {
    auto [mo, mi] = st.split(st.axis(1), lanes);
    std::vector<te::IterVar> acc_order = {mo};
    for (size_t r = 0; r < local->reduce_axis.size(); ++r)
      acc_order.push_back(st.reduce_axis(static_cast<int>(r)));
    acc_order.push_back(mi);
    st.reorder(acc_order);
    st.vectorize(mi);
  }
  st.compute_at(main, last);
  if (group.num_threads > 1) main.parallel(fused);
  return ScheduledGroup{std::move(s), {wp}};
}

}  // namespace

void register_nn_misc_ops(TeOpRegistry& r) {
  r.add("MaxPool", {[](const Graph& g, const Node& n, std::span<const te::Tensor> in) {
          return pool<MaxPoolAttrs>(g, n, in);
        }, schedule_pool});
  r.add("AveragePool", {[](const Graph& g, const Node& n, std::span<const te::Tensor> in) {
                          return pool<AveragePoolAttrs>(g, n, in);
                        },
                        schedule_pool});
  r.add("LpPool", {[](const Graph& g, const Node& n, std::span<const te::Tensor> in) {
          return pool<LpPoolAttrs>(g, n, in);
        }, nullptr});
  r.add("GlobalAveragePool", {global_average_pool, schedule_global_pool});
  r.add("BatchNormalization", {batch_norm, nullptr});
  r.add("ConvTranspose", {conv_transpose, conv_transpose_schedule});
}

}  // namespace collage::te_ops
