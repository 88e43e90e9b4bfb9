// The reference executor: runs any graph with the operators' reference kernels. It defines what a
// graph means and is the oracle every backend is tested against.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "collage/graph.h"

namespace collage {

// Runs `g` on `inputs` (one per graph input, in order; types must match exactly, except that an
// input's dynamic dimensions take any size) and returns the graph outputs in order. Nodes with
// data-dependent shapes are sized as they run (see kDynamicDim). Errors name the input or node at fault. Intermediate tensors are freed
// as soon as their last reader has run.
absl::StatusOr<std::vector<Tensor>> run_reference(const Graph& g, const std::vector<Tensor>& inputs);

// Evaluates one operator on concrete inputs (absent optional inputs are empty tensors): infers
// the output types, allocates the outputs and runs the reference kernel. Used by constant folding.
absl::StatusOr<std::vector<Tensor>> evaluate_op(const OpDef& op, const OpAttrs& attrs,
                                                const std::vector<Tensor>& inputs,
                                                std::string_view node_name, int num_outputs = -1);

}  // namespace collage
