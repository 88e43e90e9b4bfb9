// Two-level's comparison deciding the placement.
#include "placement/comparison.h"

#include "absl/strings/str_format.h"

namespace collage {

void adopt_faster_baseline(OptimizeResult& result, const Graph& g, const BackendRegistry& backends,
                           const BaselineOptions& options) {
  std::vector<MeasuredPlacement>& rows = result.compared;
  if (rows.empty() || rows[0].ms < 0) return;
  size_t best = 0;
  for (size_t i = 1; i < rows.size(); ++i)
    if (rows[i].strategy.starts_with("single:") && rows[i].ms >= 0 && rows[i].note.empty() &&
        rows[i].ms < rows[best].ms)
      best = i;
  if (best == 0) return;
  auto single = place_single(g, backends, rows[best].strategy.substr(7), options);
  if (!single.ok()) return;
  const std::string searched = result.chosen_by;
  single->strategy = rows[0].strategy;
  single->estimated_ms = rows[best].ms;
  single->notes = std::move(result.placement.notes);
  single->notes.push_back(absl::StrFormat(
      "chosen: %s, compared at %.3f ms end to end against the search's choice (%s) at %.3f ms",
      rows[best].strategy, rows[best].ms, searched, rows[0].ms));
  result.placement = *std::move(single);
  result.chosen_by = rows[best].strategy;
  MeasuredPlacement search{"graph-level search", rows[0].ms, ""};
  rows[0].ms = rows[best].ms;
  rows[best].note = "the chosen placement";
  rows.insert(rows.begin() + 1, std::move(search));
}

}  // namespace collage
