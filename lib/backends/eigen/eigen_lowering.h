// Lowering of a group of graph nodes to one Eigen kernel (entry, parameters, constants). The
// same code answers pattern checks (can Eigen run this match?) and builds kernels, so a group
// that passes its check always builds.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/graph.h"
#include "eigen_params.h"

namespace collage::eigen {

// Maps the values a kernel reads to kernel operands: a constant of the graph becomes a kernel
// constant, any other value the argument of its position in `inputs`.
class OperandMap {
 public:
  // `materialize` false: constants derived from others (transposed, scaled) are not computed,
  // only counted; enough for a pattern check.
  OperandMap(const Graph& g, std::vector<ValueId> inputs, bool materialize)
      : g_(g), inputs_(std::move(inputs)), materialize_(materialize) {}

  // InvalidArgument when v is neither a constant nor one of the inputs (a value computed inside
  // the group other than the chain's running value).
  absl::StatusOr<rt_eigen::OperandRef> ref(ValueId v);
  // A constant computed from the graph's (e.g. pre-transposed weights); `make` runs only when
  // materializing.
  rt_eigen::OperandRef derived_constant(const std::function<Tensor()>& make);
  bool is_constant(ValueId v) const { return g_.constant_of(v) != nullptr; }

  std::vector<Tensor> take_constants() { return std::move(constants_); }

 private:
  const Graph& g_;
  std::vector<ValueId> inputs_;
  bool materialize_;
  std::map<ValueId, uint32_t> constant_index_;
  std::vector<Tensor> constants_;
};

struct LoweredKernel {
  std::string entry;
  std::vector<uint8_t> params;
  std::vector<Tensor> constants;
};

// Lowers `nodes` of g (in topological order: an anchor operator, then a chain of elementwise
// operators each reading the previous one's output) reading `inputs` from outside. Errors say
// why Eigen cannot run the group (unsupported operator, attribute, dtype or broadcast).
absl::StatusOr<LoweredKernel> lower_group(const Graph& g, const std::vector<NodeId>& nodes,
                                          const std::vector<ValueId>& inputs, bool materialize);

// Operator names the Eigen backend runs as elementwise steps.
const std::vector<std::string>& unary_op_names();
const std::vector<std::string>& binary_op_names();

// --- Shared by the lowering files ---

// Builds the elementwise program that runs on an output of `shape`.
class ProgramBuilder {
 public:
  ProgramBuilder(const Graph& g, OperandMap& operands, Shape shape) : g_(g), operands_(operands) {
    program_.shape = std::move(shape);
  }

  // A step reading `operand`, numpy-broadcast to the output shape (it must not grow it).
  absl::Status add_operand_step(const Node& node, rt_eigen::EwOp op, ValueId operand,
                                bool operand_first, float p0 = 0.f);
  // A step reading `ref` with explicit strides over the output dimensions.
  void add_strided_step(rt_eigen::EwOp op, rt_eigen::OperandRef ref, std::vector<int64_t> strides,
                        float p0 = 0.f);
  // The step computing elementwise node `node` from the running value, which is its input
  // `main_input` (its other input, if any, is the operand).
  absl::Status add_node(const Node& node, int main_input);
  // Appends the chain `nodes` (each reads the previous value, the first reads `main`).
  absl::Status add_chain(const std::vector<NodeId>& nodes, ValueId main);

  rt_eigen::EwProgram take() { return std::move(program_); }

 private:
  const Graph& g_;
  OperandMap& operands_;
  rt_eigen::EwProgram program_;
};

// Errors name the node: "eigen: MatMul 'mm1': ...".
absl::Status unsupported(const Node& node, std::string_view why);
// OK when every input and output of `node` that is present has dtype f32.
absl::Status require_f32(const Node& node, const Graph& g);

absl::StatusOr<LoweredKernel> lower_matmul(const Graph& g, const Node& node,
                                           const std::vector<NodeId>& chain, OperandMap& ops);
absl::StatusOr<LoweredKernel> lower_gemm(const Graph& g, const Node& node,
                                         const std::vector<NodeId>& chain, OperandMap& ops);
absl::StatusOr<LoweredKernel> lower_conv(const Graph& g, const Node& node,
                                         const std::vector<NodeId>& chain, OperandMap& ops);
absl::StatusOr<LoweredKernel> lower_elementwise(const Graph& g, const Node& node,
                                                const std::vector<NodeId>& chain, OperandMap& ops);
absl::StatusOr<LoweredKernel> lower_reduce(const Graph& g, const Node& node, OperandMap& ops);
absl::StatusOr<LoweredKernel> lower_softmax(const Graph& g, const Node& node, OperandMap& ops);

}  // namespace collage::eigen
