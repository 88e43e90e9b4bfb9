// The tree strategy in `collage compile`: the summary printed for the driver's choice.
#include "tree_strategy_cli.h"

#include "absl/strings/str_format.h"
#include "core/str_cat.h"

namespace collage::cli {

std::string tree_strategy_summary(const TreeStrategyReport& r) {
  std::string out =
      str_cat("tree strategy", r.node.empty() ? "" : str_cat(" of node '", r.node, "'"),
              " at batch ", r.batch, " (", r.mode, "): ", r.chosen);
  if (r.mode == "measured" && r.note.empty())
    out += absl::StrFormat(", the fastest placed candidate (%d kernels measured, %d costs reused)",
                           r.measured, r.cached);
  out += "\n";
  for (const TreeStrategyTiming& t : r.timings) {
    const std::string label = tree_strategy_label(t.candidate);
    if (t.status.ok())
      out += absl::StrFormat("  %-12s %12.4f ms%s\n", label, t.ms,
                             label == r.chosen ? "  chosen" : "");
    else
      out += absl::StrFormat("  %-12s skipped: %s\n", label, t.status.message());
  }
  if (!r.note.empty()) out += str_cat("  ", r.note, "\n");
  return out;
}

}  // namespace collage::cli
