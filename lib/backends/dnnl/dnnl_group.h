// What the dnnl backend can run: a group is one anchor operator (Conv, MatMul, a pooling, ...)
// followed by a chain of post-ops applied to its result. The analysis serves both the pattern
// checks (on the model graph) and build (on the group's standalone graph).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/graph.h"
#include "dnnl_params.h"

namespace collage::dnnl_backend {

enum class Anchor : uint8_t {
  conv,
  conv_transpose,
  matmul,
  gemm,
  pool,
  softmax,
  layer_norm,
  eltwise,
  binary,
  concat,
  qconv,    // ConvInteger, QLinearConv
  qmatmul,  // MatMulInteger, QLinearMatMul
  recurrent,    // LSTM, GRU, RNN (dnnl_rnn.cpp); several outputs, no post-ops
  deform_conv,  // DeformConv (dnnl_deform.cpp)
};

// One node of the chain after the anchor, applied to the running value.
struct ChainStep {
  enum class Kind : uint8_t { eltwise, binary, batch_norm };
  Kind kind = Kind::eltwise;
  NodeId node = -1;
  std::vector<rt_dnnl::EltwiseOp> eltwise;  // eltwise: the function(s) (HardSigmoid needs two)
  rt_dnnl::BinaryAlg binary = rt_dnnl::BinaryAlg::add;
  ValueId other = kNoValue;  // binary: the operand that is not the running value
  bool reversed = false;     // binary: Sub or Div with the running value second
};

struct GroupPlan {
  Anchor anchor = Anchor::conv;
  NodeId anchor_node = -1;
  std::vector<ChainStep> chain;
  ValueId output = kNoValue;  // the value the group computes
};

// Checks that `nodes` (ids of `g` in topological order) form a group the dnnl backend runs: one
// anchor followed by post-ops, each reading the previous result once, with every dtype,
// attribute and shape supported. When `standalone`, `g` is the group's own graph and its only
// output must be the chain's result. Errors say what is unsupported, naming the node.
absl::StatusOr<GroupPlan> analyze_group(const Graph& g, const std::vector<NodeId>& nodes,
                                        bool standalone);

// The oneDNN algorithm of Add, Sub, Mul and Div; nullopt for other operators.
std::optional<rt_dnnl::BinaryAlg> binary_alg(std::string_view op);

// The eltwise post-op that undoes swapped operands of Sub (negation) or Div (reciprocal).
rt_dnnl::PostOp inverse_post_op(rt_dnnl::BinaryAlg alg);

// Merges adjacent linear eltwise post-ops. oneDNN 2.6 computes a primitive whose post-ops hold
// two eltwise functions of one kind with different parameters wrongly (both get one parameter
// set): such a list is an InvalidArgument error.
absl::Status normalize_post_ops(std::vector<rt_dnnl::PostOp>& ops);

// The oneDNN function(s) of an elementwise operator node, or nullopt if it has none.
std::optional<std::vector<rt_dnnl::EltwiseOp>> eltwise_ops(const Node& node);

// Spatial geometry of a convolution or pooling window, resolved from ONNX attributes and the
// actual input / output shapes: explicit begin and end pads in oneDNN's convention.
struct WindowGeometry {
  std::vector<int64_t> kernel, strides, dilations, pad_begin, pad_end;
  bool past_end_pad = false;  // ceil_mode: a window reaches past the end pad
};
absl::StatusOr<WindowGeometry> window_geometry(const Graph& g, const Node& node);

// The rank-r form of `shape` broadcast against a result of rank r (leading 1s).
std::vector<int64_t> align_rank(const Shape& shape, size_t r);

// "dnnl: OP 'name': why", an InvalidArgument error.
absl::Status unsupported(const Node& n, std::string_view why);

// The integer contractions (dnnl_group_quant.cpp): ConvInteger and QLinearConv run as a oneDNN
// int8 convolution, MatMulInteger and QLinearMatMul as an int8 matmul with constant weights.
// What oneDNN cannot express is converted here once: the weights' zero point is subtracted (the
// result must fit i8, so u8 weights need a zero point of 128 or so), and the scales become one
// output scale per channel, x_scale * w_scale / y_scale in f32 as the reference computes it.
struct QuantPlan {
  Tensor weights;  // i8, the node's weights less their zero point
  rt_dnnl::QuantParams params;
};
absl::StatusOr<QuantPlan> plan_quant(const Graph& g, const Node& n);
// The node's data input, weight and bias (kNoValue when absent) positions.
struct QuantInputs {
  size_t x = 0, w = 1, bias = SIZE_MAX;
};
QuantInputs quant_inputs(const Node& n);

// Whether oneDNN runs the LSTM, GRU or RNN node `n` (dnnl_rnn.cpp): f32, the default
// activations, no clip, input_forget, peepholes or per-batch sequence lengths. Errors say what is
// unsupported, naming the node.
absl::Status check_recurrent(const Graph& g, const Node& n);
// Whether the dnnl deformable convolution runs the DeformConv node `n` (dnnl_deform.cpp).
absl::Status check_deform_conv(const Graph& g, const Node& n);

}  // namespace collage::dnnl_backend
