// Choosing the native backend's Winograd convolution by measurement.
#include "backends/native/native_winograd.h"

#include <algorithm>
#include <chrono>
#include <random>

#include "te_ops/conv.h"
#include "te_ops/winograd.h"

namespace collage::native {
namespace {

double run_ms(Kernel& k, std::vector<void*>& args) {
  const auto start = std::chrono::steady_clock::now();
  for (int32_t t = 0; t < k.task_count(); ++t) (void)k.run_task(args.data(), t);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

bool winograd_group(const Graph& group) {
  NodeId conv = -1;
  for (NodeId n = 0; n < static_cast<NodeId>(group.nodes().size()); ++n) {
    const std::string_view op = group.node(n).op_name();
    if (op != "Conv" && op != "MatMul" && op != "Gemm") continue;
    if (conv >= 0 || op != "Conv") return false;
    conv = n;
  }
  if (conv < 0) return false;
  const Node& node = group.node(conv);
  if (node.inputs.size() < 2 || node.inputs[0] == kNoValue || node.inputs[1] == kNoValue ||
      group.value(node.inputs[1]).kind != ValueKind::constant)
    return false;
  for (ValueId v : node.inputs)
    if (v != kNoValue && group.value(v).type.dtype != DType::f32) return false;
  const bool bias = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
  auto g = te_ops::conv::resolve(node, group.value(node.inputs[0]).type.shape,
                                 group.value(node.inputs[1]).type.shape, bias);
  return g.ok() && te_ops::winograd::applies(*g);
}

std::shared_ptr<const te_ops::TeOpRegistry> winograd_ops(const te_ops::TeOpRegistry& ops,
                                                         int tile) {
  auto out = std::make_shared<te_ops::TeOpRegistry>(ops);
  out->add("Conv", te_ops::winograd::conv_def(tile));
  return out;
}

size_t fastest(const Graph& group, const std::vector<Kernel*>& kernels) {
  std::vector<Tensor> buffers;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (ValueId v : group.inputs()) {
    Tensor t(group.value(v).type.dtype, group.value(v).type.shape);
    if (t.dtype() == DType::f32)
      for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
    buffers.push_back(std::move(t));
  }
  for (ValueId v : group.outputs())
    buffers.emplace_back(group.value(v).type.dtype, group.value(v).type.shape);
  std::vector<void*> args;
  for (Tensor& t : buffers) args.push_back(t.raw());
  for (Kernel* k : kernels) run_ms(*k, args);
  std::vector<std::vector<double>> times(kernels.size());
  for (int turn = 0; turn < 5; ++turn)
    for (size_t i = 0; i < kernels.size(); ++i) times[i].push_back(run_ms(*kernels[i], args));
  size_t best = 0;
  for (size_t i = 1; i < kernels.size(); ++i)
    if (median(times[i]) < median(times[best])) best = i;
  return best;
}

}  // namespace collage::native
