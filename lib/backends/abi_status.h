// The error convention of the runtime-module and plugin ABIs (include/collage/runtime_module.h)
// on the compiler side: the collage_status_code_t a module or plugin returned, as an absl code.
#pragma once

#include <cstdint>

#include "absl/status/status.h"

namespace collage {

// COLLAGE_STATUS_INVALID_ARGUMENT -> kInvalidArgument, NOT_FOUND -> kNotFound, CORRUPT ->
// kDataLoss, UNSUPPORTED -> kUnimplemented, KERNEL_FAILED and INTERNAL -> kInternal, IO ->
// kUnavailable; any other value (an older module's bare nonzero) -> `usual`.
absl::StatusCode abi_status_code(int32_t rc, absl::StatusCode usual);

}  // namespace collage
