// Data of the Eigen backend tests: every epilogue form the backend fuses, and how its groups are
// checked with the shared harness (common/backend_check.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "collage/backend.h"
#include "collage/graph.h"
#include "common/backend_check.h"

namespace collage::testing {

// The Eigen backend of the tests (one for the process).
const Backend& eigen_backend();

// How an Eigen group is checked: claimed whole, built once, compared with the reference relative
// to the output's scale (per element too when `elementwise`), and its record run through the
// runtime module with several task splits and on threads, bit-identically.
GroupCheck eigen_check(bool elementwise = false, float lo = -1.f, float hi = 1.f);

// One elementwise epilogue step applied to value x of shape `shape`: it may add constants or a
// new graph input (named after the step).
struct EpilogueStep {
  std::string name;
  std::function<ValueId(GraphBuilder& b, ValueId x, const Shape& shape)> add;
};
// Every operator the backend fuses as an epilogue, in the forms the backend accepts: unary
// operators (Log, Sqrt and Reciprocal behind Sigmoid/Exp so that their inputs are positive),
// binary operators with a trailing-vector constant, a scalar constant, a full-shape graph input,
// and with the operand first.
std::vector<EpilogueStep> epilogue_steps();
// The activations among them, one step each.
std::vector<EpilogueStep> activation_steps();
// The step of epilogue_steps() called `name` (fails the test when there is none).
EpilogueStep find_step(const std::string& name);
// Adds `steps` after x.
ValueId add_steps(GraphBuilder& b, ValueId x, const Shape& shape,
                  const std::vector<EpilogueStep>& steps);

}  // namespace collage::testing
