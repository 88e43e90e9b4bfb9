// abi_status_code: a module's or plugin's collage_status_code_t as an absl code.
#include "backends/abi_status.h"

#include "collage/runtime.h"

namespace collage {

absl::StatusCode abi_status_code(int32_t rc, absl::StatusCode usual) {
  switch (rc) {
    case COLLAGE_STATUS_INVALID_ARGUMENT:
      return absl::StatusCode::kInvalidArgument;
    case COLLAGE_STATUS_NOT_FOUND:
      return absl::StatusCode::kNotFound;
    case COLLAGE_STATUS_CORRUPT:
      return absl::StatusCode::kDataLoss;
    case COLLAGE_STATUS_UNSUPPORTED:
      return absl::StatusCode::kUnimplemented;
    case COLLAGE_STATUS_KERNEL_FAILED:
    case COLLAGE_STATUS_INTERNAL:
      return absl::StatusCode::kInternal;
    case COLLAGE_STATUS_IO:
      return absl::StatusCode::kUnavailable;
    default:
      return usual;
  }
}

}  // namespace collage
