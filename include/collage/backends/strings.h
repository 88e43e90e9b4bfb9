// The strings backend (CPU): runs ONNX's string operators (StringConcat, StringSplit,
// StringNormalizer, RegexFullMatch, Equal on strings) and ai.onnx.ml's LabelEncoder (every key
// and value type but f16/bf16) as kernels of the strings runtime module (libcollage_rt_strings,
// whose code is linked in, so a model run in process computes what its artifact does). Each such
// node is offered as a group of its own; str values cross between its groups and the caller as
// collage_string_t arrays (include/collage/runtime_module.h, docs/onnx.md "Strings").
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "collage/backend.h"

namespace collage {

inline constexpr std::string_view kStringsBackend = "strings";

// A new strings backend (name "strings", device cpu).
std::unique_ptr<Backend> make_strings_backend();
// Adds make_strings_backend() to `registry`; AlreadyExists when "strings" is registered.
absl::Status register_strings_backend(BackendRegistry& registry);

}  // namespace collage
