// lower_group(): a walk over the group's nodes in order, each becoming one step of the program
// (a Conv followed by its Relu one step), every value at its own place in the arena.
#include "cuda_lowering.h"

#include <map>

#include "collage/ops/nn.h"
#include "core/str_cat.h"
#include "cuda_elementwise.h"

namespace collage::cuda_backend {
namespace {

using rt_cuda::ConvStep;
using rt_cuda::GemmStep;

absl::Status node_error(const Node& node, const std::string& why) {
  return absl::InvalidArgumentError(
      str_cat("cuda: node '", node.name, "' (", node.op_name(), "): ", why));
}

int64_t elements(const Shape& s, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t n = 1;
  for (size_t k = from; k < std::min(to, s.size()); ++k) n *= s[k];
  return n;
}

absl::Status check_conv(const Graph& g, const Node& node) {
  const auto& a = node.get<ConvAttrs>();
  const Shape& x = g.value(node.inputs[0]).type.shape;
  const Shape& w = g.value(node.inputs[1]).type.shape;
  if (x.size() != 4 || w.size() != 4) return node_error(node, "only 2-D convolutions (NCHW)");
  if (a.auto_pad != "NOTSET" && a.auto_pad != "VALID")
    return node_error(node, str_cat("auto_pad ", a.auto_pad, " is not supported"));
  if (a.auto_pad == "NOTSET" && !a.pads.empty() &&
      (a.pads.size() != 4 || a.pads[0] != a.pads[2] || a.pads[1] != a.pads[3]))
    return node_error(node, "only symmetric padding");
  if (a.group < 1 || x[1] % a.group != 0 || w[1] * a.group != x[1])
    return node_error(node, "the weights do not match the channels and groups");
  return absl::OkStatus();
}

// The GEMM of a MatMul: A [..., M, K] times a 2-D B [K, N] as one [rows, K] x [K, N] product, or
// A [b..., M, K] times B [b..., K, N] with the same batch dimensions as a strided batch.
absl::StatusOr<GemmStep> matmul_gemm(const Graph& g, const Node& node) {
  const Shape& a = g.value(node.inputs[0]).type.shape;
  const Shape& b = g.value(node.inputs[1]).type.shape;
  if (a.size() < 2 || b.size() < 2) return node_error(node, "1-D operands are not supported");
  GemmStep s;
  s.k = a.back();
  s.n = b.back();
  if (b[b.size() - 2] != s.k) return node_error(node, "the operands' inner dimensions differ");
  if (b.size() == 2) {
    s.m = elements(a, 0, a.size() - 1);
  } else if (a.size() == b.size() && std::equal(a.begin(), a.end() - 2, b.begin())) {
    s.m = a[a.size() - 2];
    s.batch = elements(a, 0, a.size() - 2);
    s.stride_a = s.m * s.k, s.stride_b = s.k * s.n, s.stride_c = s.m * s.n;
  } else {
    return node_error(node, "only a 2-D B or operands with the same batch dimensions");
  }
  s.lda = s.k, s.ldb = s.n, s.ldc = s.n;
  return s;
}

absl::StatusOr<GemmStep> gemm_gemm(const Graph& g, const Node& node) {
  const auto& attrs = node.get<GemmAttrs>();
  const Shape& a = g.value(node.inputs[0]).type.shape;
  const Shape& b = g.value(node.inputs[1]).type.shape;
  if (a.size() != 2 || b.size() != 2) return node_error(node, "Gemm operands must be 2-D");
  GemmStep s;
  s.trans_a = attrs.transA != 0, s.trans_b = attrs.transB != 0;
  s.m = s.trans_a ? a[1] : a[0];
  s.k = s.trans_a ? a[0] : a[1];
  s.n = s.trans_b ? b[0] : b[1];
  if ((s.trans_b ? b[1] : b[0]) != s.k)
    return node_error(node, "the operands' inner dimensions differ");
  s.lda = a[1], s.ldb = b[1], s.ldc = s.n;
  s.alpha = attrs.alpha;
  const bool has_c = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
  s.beta = has_c ? attrs.beta : 0.0f;
  return s;
}

class Lowering {
 public:
  Lowering(const Graph& g, bool compile, int arch, const LoweringChoices& choices)
      : g_(g), compile_(compile), arch_(arch), choices_(choices) {}

