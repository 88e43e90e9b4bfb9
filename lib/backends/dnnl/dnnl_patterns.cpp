// The dnnl backend's patterns: each anchor operator, optionally followed by a chain of post-ops
// for the anchors oneDNN fuses them into; every match passes the group analysis as its check.
#include "backends/dnnl/dnnl_patterns.h"

#include "backends/dnnl/dnnl_group.h"

namespace collage::dnnl_backend {
namespace {

// Longest post-op chain a pattern offers (e.g. BatchNormalization, Add, Relu and one more).
constexpr int kMaxPostOps = 4;

std::vector<std::string> eltwise_op_names() {
  return {"Relu",        "LeakyRelu", "Sigmoid", "Tanh", "Gelu", "Clip", "HardSwish",
          "HardSigmoid", "Exp",       "Abs",     "Sqrt", "Log",  "Neg",  "Reciprocal"};
}

Pattern post_op(const Pattern& x) {
  return is_op(eltwise_op_names())(x) | is_op("Add", "Sub", "Mul", "Div")(x, wildcard()) |
         is_op("Sub", "Div")(wildcard(), x) |
         is_op("BatchNormalization")(x, is_constant(), is_constant(), is_constant(), is_constant());
}

Pattern with_post_ops(Pattern p, int n) {
  for (int i = 0; i < n; ++i) p = p.optional(post_op);
  return p;
}

// The op with two or three inputs (the third optional, e.g. a bias).
Pattern two_or_three(const std::string& op, const Pattern& second) {
  return is_op(op)(wildcard(), second, wildcard()) | is_op(op)(wildcard(), second);
}

absl::Status check(const Graph& g, const PatternMatch& m) {
  return analyze_group(g, m.nodes.to_vector(), /*standalone=*/false).status();
}

}  // namespace

void add_dnnl_patterns(Backend& b) {
  b.add_pattern("dnnl.conv", with_post_ops(two_or_three("Conv", is_constant()), kMaxPostOps),
                check);
  b.add_pattern("dnnl.conv_transpose",
                with_post_ops(two_or_three("ConvTranspose", is_constant()), kMaxPostOps), check);
  b.add_pattern("dnnl.matmul", with_post_ops(is_op("MatMul")(wildcard(), wildcard()), kMaxPostOps),
                check);
  b.add_pattern("dnnl.gemm", with_post_ops(two_or_three("Gemm", wildcard()), kMaxPostOps), check);
  b.add_pattern(
      "dnnl.binary",
      with_post_ops(is_op("Add", "Sub", "Mul", "Div")(wildcard(), wildcard()), kMaxPostOps - 1),
      check);
  b.add_pattern("dnnl.pool", is_op("MaxPool", "AveragePool", "GlobalAveragePool")(wildcard()),
                check);
  b.add_pattern("dnnl.softmax", is_op("Softmax", "LogSoftmax")(wildcard()), check);
  b.add_pattern("dnnl.layer_norm", two_or_three("LayerNormalization", is_constant()), check);
  b.add_pattern("dnnl.eltwise", is_op(eltwise_op_names())(wildcard()), check);
  b.add_pattern("dnnl.concat", is_op("Concat"), check);
  b.add_pattern("dnnl.qconv", is_op("ConvInteger", "QLinearConv"), check);
  b.add_pattern("dnnl.qmatmul", is_op("MatMulInteger", "QLinearMatMul"), check);
  b.add_pattern("dnnl.recurrent", is_op("LSTM", "GRU", "RNN"), check);
  b.add_pattern("dnnl.deform_conv", is_op("DeformConv"), check);
}

}  // namespace collage::dnnl_backend
