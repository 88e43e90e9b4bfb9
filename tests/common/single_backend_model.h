// A test model of the model cache placed on one backend (single:NAME, the rest on the reference
// backend), compiled and run by the in-process executor, against the reference executor on the
// same optimised graph: the whole-model check of the backends' test suites.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "collage/backend.h"

namespace collage::testing {

struct BackendShare {
  size_t on_backend = 0;  // nodes the placement puts on the backend
  size_t total = 0;       // nodes of the optimised graph
};

// Model `name` (load_cached_model) placed with single:`backend` over a registry of the reference
// backend and what `register_backend` adds, compiled, run on the model's recorded inputs; every
// output must be within `tolerance` of its scale from the reference executor's (CHECK). WARNs
// the share of nodes and kernels on the backend and the worst error. nullopt when the cache
// lacks the model (load_cached_model WARNs).
std::optional<BackendShare> check_single_backend_model(
    const std::string& name, std::string_view backend,
    absl::Status (*register_backend)(BackendRegistry&), double tolerance);

}  // namespace collage::testing
