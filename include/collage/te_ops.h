// The TE operator library's registry: for each IR operator, how to build its tensor expression
// from its inputs' tensors and, for anchor operators (conv, dense, matmul, ...), how to schedule
// a fused group that ends with an elementwise chain after the anchor.
//
// The native backend lowers a group by walking its nodes in order, calling `compute` for each
// (inputs are placeholders of the group's inputs or earlier nodes' tensors), then scheduling:
// a group with an anchor gets the anchor's `schedule`; a group without one gets the backend's
// default injective/reduction schedule (elementwise chains inlined into one loop nest).
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/target.h"
#include "collage/graph.h"
#include "collage/schedule.h"
#include "collage/te.h"

namespace collage::tune {
class TuningLog;  // lib/tune: tuned knob values by device and operator signature
}

namespace collage::te_ops {

// Builds node `node` of `graph` from its inputs' tensors (one per node input; an undefined
// te::Tensor for an absent optional input). Returns one tensor per node output. Errors name the
// node and say what is unsupported (InvalidArgument), never abort.
using ComputeFn = std::function<absl::StatusOr<std::vector<te::Tensor>>(
    const Graph& graph, const Node& node, std::span<const te::Tensor> inputs)>;

// A fused group with one anchor, ready to be scheduled.
struct AnchorGroup {
  const Graph* graph = nullptr;  // the group's standalone graph
  NodeId anchor = -1;            // the anchor node in `graph`
  te::Tensor anchor_output;      // the anchor's (first) output tensor
  // The group's outputs: anchor_output itself, or the last tensors of the elementwise chain that
  // reads it. Everything between anchor_output and these is injective and may be inlined.
  std::vector<te::Tensor> outputs;
  // Kernel inputs (placeholders) in argument order, and which of them hold a constant known at
  // build time (weights, biases) that a schedule may pre-pack.
  std::vector<te::Tensor> inputs;
  std::vector<bool> input_is_constant;
  codegen::TargetSpec target;
  int num_threads = 1;
  // Tuned knob values by operator signature; null: default schedule, no log.
  const tune::TuningLog* tuning = nullptr;
};

// A scheduled anchor group.
struct ScheduledGroup {
  te::Schedule schedule;
  // `pack` stages whose inputs are all constants: the backend computes them once when it builds
  // the kernel (te::lower_pack) and passes them as arguments instead of their sources.
  std::vector<te::Tensor> prepacked;
};
using ScheduleFn = std::function<absl::StatusOr<ScheduledGroup>(const AnchorGroup& group)>;

struct TeOpDef {
  ComputeFn compute;
  // Set for anchor operators (out-elementwise-fusable: conv, dense, matmul, ...); empty for
  // injective and reduction operators, which the default schedule handles.
  ScheduleFn schedule;
};

class TeOpRegistry {
 public:
  // Replaces an earlier definition of the same operator.
  void add(std::string op, TeOpDef def) { defs_[std::move(op)] = std::move(def); }
  const TeOpDef* find(const std::string& op) const {
    auto it = defs_.find(op);
    return it == defs_.end() ? nullptr : &it->second;
  }
  std::vector<std::string> ops() const {
    std::vector<std::string> names;
    for (const auto& [name, def] : defs_) names.push_back(name);
    return names;
  }

 private:
  std::map<std::string, TeOpDef> defs_;
};

// Registration, one function per family (each in its own file under lib/te_ops/).
// Convolutions (Conv 1-D/2-D incl. grouped and depthwise; direct and blocked NCHWc schedules)
// and Dense/MatMul/Gemm/batched MatMul, with tunable schedules. The dense computes pack their
// weight for the register tiles of `target` (AnchorGroup::target must then be the same).
void register_conv_ops(TeOpRegistry& r);
void register_dense_ops(TeOpRegistry& r, const codegen::TargetSpec& target);
// Everything else of the foundation's operator set: elementwise, broadcast, reduction,
// injective/layout, pooling, softmax, layer norm, conv-transpose.
void register_elementwise_ops(TeOpRegistry& r);  // activations, arithmetic, comparisons, Cast
void register_injective_ops(TeOpRegistry& r);     // reshapes, Transpose, Concat, Slice, Gather, Pad
void register_reduction_ops(TeOpRegistry& r);
void register_resize_op(TeOpRegistry& r);  // Resize: nearest and linear
void register_nn_misc_ops(TeOpRegistry& r);
// Operators ONNX coverage added: math and logic (lib/te_ops/math_ops.cpp), Trilu and the
// other index-computed operators (lib/te_ops/indexing_ops.cpp).
void register_math_ops(TeOpRegistry& r);
void register_indexing_ops(TeOpRegistry& r);
void register_loss_ops(TeOpRegistry& r);
void register_attention_op(TeOpRegistry& r);  // Attention on f32
void register_norm_extra_ops(TeOpRegistry& r);  // Hardmax, LpNormalization
// MeanVarianceNormalization, GroupNormalization, LRN, GlobalMaxPool
void register_norm_window_ops(TeOpRegistry& r);
void register_qlinear_matmul_ops(TeOpRegistry& r);  // MatMulInteger, QLinearMatMul (8-bit)
void register_tensor_scatter_op(TeOpRegistry& r);    // TensorScatter (linear and circular)
void register_det_op(TeOpRegistry& r);               // Det of matrices up to 4 x 4
void register_batch_norm_training_op(TeOpRegistry& r);  // BatchNormalizationTraining (f32)
void register_rotary_op(TeOpRegistry& r);       // RotaryEmbedding
void register_conv_integer_op(TeOpRegistry& r);  // ConvInteger, QLinearConv (u8/i8)
void register_gather_nd_op(TeOpRegistry& r);     // GatherND
void register_scatter_ops(TeOpRegistry& r);      // ScatterElements, ScatterND
void register_cumulative_ops(TeOpRegistry& r);   // CumSum, CumProd
// BitwiseAnd/Or/Xor/Not, BitShift, BitCast
void register_bitwise_ops(TeOpRegistry& r);
// QuantizeLinear, DequantizeLinear (per tensor and per axis), DynamicQuantizeLinear on f32.
void register_quantize_ops(TeOpRegistry& r);
void register_grid_sample_op(TeOpRegistry& r);  // GridSample  // NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss

// A registry with every family registered, for code compiled for `target`.
TeOpRegistry default_te_ops(const codegen::TargetSpec& target = codegen::TargetSpec::host());

}  // namespace collage::te_ops
