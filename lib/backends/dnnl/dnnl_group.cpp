// Group analysis of the dnnl backend: anchor classification, the post-op chain, and the attribute,
// dtype and shape checks that decide what oneDNN runs.
#include "backends/dnnl/dnnl_group.h"

#include <algorithm>

#include "collage/ops/elementwise.h"
#include "collage/ops/nn.h"
#include "collage/ops/tensor.h"
#include "core/str_cat.h"
#include "dnnl_module.h"
#include "ops/op_util.h"

namespace collage::dnnl_backend {

absl::Status unsupported(const Node& n, std::string_view why) {
  return absl::InvalidArgumentError(str_cat("dnnl: ", n.op_name(), " '", n.name, "': ", why));
}

namespace {

using rt_dnnl::BinaryAlg;
using rt_dnnl::EltwiseAlg;
using rt_dnnl::EltwiseOp;

const Shape& shape_of(const Graph& g, ValueId v) {
  return g.value(v).type.shape;
}
DType dtype_of(const Graph& g, ValueId v) {
  return g.value(v).type.dtype;
}

bool present(const Node& n, size_t i) {
  return i < n.inputs.size() && n.inputs[i] != kNoValue;
}

// Every present input and every output is f32 and non-empty, with rank <= 12.
absl::Status check_f32(const Graph& g, const Node& n) {
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (!present(n, i)) continue;
    const TensorType& t = g.value(n.inputs[i]).type;
    if (t.dtype != DType::f32)
      return unsupported(n, str_cat("input ", i, " is ", type_to_string(t), "; dnnl runs f32"));
  }
  for (ValueId v : n.outputs) {
    const TensorType& t = g.value(v).type;
    if (t.dtype != DType::f32) return unsupported(n, str_cat("output is ", type_to_string(t)));
    if (t.numel() == 0) return unsupported(n, "empty output");
    if (t.shape.size() > rt_dnnl::kMaxRank) return unsupported(n, "rank above 12");
  }
  return absl::OkStatus();
}

std::optional<Anchor> anchor_of(const Node& n) {
  const std::string& op = n.op_name();
  if (op == "Conv") return Anchor::conv;
  if (op == "ConvTranspose") return Anchor::conv_transpose;
  if (op == "MatMul") return Anchor::matmul;
  if (op == "Gemm") return Anchor::gemm;
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool") return Anchor::pool;
  if (op == "Softmax" || op == "LogSoftmax") return Anchor::softmax;
  // The Mean and InvStdDev outputs are the reference kernel's only.
  if (op == "LayerNormalization" && n.outputs.size() == 1) return Anchor::layer_norm;
  if (op == "Concat") return Anchor::concat;
  if (op == "ConvInteger" || op == "QLinearConv") return Anchor::qconv;
  if (op == "MatMulInteger" || op == "QLinearMatMul") return Anchor::qmatmul;
  if (op == "LSTM" || op == "GRU" || op == "RNN") return Anchor::recurrent;
  if (op == "DeformConv") return Anchor::deform_conv;
  if (binary_alg(op)) return Anchor::binary;
  if (eltwise_ops(n)) return Anchor::eltwise;
  return std::nullopt;
}

const char* eltwise_name(EltwiseAlg alg) {
  switch (alg) {
    case EltwiseAlg::relu:
      return "relu";
    case EltwiseAlg::tanh:
      return "tanh";
    case EltwiseAlg::logistic:
      return "logistic";
    case EltwiseAlg::gelu_erf:
      return "gelu_erf";
    case EltwiseAlg::gelu_tanh:
      return "gelu_tanh";
    case EltwiseAlg::clip:
      return "clip";
    case EltwiseAlg::hardswish:
      return "hardswish";
    case EltwiseAlg::exp:
      return "exp";
    case EltwiseAlg::abs:
      return "abs";
    case EltwiseAlg::sqrt:
      return "sqrt";
    case EltwiseAlg::log:
      return "log";
    case EltwiseAlg::linear:
      return "linear";
    case EltwiseAlg::pow:
      return "pow";
  }
  return "?";
}

bool takes_post_ops(Anchor a) {
  return a == Anchor::conv || a == Anchor::conv_transpose || a == Anchor::matmul ||
         a == Anchor::gemm || a == Anchor::binary;
}

absl::Status check_window_op(const Graph& g, const Node& n, bool constant_weights) {
  if (absl::Status s = check_f32(g, n); !s.ok()) return s;
  const size_t rank = shape_of(g, n.inputs[0]).size();
  if (rank < 3 || rank > 5) return unsupported(n, "input rank must be 3 to 5");
  if (constant_weights) {
    if (!g.constant_of(n.inputs[1])) return unsupported(n, "weights are not a constant");
    if (present(n, 2) && !g.constant_of(n.inputs[2]))
      return unsupported(n, "bias is not a constant");
  }
  auto geo = window_geometry(g, n);
  if (!geo.ok()) return geo.status();
  return absl::OkStatus();
}

absl::Status check_anchor(const Graph& g, const Node& n, Anchor a) {
  switch (a) {
    case Anchor::conv:
    case Anchor::conv_transpose:
      return check_window_op(g, n, /*constant_weights=*/true);
    case Anchor::pool: {
      if (absl::Status s = check_window_op(g, n, false); !s.ok()) return s;
      if (n.op_name() != "AveragePool" || !n.get<AveragePoolAttrs>().count_include_pad)
        return absl::OkStatus();
      // oneDNN counts every window position as padding; ONNX stops counting at the end pad.
      if (window_geometry(g, n)->past_end_pad)
        return unsupported(n, "ceil_mode windows past the end pad with count_include_pad");
      return absl::OkStatus();
    }
    case Anchor::matmul: {
      if (absl::Status s = check_f32(g, n); !s.ok()) return s;
      const size_t out_rank = shape_of(g, n.outputs[0]).size();
      if (out_rank + 2 > rt_dnnl::kMaxRank) return unsupported(n, "rank above 10");
      return absl::OkStatus();
    }
    case Anchor::gemm: {
      if (absl::Status s = check_f32(g, n); !s.ok()) return s;
      const auto& at = n.get<GemmAttrs>();
      if (present(n, 2) && !g.constant_of(n.inputs[2]) && at.beta != 1.f)
        return unsupported(n, "a non-constant C needs beta = 1");
      return absl::OkStatus();
    }
    case Anchor::softmax:
      return check_f32(g, n);
    case Anchor::layer_norm: {
      if (absl::Status s = check_f32(g, n); !s.ok()) return s;
      if (!g.constant_of(n.inputs[1])) return unsupported(n, "Scale is not a constant");
      if (present(n, 2) && !g.constant_of(n.inputs[2]))
        return unsupported(n, "B is not a constant");
      return absl::OkStatus();
    }
    case Anchor::eltwise:
      return check_f32(g, n);
    case Anchor::binary: {
      if (absl::Status s = check_f32(g, n); !s.ok()) return s;
      const Shape& out = shape_of(g, n.outputs[0]);
      if (shape_of(g, n.inputs[0]) == out || shape_of(g, n.inputs[1]) == out)
        return absl::OkStatus();
      return unsupported(n, "no operand has the output's shape (oneDNN broadcasts only src1)");
    }
    case Anchor::qconv:
    case Anchor::qmatmul: {
      // Saturated sums would be wrong answers, not errors: native's integer kernels or the
      // reference take these nodes on such a CPU.
      if (std::string isa; !rt_dnnl::int8_sums_exact(&isa))
        return unsupported(n, str_cat("oneDNN's ISA here (", isa,
                                      ") has no VNNI: its 8-bit kernels sum pairs of u8 x s8 "
                                      "products in 16 bits, which saturate"));
      return plan_quant(g, n).status();
    }
    case Anchor::recurrent:
      return check_recurrent(g, n);
    case Anchor::deform_conv:
      return check_deform_conv(g, n);
    case Anchor::concat: {
      const DType t = dtype_of(g, n.outputs[0]);
      if (t != DType::f32 && t != DType::i32 && t != DType::i8)
        return unsupported(n, str_cat("element type ", dtype_name(t)));
      if (n.inputs.empty() || n.inputs.size() > rt_dnnl::kMaxConcatInputs)
        return unsupported(n, "input count");
      for (ValueId v : n.inputs)
        if (v == kNoValue || g.value(v).type.numel() == 0) return unsupported(n, "an empty input");
      if (shape_of(g, n.outputs[0]).size() > rt_dnnl::kMaxRank)
        return unsupported(n, "rank above 12");
      return absl::OkStatus();
    }
  }
  return unsupported(n, "unknown anchor");
}

// The chain step `n` applied to the running value `running`.
absl::StatusOr<ChainStep> chain_step(const Graph& g, const Node& n, ValueId running,
                                     const std::vector<NodeId>& group) {
  ChainStep step;
  step.node = static_cast<NodeId>(&n - g.nodes().data());
  if (absl::Status s = check_f32(g, n); !s.ok()) return s;
  if (n.outputs.size() != 1) return unsupported(n, "more than one output");
  if (auto ops = eltwise_ops(n)) {
    step.kind = ChainStep::Kind::eltwise;
    step.eltwise = *std::move(ops);
    return step;
  }
  if (n.op_name() == "BatchNormalization") {
    if (n.inputs[0] != running) return unsupported(n, "X is not the fused result");
    for (size_t i = 1; i < 5; ++i)
      if (!g.constant_of(n.inputs[i])) return unsupported(n, "statistics are not constants");
    if (shape_of(g, running).size() < 2) return unsupported(n, "rank below 2");
    step.kind = ChainStep::Kind::batch_norm;
    return step;
  }
  auto alg = binary_alg(n.op_name());
  if (!alg) return unsupported(n, "not a post-op (eltwise, binary or BatchNormalization)");
  step.kind = ChainStep::Kind::binary;
  step.binary = *alg;
  const bool first = n.inputs[0] == running, second = n.inputs[1] == running;
  if (first == second) return unsupported(n, "must read the fused result exactly once");
  step.reversed = second && !n.op->commutative;
  step.other = first ? n.inputs[1] : n.inputs[0];
  const Value& other = g.value(step.other);
  if (other.kind == ValueKind::node_output &&
      std::find(group.begin(), group.end(), other.producer) != group.end())
    return unsupported(n, "the other operand is computed inside the group");
  const Shape& r = shape_of(g, running);
  if (shape_of(g, n.outputs[0]) != r || shape_of(g, step.other).size() > r.size())
    return unsupported(n, "the other operand must broadcast to the fused result");
  return step;
}

}  // namespace

