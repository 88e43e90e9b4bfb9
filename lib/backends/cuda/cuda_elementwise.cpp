// Generated elementwise kernels for the cuda backend.
#include "cuda_elementwise.h"

#include <algorithm>
#include <array>

#include "codegen/cuda/cuda_codegen.h"
#include "collage/te_ops.h"
#include "core/str_cat.h"

namespace collage::cuda_backend {
namespace {

// Operators whose tensor expression is elementwise with numpy broadcasting (what
// gpu_elementwise schedules).
constexpr std::array<std::string_view, 24> kElementwiseOps = {
    "Add",  "Sub",         "Mul",  "Div",      "Pow",  "Relu",      "Sigmoid",    "Tanh",
    "Exp",  "Log",         "Sqrt", "Neg",      "Abs",  "Erf",       "Reciprocal", "LeakyRelu",
    "Clip", "HardSigmoid", "Elu",  "Softplus", "Gelu", "HardSwish", "Max",        "Min"};

const te_ops::TeOpRegistry& registry() {
  static const te_ops::TeOpRegistry r = te_ops::default_te_ops();
  return r;
}

}  // namespace

bool is_elementwise_op(const std::string& op) {
  return std::find(kElementwiseOps.begin(), kElementwiseOps.end(), op) != kElementwiseOps.end();
}

absl::StatusOr<codegen::cuda::GpuKernelDef> elementwise_kernel(const Graph& g, const Node& node) {
  const te_ops::TeOpDef* def = registry().find(node.op_name());
  if (def == nullptr || !def->compute)
    return absl::InvalidArgumentError("no tensor expression for this operator");
  std::vector<te::Tensor> ins, present;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ValueId v = node.inputs[i];
    if (v == kNoValue) {
      ins.emplace_back();
      continue;
    }
    const TensorType& t = g.value(v).type;
    ins.push_back(te::placeholder(t.shape, t.dtype, str_cat("in", i)));
    present.push_back(ins.back());
  }
  absl::StatusOr<std::vector<te::Tensor>> outs = def->compute(g, node, ins);
  if (!outs.ok()) return outs.status();
  if (outs->size() != 1) return absl::InvalidArgumentError("only one output");
  return codegen::cuda::gpu_elementwise((*outs)[0], present);
}

absl::StatusOr<codegen::cuda::GpuKernelDef> broadcast_kernel(const Graph& g, const Node&,
                                                             ValueId from, ValueId to) {
  const Shape& fs = g.value(from).type.shape;
  const Shape& ts = g.value(to).type.shape;
  if (fs.size() > ts.size()) return absl::InvalidArgumentError("the operand does not broadcast");
  const size_t lead = ts.size() - fs.size();
  for (size_t k = 0; k < fs.size(); ++k)
    if (fs[k] != 1 && fs[k] != ts[lead + k])
      return absl::InvalidArgumentError("the operand does not broadcast");
  te::Tensor src = te::placeholder(fs, DType::f32, "src");
  te::Tensor out = te::compute(
      ts,
      [&](const std::vector<te::Var>& i) {
        std::vector<te::Expr> idx;
        for (size_t k = 0; k < fs.size(); ++k)
          idx.push_back(fs[k] == 1 ? te::Expr(int64_t{0}) : te::Expr(i[lead + k]));
        return src(idx);
      },
      "broadcast");
  return codegen::cuda::gpu_elementwise(out, {src});
}

absl::StatusOr<codegen::cuda::CompiledCuda> compile_kernel(const codegen::cuda::GpuKernelDef& def,
                                                           const std::string& name, int arch) {
  absl::StatusOr<te::PrimFunc> f = codegen::cuda::lower_gpu(def, name);
  if (!f.ok()) return f.status();
  absl::StatusOr<codegen::cuda::CudaKernel> k = codegen::cuda::generate_cuda(*f);
  if (!k.ok()) return k.status();
  codegen::cuda::NvrtcOptions options;
  options.arch = arch;
  return codegen::cuda::compile_cuda(*k, options);
}

}  // namespace collage::cuda_backend
