// Lowering a group (a standalone graph) for the native backend: each node's TE compute from the
// operator library, the anchor's schedule or the default one, and the loop-IR kernel plus the
// pack kernels whose results are computed once at build time.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/target.h"
#include "collage/graph.h"
#include "collage/loop_ir.h"
#include "collage/te_ops.h"

namespace collage::native {

struct LowerOptions {
  codegen::TargetSpec target;
  int num_threads = 1;
  const tune::TuningLog* tuning = nullptr;
};

// One constant argument of the kernel, after the group's inputs and outputs.
struct ConstantArg {
  // A constant of the group read as it is: its value id; else -1.
  ValueId value = kNoValue;
  // A pre-packed tensor: the index of its pack kernel, and the group constants that kernel reads
  // (its arguments, then the packed tensor itself); else -1.
  int pack = -1;
  std::vector<ValueId> pack_inputs;
  TensorType type;
};

struct LoweredGroup {
  te::PrimFunc kernel;             // named after the symbol given to lower_group
  std::vector<te::PrimFunc> packs;  // "<symbol>_pack<i>"
  std::vector<ConstantArg> constants;
  int64_t parallel_extent = 0;  // iterations of the parallel loop; 0 when there is none
  std::string schedule;         // which schedule was used: "anchor <op>", "default", ...
};

// Lowers every node of `group` into one kernel called `symbol`. Errors: InvalidArgument naming
// the node for an operator the registry lacks or a compute that refuses the node; the
// first schedule's lowering error (the anchor's, else the default one's) when no schedule, not
// even the plainest, can be lowered.
absl::StatusOr<LoweredGroup> lower_group(const Graph& group, const te_ops::TeOpRegistry& ops,
                                         const LowerOptions& options, const std::string& symbol);

// OK when the registry builds the node's tensor expression from placeholders of its inputs'
// types (what the fusion rule asks to decide whether the backend supports a node); else the
// compute's InvalidArgument naming the node.
absl::Status check_node_supported(const Graph& g, const Node& node,
                                  const te_ops::TeOpRegistry& ops);

}  // namespace collage::native
