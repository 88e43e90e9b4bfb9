// The state behind te::Schedule: one StageData per tensor with its loop relations, loop kinds and
// attachment; read by lowering.
#pragma once

#include <map>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "collage/schedule.h"

namespace collage::te::detail {

// parent -> (outer, inner). Exactly one of factor (inner extent) and nparts (outer extent) is > 0.
struct SplitRel {
  IterVar parent, outer, inner;
  int64_t factor = 0;
  int64_t nparts = 0;
};

// (outer, inner) -> fused, outer = fused / extent(inner), inner = fused % extent(inner).
struct FuseRel {
  IterVar outer, inner, fused;
};

using Relation = std::variant<SplitRel, FuseRel>;

enum class AttachKind : uint8_t { root, inline_, at };

struct IterAttr {
  ForKind kind = ForKind::serial;
  std::string thread_tag;
};

struct StageData {
  Tensor tensor;
  // The compute's definition as this stage sees it (cache_write rewrites it).
  std::vector<IterVar> axis;
  std::vector<IterVar> reduce_axis;
  Expr body;
  std::vector<IterVar> leaf;  // loop order, outermost first
  std::vector<Relation> relations;
  std::map<const IterVarNode*, IterAttr> attrs;
  AttachKind attach = AttachKind::root;
  Tensor attach_stage;  // AttachKind::at: the consumer
  IterVar attach_axis;
  bool is_output = false;
  bool pack = false;

  bool is_placeholder() const { return tensor.op_kind() == OpKind::placeholder; }
  // Root axes: data-parallel then reduction.
  std::vector<IterVar> root_axes() const;
  IterAttr attr(const IterVar& iv) const;
};

struct ScheduleImpl {
  std::vector<Tensor> outputs;
  std::vector<StageData> stages;  // producers before consumers
  absl::Status status;

  // Index of the stage computing `t`, or -1.
  int find(const TensorNode* t) const;
  // Records `message` as an InvalidArgument error unless an error is already recorded.
  void error(const std::string& message);
};

// The tensors a stage reads directly (in order of first appearance).
std::vector<Tensor> stage_inputs(const StageData& s);

}  // namespace collage::te::detail
