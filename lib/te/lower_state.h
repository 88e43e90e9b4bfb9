// State shared by the lowering steps (inlining, bounds inference, loop-nest construction).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "collage/loop_ir.h"
#include "schedule_impl.h"

namespace collage::te::detail {

struct StageInfo {
  const StageData* data = nullptr;
  bool needed = false;    // part of what this function computes or reads
  bool is_input = false;  // read from a parameter, not computed (placeholders, prepacked stages)
  Expr body;              // the stage's body with inlined stages substituted
  std::vector<Tensor> reads;  // tensors `body` reads (after inlining)

  // Bounds: the region of each data-parallel axis this stage computes per execution of its
  // nest (global coordinates; `min` may use loops of the stages it is attached in).
  std::vector<Expr> min;
  std::vector<int64_t> extent;
  std::map<const IterVarNode*, int64_t> iv_extent;  // every iteration axis of the stage
  // Root axis variable -> its value in terms of the leaf loop variables.
  VarMap root_value;

  Buffer buffer;
  bool is_param = false;
  std::vector<int> attached;  // stages computed at one of this stage's loops
};

struct LowerState {
  const ScheduleImpl* sched = nullptr;
  std::string func_name;
  std::vector<StageInfo> stages;  // parallel to sched->stages

  int index_of(const TensorNode* t) const { return sched->find(t); }
  // Ranges of the loops of stage `index` and of the stages it is (transitively) computed in.
  VarRanges enclosing_ranges(int index) const;
  StageInfo& info(const TensorNode* t) { return stages[index_of(t)]; }
  absl::Status error(const std::string& message) const;
};

// Substitutes inlined stages into the bodies of needed, computed stages and records what each
// reads.
void inline_stages(LowerState& st);

// Infers the region (min, extent) of every computed stage, consumers first, and the extents of
// all iteration axes and the root-axis values. Errors for attachments it cannot honour.
absl::Status infer_bounds(LowerState& st);

// The loop nest of stage `index` (with the stages attached to it nested inside), reading tensors
// through ProducerLoad.
absl::StatusOr<Stmt> build_stage_nest(LowerState& st, int index);

}  // namespace collage::te::detail
