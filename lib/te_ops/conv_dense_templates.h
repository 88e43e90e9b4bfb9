// The schedule templates of groups anchored at conv and dense operators, and the tuning tasks of a
// model: one per distinct operator signature of its Conv, MatMul and Gemm nodes.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/te_ops.h"
#include "tune/template.h"

namespace collage::te_ops {

// The template of `group` when its anchor is a Conv, MatMul or Gemm built by this library's
// computes; InvalidArgument otherwise.
absl::StatusOr<tune::ScheduleTemplate> anchor_schedule_template(const AnchorGroup& group);

struct TuningTask {
  std::string node;  // the first node with this signature
  int nodes = 0;     // nodes sharing the signature
  AnchorGroup group;  // the anchor alone (no epilogue); refers to the model graph
  tune::ScheduleTemplate schedule;
};

// One task per distinct signature among `graph`'s Conv, MatMul and Gemm nodes, in graph order.
// Nodes the TE library refuses (a 3-D conv, a non-f32 type) are skipped and listed in `skipped`
// with the reason. The tasks refer to `graph`, which must outlive them.
std::vector<TuningTask> conv_dense_tuning_tasks(const Graph& graph,
                                                const codegen::TargetSpec& target,
                                                int num_threads,
                                                std::vector<std::string>* skipped);

}  // namespace collage::te_ops