rt_dnnl::PostOp inverse_post_op(BinaryAlg alg) {
  rt_dnnl::PostOp p;
  p.kind = rt_dnnl::PostOpKind::eltwise;
  p.eltwise = alg == BinaryAlg::sub ? EltwiseOp{EltwiseAlg::linear, -1.f, 0.f}
                                    : EltwiseOp{EltwiseAlg::pow, 1.f, -1.f};
  return p;
}

absl::Status normalize_post_ops(std::vector<rt_dnnl::PostOp>& ops) {
  using rt_dnnl::PostOpKind;
  std::vector<rt_dnnl::PostOp> out;
  for (rt_dnnl::PostOp& p : ops) {
    const bool linear = p.kind == PostOpKind::eltwise && p.eltwise.alg == EltwiseAlg::linear;
    if (linear && !out.empty() && out.back().kind == PostOpKind::eltwise &&
        out.back().eltwise.alg == EltwiseAlg::linear) {
      // a2 (a1 x + b1) + b2
      EltwiseOp& prev = out.back().eltwise;
      prev = {EltwiseAlg::linear, p.eltwise.alpha * prev.alpha,
              p.eltwise.alpha * prev.beta + p.eltwise.beta};
      continue;
    }
    out.push_back(std::move(p));
  }
  for (size_t i = 0; i < out.size(); ++i)
    for (size_t j = i + 1; j < out.size(); ++j) {
      if (out[i].kind != PostOpKind::eltwise || out[j].kind != PostOpKind::eltwise) continue;
      const EltwiseOp &a = out[i].eltwise, &b = out[j].eltwise;
      if (a.alg == b.alg && (a.alpha != b.alpha || a.beta != b.beta))
        return absl::InvalidArgumentError(
            str_cat("dnnl: two fused eltwise functions '", eltwise_name(a.alg),
                    "' with different parameters; oneDNN 2.6 would apply one parameter set to "
                    "both"));
    }
  ops = std::move(out);
  return absl::OkStatus();
}