  absl::StatusOr<LoweredProgram> run() {
    for (ValueId v : g_.inputs()) place_argument(v);
    for (ValueId v : g_.outputs()) place_argument(v);
    const auto& nodes = g_.nodes();
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Node& node = nodes[i];
      if (absl::Status s = check_node(g_, node); !s.ok()) return s;
      absl::Status s;
      if (node.op_name() == "Conv") {
        const bool relu = fuses_relu(i);
        s = conv(node, relu ? nodes[i + 1].outputs[0] : node.outputs[0], relu);
        i += relu;
      } else if (node.op_name() == "MatMul") {
        s = gemm(node, matmul_gemm(g_, node));
      } else if (node.op_name() == "Gemm") {
        s = gemm(node, gemm_gemm(g_, node));
      } else {
        s = elementwise(node);
      }
      if (!s.ok()) return s;
    }
    return std::move(out_);
  }

 private:
  rt_cuda::GpuProgram& p() { return out_.program; }

  // A value that is both an input and an output (or two outputs) is one place, named by every
  // argument position that passes it.
  void place_argument(ValueId v) {
    auto [it, placed] = at_.try_emplace(v, 0);
    if (placed) it->second = rt_cuda::reserve(p(), g_.value(v).type.bytes());
    p().arg_offsets.push_back(it->second);
  }

  // Where `v` lives: an argument, a value computed earlier, or a constant placed on first use.
  uint64_t offset(ValueId v) {
    if (auto it = at_.find(v); it != at_.end()) return it->second;
    const uint64_t o = rt_cuda::reserve(p(), g_.value(v).type.bytes());
    at_[v] = o;
    if (const Tensor* t = g_.constant_of(v)) {
      p().constant_offsets.push_back(o);
      out_.constants.push_back(*t);
    }
    return o;
  }

  // Conv `i` followed by a Relu that alone reads it and is not an output: one step.
  bool fuses_relu(size_t i) const {
    const auto& nodes = g_.nodes();
    if (i + 1 >= nodes.size() || nodes[i + 1].op_name() != "Relu") return false;
    const ValueId y = nodes[i].outputs[0];
    if (nodes[i + 1].inputs[0] != y || g_.users()[y].size() != 1) return false;
    for (ValueId o : g_.outputs())
      if (o == y) return false;
    return true;
  }

  absl::Status conv(const Node& node, ValueId out, bool relu) {
    const auto& a = node.get<ConvAttrs>();
    const Shape& x = g_.value(node.inputs[0]).type.shape;
    const Shape& w = g_.value(node.inputs[1]).type.shape;
    ConvStep s;
    s.n = x[0], s.c = x[1], s.h = x[2], s.w = x[3], s.o = w[0], s.kh = w[2], s.kw = w[3];
    if (a.auto_pad == "NOTSET" && !a.pads.empty()) s.pad_h = a.pads[0], s.pad_w = a.pads[1];
    if (!a.strides.empty()) s.stride_h = a.strides[0], s.stride_w = a.strides[1];
    if (!a.dilations.empty()) s.dilation_h = a.dilations[0], s.dilation_w = a.dilations[1];
    s.groups = a.group;
    s.activation = relu ? rt_cuda::ConvActivation::relu : rt_cuda::ConvActivation::none;
    s.x = offset(node.inputs[0]);
    s.weight = offset(node.inputs[1]);
    s.has_bias = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
    if (s.has_bias) s.bias = offset(node.inputs[2]);
    s.y = offset(out);
    if (s.out_h() != g_.value(out).type.shape[2] || s.out_w() != g_.value(out).type.shape[3])
      return node_error(node, "the output's size does not follow from the attributes");
    if (depthwise(s)) {
      out_.depthwise_key += str_cat(s.n, ",", s.c, ",", s.h, ",", s.w, ",", s.kh, "x", s.kw, ",",
                                    s.stride_h, ",", s.pad_h, ",", s.has_bias, ",", relu, ";");
      if (choices_.generated_depthwise) return generated_depthwise(node, s, out);
    }
    p().steps.push_back(s);
    return absl::OkStatus();
  }

  static bool depthwise(const ConvStep& s) {
    return s.groups == s.c && s.o == s.c && s.stride_h == s.stride_w && s.pad_h == s.pad_w &&
           s.dilation_h == 1 && s.dilation_w == 1;
  }

