// BuildTracker: the kernels of a compile that an end-to-end evaluation built (kept for the
// artifact: the native backend's code cache, the kernel shelf), so that what building a
// placement's kernels still costs can be predicted and charged to the budget before it is spent.
// A kernel is its group, its backend and the layouts of its boundary: an evaluation builds each
// group with the layouts assign_layouts gives it among the placement's neighbours, and the same
// group between other neighbours (blocked where it was plain) is other code, compiled again
// (DenseNet-121 on an AVX2 target: of the 192 native kernels one evaluation built, 113 differed
// from a measured candidate only in their boundary layouts).
#pragma once

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "collage/executor.h"
#include "collage/placement.h"

namespace collage {

// The values on the boundary of group `nodes` of `g` (read from outside it, or written and read
// outside it or a graph output) that `layouts` (one per value of `g`; empty: all plain) keep
// channel-blocked, in increasing order: two builds of one group on one backend compile the same
// kernel exactly when these agree.
std::vector<ValueId> blocked_boundary(const Graph& g, const NodeSet& nodes,
                                      const std::vector<Layout>& layouts);

// A PlacementEvaluator that evaluates through `inner` (borrowed) and notes the kernels of every
// placement it evaluated successfully, their layouts those assign_layouts gives them (`ctx`,
// `backends` and `g` borrowed; `c_block` the resolved channel block, 0: every value plain).
class BuildTracker : public PlacementEvaluator {
 public:
  BuildTracker(PlacementEvaluator& inner, const Context& ctx, const BackendRegistry& backends,
               const Graph& g, int32_t c_block)
      : inner_(inner), ctx_(ctx), backends_(backends), g_(g), c_block_(c_block) {}

  absl::StatusOr<double> latency_ms(const Placement& p) override;

  // Whether an evaluation built group `nodes` on `backend` with the blocked boundary `boundary`
  // (blocked_boundary).
  bool built(const NodeSet& nodes, const std::string& backend,
             const std::vector<ValueId>& boundary) const {
    return built_.count({nodes, backend, boundary}) > 0;
  }
  // Whether an evaluation built group `nodes` on `backend`, whatever its boundary's layouts.
  bool built(const NodeSet& nodes, const std::string& backend) const {
    auto it = built_.lower_bound({nodes, backend, {}});
    return it != built_.end() && std::get<0>(*it) == nodes && std::get<1>(*it) == backend;
  }

 private:
  PlacementEvaluator& inner_;
  const Context& ctx_;
  const BackendRegistry& backends_;
  const Graph& g_;
  int32_t c_block_;
  std::set<std::tuple<NodeSet, std::string, std::vector<ValueId>>> built_;
};

}  // namespace collage
