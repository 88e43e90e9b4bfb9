// Measured strategy choice: every candidate strategy's program is built at the model's batch size
// and timed by the caller's measurer; the fastest wins, ties going to the earlier candidate.
#include <algorithm>

#include "collage/trees.h"
#include "core/str_cat.h"
#include "frontends/trees/tree_util.h"

namespace collage {

std::vector<TreeStrategyCandidate> default_tree_strategy_candidates() {
  return {{TreeStrategy::fused, "auto"},
          {TreeStrategy::perfect_tree_traversal, ""},
          {TreeStrategy::tree_traversal, ""},
          {TreeStrategy::gemm, ""}};
}

std::string tree_strategy_label(const TreeStrategyCandidate& c) {
  return c.variant.empty() ? std::string(tree_strategy_name(c.strategy))
                           : str_cat(tree_strategy_name(c.strategy), ":", c.variant);
}

absl::StatusOr<TreeStrategyChoice> choose_tree_strategy(
    const Context& ctx, const TreeEnsemble& model, int64_t batch,
    const std::vector<TreeStrategyCandidate>& candidates, const TreeStrategyMeasurer& measure,
    const TreeStrategyChoiceOptions& options) {
  if (candidates.empty())
    return absl::InvalidArgumentError(
        str_cat(model_label(model), ": no candidate tree strategies to choose from"));
  TreeStrategyChoice choice;
  for (const TreeStrategyCandidate& c : candidates) {
    if (c.strategy == TreeStrategy::automatic)
      return absl::InvalidArgumentError(
          str_cat(model_label(model), ": 'auto' is no strategy to measure"));
    TreeStrategyTiming timing{c, -1.0, absl::OkStatus()};
    auto g = build_tree_graph(ctx, model, c.strategy, batch);
    if (!g.ok()) {
      // A strategy the model cannot use (too large, missing-value rule) is skipped with its
      // reason; a malformed model fails every strategy alike.
      if (g.status().code() == absl::StatusCode::kInvalidArgument) return g.status();
      timing.status = g.status();
    } else {
      int64_t largest = 0;
      for (ValueId v = 0; v < static_cast<ValueId>(g->values().size()); ++v)
        largest = std::max<int64_t>(largest, static_cast<int64_t>(g->value(v).type.bytes()));
      if (largest > options.max_value_bytes) {
        timing.status = absl::ResourceExhaustedError(
            str_cat(tree_strategy_label(c), ": a ", largest, "-byte tensor at batch ", batch,
                    " exceeds the ", options.max_value_bytes, "-byte measuring limit"));
      } else {
        auto ms = measure(c, *g);
        if (ms.ok())
          timing.ms = *ms;
        else
          timing.status = ms.status();
      }
    }
    choice.timings.push_back(std::move(timing));
  }
  const TreeStrategyTiming* best = nullptr;
  for (const TreeStrategyTiming& t : choice.timings)
    if (t.status.ok() && (best == nullptr || t.ms < best->ms)) best = &t;
  if (best == nullptr) {
    std::string why;
    for (const TreeStrategyTiming& t : choice.timings)
      why += str_cat(why.empty() ? "" : "; ", tree_strategy_label(t.candidate), ": ",
                     t.status.message());
    return absl::ResourceExhaustedError(str_cat(model_label(model),
                                                ": no tree strategy could be measured at batch ",
                                                batch, " (", why, ")"));
  }
  choice.best = best->candidate;
  return choice;
}

}  // namespace collage