  // The generated depthwise kernel, then (with a bias or relu) a kernel adding the bias and
  // clamping; the first writes a buffer of its own then (kernel arguments never overlap).
  absl::Status generated_depthwise(const Node& node, const ConvStep& s, ValueId out) {
    codegen::cuda::Conv2dShape shape;
    shape.batch = s.n, shape.in_channels = s.c, shape.height = s.h, shape.width = s.w;
    shape.out_channels = s.o, shape.kernel_h = s.kh, shape.kernel_w = s.kw;
    shape.stride = s.stride_h, shape.pad = s.pad_h;
    const bool relu = s.activation == rt_cuda::ConvActivation::relu;
    const bool epilogue = s.has_bias || relu;
    const uint64_t conv_out = epilogue ? rt_cuda::reserve(p(), g_.value(out).type.bytes()) : s.y;
    if (absl::Status st =
            add_kernel(node, codegen::cuda::gpu_depthwise_conv2d(shape), {s.x, s.weight, conv_out});
        !st.ok())
      return st;
    if (!epilogue) return absl::OkStatus();
    const Shape ys = g_.value(out).type.shape;
    te::Tensor y = te::placeholder(ys, DType::f32, "y");
    te::Tensor bias = te::placeholder({s.has_bias ? s.o : 1}, DType::f32, "bias");
    te::Tensor done = te::compute(
        ys,
        [&](const std::vector<te::Var>& i) {
          te::Expr v = y(i[0], i[1], i[2], i[3]);
          if (s.has_bias) v = v + bias(i[1]);
          return relu ? te::maximum(v, 0.0f) : v;
        },
        "epilogue");
    if (s.has_bias)
      return add_kernel(node, codegen::cuda::gpu_elementwise(done, {y, bias}),
                        {conv_out, s.bias, s.y});
    return add_kernel(node, codegen::cuda::gpu_elementwise(done, {y}), {conv_out, s.y});
  }

  absl::Status gemm(const Node& node, absl::StatusOr<GemmStep> step) {
    if (!step.ok()) return step.status();
    step->a = offset(node.inputs[0]);
    step->b = offset(node.inputs[1]);
    step->c = offset(node.outputs[0]);
    if (step->beta != 0.0f) {
      // Gemm's C, broadcast into the output, which the GEMM then accumulates into.
      absl::Status s = add_kernel(node, broadcast_kernel(g_, node, node.inputs[2], node.outputs[0]),
                                  {offset(node.inputs[2]), step->c});
      if (!s.ok()) return s;
    }
    p().steps.push_back(*step);
    return absl::OkStatus();
  }

  absl::Status elementwise(const Node& node) {
    std::vector<uint64_t> args;
    for (ValueId v : node.inputs) args.push_back(offset(v));
    args.push_back(offset(node.outputs[0]));
    return add_kernel(node, elementwise_kernel(g_, node), args);
  }

  // A generated kernel over `args`: compiled and launched, or (a check) only defined.
  absl::Status add_kernel(const Node& node, absl::StatusOr<codegen::cuda::GpuKernelDef> def,
                          const std::vector<uint64_t>& args) {
    if (!def.ok()) return node_error(node, std::string(def.status().message()));
    if (!compile_) return absl::OkStatus();
    const std::string name = str_cat("k", p().images.size());
    absl::StatusOr<codegen::cuda::CompiledCuda> image = compile_kernel(*def, name, arch_);
    if (!image.ok()) return node_error(node, std::string(image.status().message()));
    p().steps.push_back(
        codegen::cuda::launch_step(*image, static_cast<uint32_t>(p().images.size()), args));
    p().images.push_back(codegen::cuda::image_bytes(*image));
    return absl::OkStatus();
  }

  const Graph& g_;
  bool compile_;
  int arch_;
  LoweringChoices choices_;
  LoweredProgram out_;
  std::map<ValueId, uint64_t> at_;
};

}  // namespace

absl::Status check_node(const Graph& g, const Node& node) {
  for (const auto* list : {&node.inputs, &node.outputs})
    for (ValueId v : *list)
      if (v != kNoValue && g.value(v).type.dtype != DType::f32)
        return node_error(node, "only f32 values");
  const std::string& op = node.op_name();
  if (op == "Conv") return check_conv(g, node);
  if (op == "MatMul") return matmul_gemm(g, node).status();
  if (op == "Gemm") return gemm_gemm(g, node).status();
  if (is_elementwise_op(op)) return absl::OkStatus();
  return node_error(node, "the cuda backend does not run this operator");
}

absl::StatusOr<LoweredProgram> lower_group(const Graph& group, bool compile, int arch,
                                           const LoweringChoices& choices) {
  if (group.nodes().empty()) return absl::InvalidArgumentError("cuda: empty group");
  return Lowering(group, compile, arch, choices).run();
}

}  // namespace collage::cuda_backend
