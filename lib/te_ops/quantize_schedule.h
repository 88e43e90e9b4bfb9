// The schedule of DynamicQuantizeLinear's group (three outputs, which the default schedule leaves
// as plain loops).
#pragma once

#include "absl/status/statusor.h"
#include "collage/te_ops.h"

namespace collage::te_ops {

// The partial min/max reductions read x once, in order, a vector of its last axis at a time, the
// scale and zero point are computed once, and the quantized output is a vectorized loop. One
// task: a kernel's parallel loop must be its outermost statement, and the quantization needs the
// whole tensor's range first. Large tensors do not come here: the pass pipeline splits their
// node into kernels that each run on every thread (passes/split_dynamic_quantize.h).
absl::StatusOr<ScheduledGroup> schedule_dynamic_quantize(const AnchorGroup& group);

}  // namespace collage::te_ops
