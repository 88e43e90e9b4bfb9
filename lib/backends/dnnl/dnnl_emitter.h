// The dnnl backend's parameter emitter, shared by the emission files (dnnl_emit.cpp,
// dnnl_emit_quant.cpp): it maps group values to kernel operands and collects the constants.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/dnnl/dnnl_emit.h"
#include "backends/dnnl/dnnl_group.h"
#include "collage/layout.h"
#include "collage/ops/nn.h"
#include "core/str_cat.h"

namespace collage::dnnl_backend {

using rt_dnnl::Operand;
using rt_dnnl::PostOp;
using rt_dnnl::SourceKind;

using Dims = std::vector<int64_t>;

// A rank-0 value is a one-element vector to oneDNN.
inline Dims dims_of(const Shape& s) {
  return s.empty() ? Dims{1} : Dims(s.begin(), s.end());
}

// Maps dims of the IR result's rank to the dims the kernel computes in (they differ for MatMul
// with 1-D operands, which oneDNN sees as matrices).
using DimsMap = std::function<Dims(const Dims&)>;

class Emitter {
 public:
  explicit Emitter(const Graph& g) : g_(g) {}

  // A group input or constant, read with `dims` (same element count). A channel-blocked input
  // is read in its layout, with its own dims; with `memory_order` it is read as the bytes it is
  // stored in, whatever its layout (an elementwise kernel whose output has the same layout).
  absl::StatusOr<Operand> value(ValueId v, Dims dims, bool memory_order = false) {
    if (const Tensor* t = g_.constant_of(v)) return constant(*t, std::move(dims));
    const auto& in = g_.inputs();
    auto it = std::find(in.begin(), in.end(), v);
    if (it == in.end())
      return absl::InternalError(str_cat("dnnl: value '", g_.value(v).name, "' is no input"));
    auto block = c_block(v, dims, memory_order);
    if (!block.ok()) return block.status();
    return Operand{SourceKind::arg, static_cast<int32_t>(it - in.begin()), std::move(dims), 0,
                   *block};
  }
  // The group's (only) output.
  absl::StatusOr<Operand> output(Dims dims, bool memory_order = false) const {
    auto block = c_block(g_.outputs()[0], dims, memory_order);
    if (!block.ok()) return block.status();
    return Operand{SourceKind::arg, static_cast<int32_t>(g_.inputs().size()), std::move(dims), 0,
                   *block};
  }
  // A new constant in plain layout; `t` is shared, not copied.
  absl::StatusOr<Operand> constant(const Tensor& t, Dims dims) {
    if (shape_numel(dims) != t.numel())
      return absl::InternalError("dnnl: constant dims do not match its size");
    out_.constants.push_back(t.reshaped(dims));
    out_.header.constant_layouts.push_back(rt_dnnl::plain_layout(dims));
    return Operand{SourceKind::constant, static_cast<int32_t>(out_.constants.size() - 1), dims, 0};
  }

