// Attribute inputs (OpDef::attr_inputs): an operator attribute whose value a node takes from an
// input computed at run time, as ONNX's shape-like inputs are.
#pragma once

#include "collage/graph.h"
#include "collage/op.h"

namespace collage {

// Gives `def` its attribute inputs: raises max_inputs by their number, sets first_attr_input,
// and wraps infer and reference so that they see the attributes set to the inputs' values.
// Called by OpRegistry::add for a def with attr_inputs.
void wrap_attr_inputs(OpDef& def);

// Whether node n takes an attribute from an input (its shapes, or its meaning, then depend on
// values known only at run time, which only backends with dynamic shapes handle).
bool reads_attr_inputs(const Node& n);

}  // namespace collage
