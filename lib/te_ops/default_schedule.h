// The default schedule of a fused group without an anchor schedule (TVM's injective and
// reduction schedules for CPU): injective intermediates are inlined into their readers, the
// reductions are computed at the output's outer loop (an output that is itself a reduction
// accumulates in a local buffer there), the output's outer axes are fused into one parallel loop
// and its innermost axis (short innermost axes fused first, in groups without reductions) is
// vectorized when it is long enough; reductions whose reads are
// contiguous along their innermost data axis accumulate vectors of it.
//
// Lowering allows one parallel loop nest per kernel and a stage computed at a loop may feed only
// one stage, so the TE computes give each statistic a single reader (see reduction_ops.cpp), and
// a group with several outputs gets no parallel loop.
#pragma once

#include <vector>

#include "collage/target.h"
#include "collage/schedule.h"
#include "collage/te.h"

namespace collage::te_ops {

// How much of the default schedule to apply; lowering falls back to simpler levels when a
// schedule cannot be lowered.
enum class ScheduleLevel {
  full,    // inline, compute_at, parallel outer loop, vectorized inner loop
  serial,  // inline only; every remaining stage a plain loop nest at the top level
  plain,   // nothing inlined
};

struct DefaultScheduleOptions {
  codegen::TargetSpec target;
  int num_threads = 1;
  ScheduleLevel level = ScheduleLevel::full;
};

// A schedule computing `outputs`.
te::Schedule default_schedule(const std::vector<te::Tensor>& outputs,
                              const DefaultScheduleOptions& options);

// True when `t` is a compute whose body is a reduction.
bool is_reduction(const te::Tensor& t);

}  // namespace collage::te_ops
