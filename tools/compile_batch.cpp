// The batch range of the command line and the summary of a dynamic-batch compile.
#include "compile_batch.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "core/str_cat.h"

namespace collage::cli {

absl::StatusOr<BatchRange> batch_range(const ModelArgs& model, const std::string& sizes) {
  BatchRange range;
  for (const auto& [name, r] : model.ranges) {
    if (range.max && (r.min != range.min || r.max != range.max))
      return absl::InvalidArgumentError(
          str_cat("--input-shape ", name, ": batch range ", r.min, "..", r.max, ", another input "
                  "has ", range.min, "..", range.max, "; every batched input shares one range"));
    range.min = r.min;
    range.max = r.max;
    range.axes[name] = r.axis;
  }
  if (!range.max && !sizes.empty())
    return absl::InvalidArgumentError(
        str_cat("--batch-sizes '", sizes, "' needs a batch range (--input-shape x=1..32x...)"));
  for (absl::string_view part : absl::StrSplit(sizes, ',', absl::SkipEmpty())) {
    int64_t b = 0;
    if (!absl::SimpleAtoi(part, &b))
      return absl::InvalidArgumentError(
          str_cat("--batch-sizes '", sizes, "': '", part, "' is not a number"));
    range.sizes.push_back(b);
  }
  return range;
}

std::string batch_summary(const std::string& model, const CompileResult& compiled) {
  std::string out = absl::StrFormat("%s: batches %d..%d, %d plans\n", model, compiled.batch_min,
                                    compiled.batch_max, compiled.batches.size());
  TextTable t({true, true, false, false});
  t.add({"batch", "groups", "backends", "placement"});
  for (const BatchPlan& b : compiled.batches) {
    const Placement& p = b.optimized.placement;
    std::string used;
    for (const PlacedGroup& g : p.groups)
      if (used.find(g.backend) == std::string::npos)
        used += str_cat(used.empty() ? "" : ",", g.backend);
    t.add({std::to_string(b.batch), std::to_string(p.groups.size()), used, p.strategy});
  }
  out += t.render(2);
  out += compiled.padded
             ? "  a batch without a plan runs on the next larger one, padded with zero rows (the "
               "graph keeps batch rows apart)\n"
             : str_cat("  ", compiled.batch_note, "\n");
  return out;
}

}  // namespace collage::cli
