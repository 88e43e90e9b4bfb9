// Which backends take part in a placement, and which strategies name one.
#include "placement/backend_selection.h"

#include <algorithm>

#include "core/str_cat.h"

namespace collage {

absl::StatusOr<std::vector<const Backend*>> select_backends(const BackendRegistry& registry,
                                                            const PlacementOptions& options) {
  if (!registry.find(options.fallback))
    return absl::InvalidArgumentError(
        str_cat("fallback backend '", options.fallback, "' is not registered"));
  for (const std::string& name : options.backends) {
    if (registry.find(name)) continue;
    std::string known;
    for (const Backend* b : registry.all()) known += str_cat(known.empty() ? "" : ", ", b->name());
    return absl::InvalidArgumentError(
        str_cat(registry.not_registered(name), " (registered: ", known, ")"));
  }
  std::vector<const Backend*> out;
  for (const Backend* b : registry.all()) {
    const bool named = options.backends.empty() ||
                       std::find(options.backends.begin(), options.backends.end(), b->name()) !=
                           options.backends.end();
    if (named || b->name() == options.fallback) out.push_back(b);
  }
  return out;
}

absl::Status check_strategy(const std::string& s, const BackendRegistry& registry) {
  if (s == "op-level" || s == "two-level" || s == "greedy") return absl::OkStatus();
  if (s.starts_with("single:") && s.size() > 7) {
    if (registry.find(s.substr(7))) return absl::OkStatus();
    return absl::InvalidArgumentError(
        str_cat("strategy '", s, "': ", registry.not_registered(s.substr(7))));
  }
  return absl::InvalidArgumentError(
      str_cat("unknown placement strategy '", s,
              "' (expected op-level, two-level, greedy or single:NAME)"));
}

}  // namespace collage