namespace {

// The post-ops emit_kernel will give the anchor (operands left empty), to check them early.
std::vector<rt_dnnl::PostOp> planned_post_ops(const Graph& g, const GroupPlan& plan) {
  using rt_dnnl::PostOp;
  PostOp other;
  other.kind = rt_dnnl::PostOpKind::binary;
  auto eltwise = [](EltwiseOp e) {
    PostOp p;
    p.eltwise = e;
    return p;
  };
  std::vector<PostOp> ops;
  const Node& n = g.node(plan.anchor_node);
  if (plan.anchor == Anchor::binary) {
    if (shape_of(g, n.inputs[0]) != shape_of(g, n.outputs[0]) && !n.op->commutative)
      ops.push_back(inverse_post_op(*binary_alg(n.op_name())));
  } else if (plan.anchor == Anchor::gemm) {
    const auto& a = n.get<GemmAttrs>();
    const bool pre_linear = a.alpha != 1.f && !g.constant_of(n.inputs[1]);
    if (pre_linear) ops.push_back(eltwise({EltwiseAlg::linear, a.alpha, 0.f}));
    if (present(n, 2) && a.beta != 0.f && (pre_linear || !g.constant_of(n.inputs[2])))
      ops.push_back(other);
  }
  for (const ChainStep& step : plan.chain) {
    switch (step.kind) {
      case ChainStep::Kind::eltwise:
        for (const EltwiseOp& e : step.eltwise) ops.push_back(eltwise(e));
        break;
      case ChainStep::Kind::batch_norm:
        ops.push_back(other);
        ops.push_back(other);
        break;
      case ChainStep::Kind::binary:
        if (step.reversed) ops.push_back(inverse_post_op(step.binary));
        ops.push_back(other);
        break;
    }
  }
  return ops;
}

}  // namespace