  // The post-ops of the chain on a result of IR rank `rank`, computed in `result` dims.
  absl::StatusOr<std::vector<PostOp>> post_ops(const GroupPlan& plan, size_t rank,
                                               const Dims& result, const DimsMap& map,
                                               bool allow_sum) {
    std::vector<PostOp> ops;
    bool sum_used = !allow_sum;
    for (const ChainStep& step : plan.chain) {
      const Node& n = g_.node(step.node);
      switch (step.kind) {
        case ChainStep::Kind::eltwise:
          for (const rt_dnnl::EltwiseOp& e : step.eltwise) {
            PostOp p;
            p.kind = rt_dnnl::PostOpKind::eltwise;
            p.eltwise = e;
            ops.push_back(p);
          }
          break;
        case ChainStep::Kind::batch_norm: {
          // y = x * mul + add per channel (axis 1), computed as the reference kernel does.
          const float eps = n.get<BatchNormalizationAttrs>().epsilon;
          const float* scale = g_.constant_of(n.inputs[1])->data<float>();
          const float* bias = g_.constant_of(n.inputs[2])->data<float>();
          const float* mean = g_.constant_of(n.inputs[3])->data<float>();
          const float* var = g_.constant_of(n.inputs[4])->data<float>();
          const int64_t channels = g_.constant_of(n.inputs[1])->numel();
          Tensor mul(DType::f32, {channels}), add(DType::f32, {channels});
          for (int64_t c = 0; c < channels; ++c) {
            mul.data<float>()[c] = scale[c] / std::sqrt(var[c] + eps);
            add.data<float>()[c] = bias[c] - mean[c] * mul.data<float>()[c];
          }
          Dims aligned(rank, 1);
          aligned[1] = channels;
          for (auto [alg, t] :
               {std::pair{rt_dnnl::BinaryAlg::mul, mul}, std::pair{rt_dnnl::BinaryAlg::add, add}}) {
            auto operand = constant(t, map(aligned));
            if (!operand.ok()) return operand.status();
            PostOp p;
            p.kind = rt_dnnl::PostOpKind::binary;
            p.binary = alg;
            p.operand = *std::move(operand);
            ops.push_back(std::move(p));
          }
          break;
        }
        case ChainStep::Kind::binary: {
          const Dims dims = map(align_rank(g_.value(step.other).type.shape, rank));
          auto operand = value(step.other, dims);
          if (!operand.ok()) return operand.status();
          PostOp p;
          p.operand = *std::move(operand);
          rt_dnnl::BinaryAlg alg = step.binary;
          if (step.reversed) {
            // other - x = (-x) + other; other / x = (1 / x) * other.
            ops.push_back(inverse_post_op(alg));
            alg =
                alg == rt_dnnl::BinaryAlg::sub ? rt_dnnl::BinaryAlg::add : rt_dnnl::BinaryAlg::mul;
          }
          // A same-shaped tensor added once is the sum post-op (accumulated into dst).
          if (!sum_used && alg == rt_dnnl::BinaryAlg::add && dims == result &&
              p.operand.kind == SourceKind::arg) {
            p.kind = rt_dnnl::PostOpKind::sum;
            sum_used = true;
          } else {
            p.kind = rt_dnnl::PostOpKind::binary;
            p.binary = alg;
          }
          ops.push_back(std::move(p));
          break;
        }
      }
    }
    return ops;
  }

  template <typename P>
  EmittedKernel finish(rt_dnnl::OpKind kind, P& params, int num_threads) {
    rt_dnnl::ParamWriter w;
    params.io(w);
    out_.body = std::move(w.bytes());
    out_.header.kind = kind;
    out_.header.num_threads = num_threads;
    return std::move(out_);
  }

  const Graph& graph() const { return g_; }

 private:
  // The Operand::c_block of argument `v` read with `dims`: its layout's block, which needs dims
  // that are its shape (InvalidArgument otherwise: takes_layout keeps such values plain); 0 when
  // plain or read in `memory_order`.
  absl::StatusOr<uint32_t> c_block(ValueId v, const Dims& dims, bool memory_order) const {
    const Value& value = g_.value(v);
    if (value.layout.plain() || memory_order) return 0u;
    if (dims != dims_of(value.type.shape))
      return absl::InvalidArgumentError(
          str_cat("dnnl: value '", value.name, "' is in layout ",
                  layout_name(value.layout, value.type.shape.size()),
                  ", which this kernel cannot read or write"));
    return static_cast<uint32_t>(value.layout.c_block);
  }

  const Graph& g_;
  EmittedKernel out_;
};

#define DNNL_ASSIGN_OR_RETURN(lhs, expr) \
  do {                                   \
    auto _r = (expr);                    \
    if (!_r.ok()) return _r.status();    \
    lhs = *std::move(_r);                \
  } while (0)

// The integer contractions (dnnl_emit_quant.cpp).
absl::StatusOr<EmittedKernel> emit_qconv(Emitter& e, const GroupPlan& plan, int threads);
absl::StatusOr<EmittedKernel> emit_qmatmul(Emitter& e, const GroupPlan& plan, int threads);
// LSTM, GRU and RNN (dnnl_rnn.cpp) and DeformConv (dnnl_deform.cpp).
absl::StatusOr<EmittedKernel> emit_recurrent(Emitter& e, const GroupPlan& plan, int threads);
absl::StatusOr<EmittedKernel> emit_deform_conv(Emitter& e, const GroupPlan& plan, int threads);

}  // namespace collage::dnnl_backend
