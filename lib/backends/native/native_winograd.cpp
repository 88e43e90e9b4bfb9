// Choosing the native backend's Winograd convolution by measurement.
#include "backends/native/native_winograd.h"

#include <algorithm>
#include <chrono>
#include <random>

#include "core/str_cat.h"
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

absl::StatusOr<te_ops::conv::Geometry> geometry(const Graph& group, const Node& node) {
  const bool bias = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
  return te_ops::conv::resolve(node, group.value(node.inputs[0]).type.shape,
                               group.value(node.inputs[1]).type.shape, bias);
}

// The single Conv anchor of `group` when it has a Winograd form with a constant weight, else -1.
NodeId winograd_conv(const Graph& group) {
  NodeId conv = -1;
  for (NodeId n = 0; n < static_cast<NodeId>(group.nodes().size()); ++n) {
    const std::string_view op = group.node(n).op_name();
    if (op != "Conv" && op != "MatMul" && op != "Gemm") continue;
    if (conv >= 0 || op != "Conv") return -1;
    conv = n;
  }
  if (conv < 0) return -1;
  const Node& node = group.node(conv);
  if (node.inputs.size() < 2 || node.inputs[0] == kNoValue || node.inputs[1] == kNoValue ||
      group.value(node.inputs[1]).kind != ValueKind::constant)
    return -1;
  for (ValueId v : node.inputs)
    if (v != kNoValue && group.value(v).type.dtype != DType::f32) return -1;
  auto g = geometry(group, node);
  return g.ok() && te_ops::winograd::applies(*g) ? conv : -1;
}

}  // namespace

bool winograd_group(const Graph& group) {
  return winograd_conv(group) >= 0;
}

std::string winograd_choice_key(const Graph& group) {
  const NodeId conv = winograd_conv(group);
  if (conv < 0) return "";
  const Node& node = group.node(conv);
  auto g = geometry(group, node);
  const Value& x = group.value(node.inputs[0]);
  std::string key = str_cat("Conv|x=", shape_to_string(x.type.shape), "|m=", g->m,
                            "|bias=", g->bias, "|pads=", g->pt, ",", g->pl, "|out=", g->oh, ",",
                            g->ow, "|in=", layout_name(x.layout, x.type.shape.size()), "|outs=");
  for (ValueId v : group.outputs())
    key += str_cat(layout_name(group.value(v).layout, group.value(v).type.shape.size()), ",");
  return key;
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
