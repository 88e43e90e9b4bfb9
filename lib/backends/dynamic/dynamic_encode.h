// A node as a kernel of the dynamic module: its parameters (rt_dynamic::DynParams) and
// constants; for If, Loop and Scan, their bodies as the module's nested plans (dyn_body.h).
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "collage/graph.h"
#include "dyn_params.h"

namespace collage {

// Whether the module has a kernel for `node` of `g` (for control flow: for every node of its
// bodies, at any depth); an error naming the node that has none otherwise.
absl::Status check_encodable(const Graph& g, const Node& node);

// The parameters of `node` of `g` run as a kernel taking `kernel_inputs` and making
// `kernel_outputs`. A constant operand becomes a kernel constant appended to `constants`
// (`constants_as_inputs`: it must be among `kernel_inputs` instead, as in a body, whose constants
// are values of the body); the constants of control-flow bodies are appended there too.
absl::StatusOr<rt_dynamic::DynParams> encode_node(const Graph& g, const Node& node,
                                                  const std::vector<ValueId>& kernel_inputs,
                                                  const std::vector<ValueId>& kernel_outputs,
                                                  std::vector<Tensor>* constants,
                                                  bool constants_as_inputs);

// dynamic_bodies.cpp: check_encodable for each node of an If's, Loop's or Scan's bodies, and the
// lists and encoded bodies of such a node (the output slots of `kernel_outputs` last).
absl::Status check_bodies_encodable(const Node& node);
absl::Status encode_control_flow(const Node& node, const std::vector<ValueId>& kernel_outputs,
                                 std::vector<Tensor>* constants, rt_dynamic::DynParams* p);

}  // namespace collage
