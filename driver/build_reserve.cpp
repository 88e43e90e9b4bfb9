#include "driver/build_reserve.h"

#include <algorithm>
#include <string_view>

#include "collage/backends/openvino.h"

namespace collage {

double build_reserve_s(const BackendRegistry& backends, const PlacementOptions& options,
                       double constant_bytes) {
  const std::string_view ov = kOpenvinoBackend;
  const bool listed =
      options.backends.empty() || std::ranges::find(options.backends, ov) != options.backends.end();
  const bool single_other =
      options.strategy.starts_with("single:") && std::string_view(options.strategy).substr(7) != ov;
  const bool openvino_takes_part = backends.find(ov) && listed && !single_other;
  const double seconds = write_seconds(constant_bytes) +
                         (openvino_takes_part ? constant_bytes / kRegionRecordBytesPerSecond : 0);
  const double budget_s = options.time_budget_s;
  return std::min(std::max(kBuildShare * budget_s, seconds), 0.5 * budget_s);
}

}  // namespace collage
