// BuildTracker: evaluations forwarded, their placements' groups noted as built.
#include "placement/build_tracker.h"

namespace collage {

absl::StatusOr<double> BuildTracker::latency_ms(const Placement& p) {
  absl::StatusOr<double> ms = inner_.latency_ms(p);
  if (ms.ok())
    for (const PlacedGroup& g : p.groups) built_.insert({g.nodes, g.backend});
  return ms;
}

}  // namespace collage
