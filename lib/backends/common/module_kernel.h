// A Kernel backed by a runtime module (include/collage/runtime_module.h): the compiler builds the
// kernel record, then instantiates it through the same module code the runtime uses, so what is
// measured at compile time is exactly what runs in an artifact.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "collage/graph.h"
#include "collage/kernel.h"
#include "collage/runtime_module.h"

namespace collage {

// Instantiates `record` with `module` for the argument types of `group` (its inputs then its
// outputs). The record's constants are kept alive by the kernel. Errors carry the module's
// message.
absl::StatusOr<std::unique_ptr<Kernel>> make_module_kernel(const collage_rt_module_v1_t* module,
                                                           KernelRecord record,
                                                           const Graph& group);

// The argument descriptors of a standalone group graph: inputs, then outputs.
std::vector<TensorType> group_argument_types(const Graph& group);

}  // namespace collage
