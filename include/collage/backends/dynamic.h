// The dynamic backend (CPU): runs the nodes whose shapes are known only at run time (NonZero,
// NonMaxSuppression, Unique, and what follows their outputs) as kernels of the dynamic runtime
// module (libcollage_rt_dynamic, whose code is linked in, so a model run in process computes what
// its artifact does). Each such node whose operator the module has is offered as a group of its
// own; nodes with static shapes are left to the other backends. Operators: NonZero,
// NonMaxSuppression, Unique, Gather, Slice, Squeeze, Unsqueeze, Reshape, Transpose, Concat, Cast,
// Identity, Add, Sub, Mul, Div, Greater, Less, Equal, Relu, Sigmoid, Exp, Neg, Abs, Sqrt.
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "collage/backend.h"

namespace collage {

inline constexpr std::string_view kDynamicBackend = "dynamic";

// A new dynamic backend (name "dynamic", device cpu).
std::unique_ptr<Backend> make_dynamic_backend();
// Adds make_dynamic_backend() to `registry`; AlreadyExists when "dynamic" is registered.
absl::Status register_dynamic_backend(BackendRegistry& registry);

}  // namespace collage
