// The blocked layouts a native group takes at its boundary.
#include "backends/native/native_layouts.h"

#include <algorithm>

#include "collage/ops/tensor.h"
#include "te_ops/conv.h"

namespace collage::native {
namespace {

bool is_anchor(const Node& n) {
  const std::string_view op = n.op_name();
  return op == "Conv" || op == "MatMul" || op == "Gemm";
}

// An elementwise group (every node elementwise or broadcast, one output): its stages are inlined
// into the output's, which the default schedule vectorizes along the innermost axis, the 16 (or
// 8) channels of a block when the output is stored blocked. It takes the output and the inputs of
// the output's shape blocked (a smaller broadcast operand, as a per-channel scale, stays plain).
bool elementwise_takes(const Graph& group, ValueId v) {
  if (group.outputs().size() != 1) return false;
  for (const Node& n : group.nodes())
    if (n.op->fusion != FusionKind::elementwise && n.op->fusion != FusionKind::broadcast)
      return false;
  return group.value(v).type.shape == group.value(group.outputs()[0]).type.shape;
}

// A group of one MaxPool (no Indices output) or AveragePool over a 4-D f32 value: its input and
// output blocked, a vector of a block's channels per window tap (te_ops/pool_schedule.h).
bool window_pool_takes(const Graph& group) {
  if (group.nodes().size() != 1) return false;
  const Node& n = group.node(0);
  if ((n.op_name() != "MaxPool" && n.op_name() != "AveragePool") || n.inputs.empty() ||
      n.inputs[0] == kNoValue)
    return false;
  if (n.outputs.size() > 1 && n.outputs[1] != kNoValue) return false;
  const TensorType& x = group.value(n.inputs[0]).type;
  return x.dtype == DType::f32 && x.shape.size() == 4;
}

// A group of one GlobalAveragePool over a 4-D f32 value of whole channel blocks: its input
// blocked (a vector of a block's channels summed per position, te_ops/pool_schedule.h), its
// [N, C, 1, 1] output plain. Taking the input lets the convolution before a squeeze-and-excitation
// block write blocks, which the scale's Mul and the next convolution read.
bool global_pool_takes(const Graph& group, ValueId v, int64_t block) {
  if (group.nodes().size() != 1) return false;
  const Node& n = group.node(0);
  if (n.op_name() != "GlobalAveragePool" || n.inputs.empty() || n.inputs[0] != v) return false;
  const TensorType& x = group.value(v).type;
  return x.dtype == DType::f32 && x.shape.size() == 4 && x.shape[1] % block == 0;
}

// A group of one Pad of a 4-D f32 value along its spatial axes only (Inception-v3's before an
// average pool): both sides blocked, a vector of a block's channels per position (the default
// schedule; the pad reads the block's channels of one position, or writes the fill).
bool spatial_pad_takes(const Graph& group) {
  if (group.nodes().size() != 1) return false;
  const Node& n = group.node(0);
  if (n.op_name() != "Pad" || n.inputs.empty() || n.inputs[0] == kNoValue) return false;
  const TensorType& x = group.value(n.inputs[0]).type;
  const PadAttrs& a = n.get<PadAttrs>();
  return x.dtype == DType::f32 && x.shape.size() == 4 && a.axes.empty() && a.pads.size() == 8 &&
         a.pads[0] == 0 && a.pads[1] == 0 && a.pads[4] == 0 && a.pads[5] == 0;
}

// A group of one f32 Concat along the channels of 4-D values, each input a whole number of
// blocks: every side blocked, the concatenation copies a block at a time (te_ops/concat_blocked.h).
// Elementwise nodes after it (DenseNet's BatchNormalization and Relu before each 1x1 convolution)
// are inlined into the blocked store: then the group has one output, of the concatenation's shape,
// and takes blocks for the Concat's inputs, the output and operands of the output's shape (a
// per-channel scale stays plain). Blocks out let the convolution after it read them in place.
bool concat_takes(const Graph& group, ValueId v, int64_t block) {
  const Node* concat = nullptr;
  for (const Node& n : group.nodes()) {
    if (n.op_name() == "Concat") {
      if (concat != nullptr) return false;
      concat = &n;
    } else if (n.op->fusion != FusionKind::elementwise && n.op->fusion != FusionKind::broadcast) {
      return false;
    }
  }
  if (concat == nullptr || concat->outputs.empty()) return false;
  const TensorType& out = group.value(concat->outputs[0]).type;
  const int64_t rank = static_cast<int64_t>(out.shape.size());
  const int64_t axis = concat->get<ConcatAttrs>().axis;
  if (rank != 4 || (axis != 1 && axis != 1 - rank) || out.dtype != DType::f32) return false;
  const bool whole_blocks =
      std::all_of(concat->inputs.begin(), concat->inputs.end(), [&](ValueId in) {
        return in != kNoValue && group.value(in).type.shape.size() == 4 &&
               group.value(in).type.shape[1] % block == 0;
      });
  if (!whole_blocks) return false;
  if (group.nodes().size() == 1) return true;
  if (group.outputs().size() != 1 || group.value(group.outputs()[0]).type.shape != out.shape)
    return false;
  const bool concat_input =
      std::find(concat->inputs.begin(), concat->inputs.end(), v) != concat->inputs.end();
  return concat_input || group.value(v).type.shape == out.shape;
}

}  // namespace

bool takes_layout(const Graph& group, ValueId v, const Layout& layout) {
  if (layout.plain()) return true;
  if ((layout.c_block != te_ops::conv::kBlock && layout.c_block != te_ops::conv::kSmallBlock) ||
      !check_layout(layout, group.value(v).type).ok())
    return false;
  if (window_pool_takes(group) || concat_takes(group, v, layout.c_block)) return true;
  if (global_pool_takes(group, v, layout.c_block) || spatial_pad_takes(group)) return true;
  NodeId conv = -1;
  for (NodeId n = 0; n < static_cast<NodeId>(group.nodes().size()); ++n) {
    if (!is_anchor(group.node(n))) continue;
    if (conv >= 0 || group.node(n).op_name() != "Conv") return false;
    conv = n;
  }
  if (conv < 0) return elementwise_takes(group, v);
  const Node& node = group.node(conv);
  if (node.inputs.size() < 2 || node.inputs[0] == kNoValue || node.inputs[1] == kNoValue)
    return false;
  const bool bias = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
  auto geometry = te_ops::conv::resolve(node, group.value(node.inputs[0]).type.shape,
                                        group.value(node.inputs[1]).type.shape, bias,
                                        layout.c_block);
  if (!geometry.ok() || !(geometry->blocked() || geometry->depthwise())) return false;
  const auto& outputs = group.outputs();
  if (std::find(outputs.begin(), outputs.end(), v) != outputs.end())
    return outputs.size() == 1;
  bool read = false;
  for (const Node& n : group.nodes())
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] != v) continue;
      read = true;
      const bool conv_data = &n == &node && i == 0;
      const bool epilogue_operand = &n != &node && n.outputs.size() == 1 &&
                                    group.value(n.outputs[0]).type.shape ==
                                        group.value(v).type.shape;
      if (!conv_data && !epilogue_operand) return false;
    }
  return read;
}

}  // namespace collage::native
