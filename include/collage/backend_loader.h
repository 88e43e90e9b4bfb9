// Loading a user-defined backend from a shared library that implements the C ABI of
// include/collage/backend_plugin.h.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "collage/backend.h"

namespace collage {

// dlopens `path`, checks its collage_backend_v1 table and returns it as a Backend (register it
// on a BackendRegistry like any other). The library stays loaded while the backend or any kernel
// it built is alive. Errors (InvalidArgument) name the path and, once known, the plugin: a file
// that does not load, a missing entry symbol, a table with a wrong struct_size or abi_version,
// missing callbacks, or a pattern that does not parse. Kernel build or run failures reported by
// the plugin, and kernels whose outputs disagree with the group's types, become errors of build
// or run naming the plugin.
absl::StatusOr<std::unique_ptr<Backend>> load_backend_plugin(const std::string& path);

}  // namespace collage