std::optional<BinaryAlg> binary_alg(std::string_view op) {
  if (op == "Add") return BinaryAlg::add;
  if (op == "Sub") return BinaryAlg::sub;
  if (op == "Mul") return BinaryAlg::mul;
  if (op == "Div") return BinaryAlg::div;
  return std::nullopt;
}

std::vector<int64_t> align_rank(const Shape& shape, size_t r) {
  std::vector<int64_t> out(r - std::min(r, shape.size()), 1);
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

std::optional<std::vector<EltwiseOp>> eltwise_ops(const Node& n) {
  const std::string& op = n.op_name();
  auto one = [](EltwiseAlg alg, float alpha = 0.f, float beta = 0.f) {
    return std::vector<EltwiseOp>{{alg, alpha, beta}};
  };
  if (op == "Relu") return one(EltwiseAlg::relu);
  if (op == "LeakyRelu") return one(EltwiseAlg::relu, n.get<LeakyReluAttrs>().alpha);
  if (op == "Sigmoid") return one(EltwiseAlg::logistic);
  if (op == "Tanh") return one(EltwiseAlg::tanh);
  if (op == "Gelu")
    return one(n.get<GeluAttrs>().approximate == "tanh" ? EltwiseAlg::gelu_tanh
                                                        : EltwiseAlg::gelu_erf);
  if (op == "Clip") {
    const auto& a = n.get<ClipAttrs>();
    if (!(a.min <= a.max)) return std::nullopt;  // ONNX then gives max everywhere
    return one(EltwiseAlg::clip, a.min, a.max);
  }
  if (op == "HardSwish") return one(EltwiseAlg::hardswish);
  if (op == "HardSigmoid") {
    const auto& a = n.get<HardSigmoidAttrs>();
    return std::vector<EltwiseOp>{{EltwiseAlg::linear, a.alpha, a.beta},
                                  {EltwiseAlg::clip, 0.f, 1.f}};
  }
  if (op == "Exp") return one(EltwiseAlg::exp);
  if (op == "Abs") return one(EltwiseAlg::abs);
  if (op == "Sqrt") return one(EltwiseAlg::sqrt);
  if (op == "Log") return one(EltwiseAlg::log);
  if (op == "Neg") return one(EltwiseAlg::linear, -1.f, 0.f);
  if (op == "Reciprocal") return one(EltwiseAlg::pow, 1.f, -1.f);
  return std::nullopt;
}

absl::StatusOr<GroupPlan> analyze_group(const Graph& g, const std::vector<NodeId>& nodes,
                                        bool standalone) {
  if (nodes.empty()) return absl::InvalidArgumentError("dnnl: empty group");
  const Node& anchor = g.node(nodes[0]);
  auto kind = anchor_of(anchor);
  if (!kind) return unsupported(anchor, "dnnl has no kernel for this operator");
  if (anchor.outputs.size() != 1 && *kind != Anchor::recurrent)
    return unsupported(anchor, "more than one output");
  if (absl::Status s = check_anchor(g, anchor, *kind); !s.ok()) return s;
  GroupPlan plan;
  plan.anchor = *kind;
  plan.anchor_node = nodes[0];
  ValueId running = anchor.outputs[0];
  const auto& users = g.users();
  const auto& outputs = g.outputs();
  for (size_t i = 1; i < nodes.size(); ++i) {
    const Node& n = g.node(nodes[i]);
    if (!takes_post_ops(*kind)) return unsupported(anchor, "takes no post-ops");
    if (users[running].size() != 1 || users[running][0] != nodes[i] ||
        std::find(outputs.begin(), outputs.end(), running) != outputs.end())
      return unsupported(n, "the group is not a chain: an intermediate result is used elsewhere");
    auto step = chain_step(g, n, running, nodes);
    if (!step.ok()) return step.status();
    plan.chain.push_back(*std::move(step));
    running = n.outputs[0];
  }
  if (standalone && *kind == Anchor::recurrent) {
    // Any subset of the recurrent node's outputs.
    for (ValueId v : outputs)
      if (std::find(anchor.outputs.begin(), anchor.outputs.end(), v) == anchor.outputs.end())
        return unsupported(anchor, "a group output is not one of the node's outputs");
  } else if (standalone && (outputs.size() != 1 || outputs[0] != running)) {
    return absl::InvalidArgumentError("dnnl: the group must have exactly one output, its result");
  }
  plan.output = running;
  std::vector<rt_dnnl::PostOp> post_ops = planned_post_ops(g, plan);
  if (absl::Status s = normalize_post_ops(post_ops); !s.ok()) return s;
  return plan;
}

absl::StatusOr<WindowGeometry> window_geometry(const Graph& g, const Node& n) {
  const Shape& x = shape_of(g, n.inputs[0]);
  const Shape& y = shape_of(g, n.outputs[0]);
  const size_t sp = x.size() - 2;
  const std::string& op = n.op_name();
  WindowGeometry w;
  std::string auto_pad = "NOTSET";
  std::vector<int64_t> pads, out_padding, output_shape;
  bool ceil_mode = false;
  const bool int_conv = op == "ConvInteger" || op == "QLinearConv";
  if (op == "Conv" || op == "ConvTranspose" || int_conv) {
    const Shape& wt = shape_of(g, n.inputs[op == "QLinearConv" ? 3 : 1]);
    w.kernel.assign(wt.begin() + 2, wt.end());
  }
  if (op == "Conv" || int_conv) {
    const auto& a = n.get<ConvAttrs>();
    auto_pad = a.auto_pad, pads = a.pads, w.strides = a.strides, w.dilations = a.dilations;
  } else if (op == "ConvTranspose") {
    const auto& a = n.get<ConvTransposeAttrs>();
    auto_pad = a.auto_pad, pads = a.pads, w.strides = a.strides, w.dilations = a.dilations;
    out_padding = a.output_padding, output_shape = a.output_shape;
  } else if (op == "MaxPool") {
    const auto& a = n.get<MaxPoolAttrs>();
    if (n.outputs.size() > 1) return unsupported(n, "MaxPool's Indices output");
    auto_pad = a.auto_pad, pads = a.pads, w.strides = a.strides, w.dilations = a.dilations;
    w.kernel = a.kernel_shape, ceil_mode = a.ceil_mode != 0;
  } else if (op == "AveragePool") {
    const auto& a = n.get<AveragePoolAttrs>();
    // dnnl's averaging divides by the window's span, not by its dilated taps.
    for (int64_t d : a.dilations)
      if (d != 1) return unsupported(n, "AveragePool with dilations other than 1");
    auto_pad = a.auto_pad, pads = a.pads, w.strides = a.strides, w.kernel = a.kernel_shape;
    ceil_mode = a.ceil_mode != 0;
  } else if (op == "GlobalAveragePool") {
    w.kernel.assign(x.begin() + 2, x.end());
  } else {
    return unsupported(n, "not a window operator");
  }
  if (w.strides.empty()) w.strides.assign(sp, 1);
  if (w.dilations.empty()) w.dilations.assign(sp, 1);
  if (w.kernel.size() != sp || w.strides.size() != sp || w.dilations.size() != sp ||
      (!pads.empty() && pads.size() != 2 * sp) || y.size() != x.size())
    return unsupported(n, "window attributes do not match the spatial rank");
  w.pad_begin.assign(sp, 0);
  w.pad_end.assign(sp, 0);
  for (size_t i = 0; i < sp; ++i) {
    const int64_t in = x[i + 2], out = y[i + 2], s = w.strides[i];
    const int64_t ext = (w.kernel[i] - 1) * w.dilations[i] + 1;
    if (op == "ConvTranspose") {
      // dst = (src - 1) * stride + extent - pad_begin - pad_end in oneDNN; ONNX's begin pad, and
      // an end pad that yields the inferred output size (output_padding included).
      const int64_t op_i = out_padding.empty() ? 0 : out_padding[i];
      const int64_t full = s * (in - 1) + op_i + ext;
      if (auto_pad == "NOTSET" && output_shape.empty() && !pads.empty()) {
        w.pad_begin[i] = pads[i];
      } else if (!(auto_pad == "VALID" && output_shape.empty())) {
        const int64_t total = std::max<int64_t>(0, full - out);
        w.pad_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      }
      w.pad_end[i] = s * (in - 1) + ext - w.pad_begin[i] - out;
      continue;
    }
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + ext - in);
      w.pad_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pad_end[i] = total - w.pad_begin[i];
    } else if (auto_pad == "NOTSET" && !pads.empty()) {
      w.pad_begin[i] = pads[i];
      w.pad_end[i] = pads[sp + i];
    }
    // ceil_mode: the last window may hang past the end pad; oneDNN needs that as padding.
    const int64_t reach = (out - 1) * s + ext - in - w.pad_begin[i];
    if (ceil_mode && reach > w.pad_end[i]) {
      w.pad_end[i] = reach;
      w.past_end_pad = true;
    }
  }
  return w;
}

}  // namespace collage::dnnl_backend
