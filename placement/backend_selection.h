// Which backends take part in a placement, and which strategies name one.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collage/backend.h"
#include "collage/placement.h"

namespace collage {

// The backends taking part: the named ones (all when none are named) plus the fallback, in
// registry order. InvalidArgument naming an unregistered backend.
absl::StatusOr<std::vector<const Backend*>> select_backends(const BackendRegistry& registry,
                                                            const PlacementOptions& options);

// OK for op-level, two-level, greedy and single:NAME with NAME registered.
absl::Status check_strategy(const std::string& s, const BackendRegistry& registry);

}  // namespace collage
