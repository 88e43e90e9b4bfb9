// A schedule template: how to schedule one anchor group for any point of a knob space, with the
// group's canonical operator signature (the tuning log's key) and its useful work.
#pragma once

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "collage/te_ops.h"
#include "collage/knobs.h"

namespace collage::tune {

struct ScheduleTemplate {
  // Canonical operator signature: op, attributes, input shapes and dtypes, e.g.
  // "Conv|x=f32[1,64,56,56]|w=f32[64,64,3,3]|b=f32[64]|group=1|pads=1,1,1,1|...".
  std::string signature;
  double flops = 0;  // floating-point operations of one run (2 per multiply-add)
  KnobSpace space;
  Knobs defaults;  // the default schedule's knobs (shape- and target-derived)
  // Schedules the group with `knobs` (values outside the space are clamped or refused with
  // InvalidArgument).
  std::function<absl::StatusOr<te_ops::ScheduledGroup>(const Knobs& knobs)> apply;
};

}  // namespace collage::tune
