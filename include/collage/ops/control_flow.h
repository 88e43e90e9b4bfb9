// Attribute structs of the control-flow operators If, Loop and Scan, whose bodies are graphs.
// A body reads outer values only through its own graph inputs: the ONNX importer turns the outer
// names a body refers to into extra inputs of the node ("captured" values), appended after the
// operator's own inputs, and into the same number of extra graph inputs of the body, in order.
#pragma once

#include <cstdint>
#include <vector>

#include "collage/attrs.h"

namespace collage {

// If(cond, captured...): runs then_branch or else_branch on the captured values (each branch's
// graph inputs are all of them) and returns that branch's outputs. Where the branches' output
// shapes differ, the node's have dynamic dimensions.
struct IfAttrs : AttrsOf<IfAttrs> {
  GraphAttr then_branch;
  GraphAttr else_branch;
  template <class V>
  void fields(V& v) {
    v.field("then_branch", then_branch);
    v.field("else_branch", else_branch);
  }
};

// Loop(M?, cond?, carried..., captured...): while the trip count M (absent: unbounded) is not
// reached and cond (absent: true) holds, runs body(iteration, cond, carried..., captured...) ->
// (cond, carried..., scan outputs...). Outputs: the final carried values, then each scan output
// stacked over the iterations (a dynamic first dimension unless the iterations are known).
struct LoopAttrs : AttrsOf<LoopAttrs> {
  GraphAttr body;
  int64_t num_captured = 0;
  template <class V>
  void fields(V& v) {
    v.field("body", body);
    v.field("num_captured", num_captured);
  }
};

// Scan(states..., scan inputs..., captured...): for each slice along the scan axes, runs
// body(states..., slices..., captured...) -> (states..., scan output slices...). Outputs: the
// final states, then the scan outputs stacked along their axes. Axes and directions have one
// entry per scan input / output (empty: axis 0, forward; direction 1: from the end).
struct ScanAttrs : AttrsOf<ScanAttrs> {
  GraphAttr body;
  int64_t num_scan_inputs = 0;
  int64_t num_captured = 0;
  std::vector<int64_t> scan_input_axes, scan_input_directions;
  std::vector<int64_t> scan_output_axes, scan_output_directions;
  template <class V>
  void fields(V& v) {
    v.field("body", body);
    v.field("num_scan_inputs", num_scan_inputs);
    v.field("num_captured", num_captured);
    v.field("scan_input_axes", scan_input_axes);
    v.field("scan_input_directions", scan_input_directions);
    v.field("scan_output_axes", scan_output_axes);
    v.field("scan_output_directions", scan_output_directions);
  }
};

}  // namespace collage
