// Shared by the conv and dense schedules: f32 vector lanes of a target, the stage roles of an
// anchor group (the output whose loops are tiled, the reduction computed inside its tiles, the
// injective chain inlined between them), tuned-knob lookup and signature pieces.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/te_ops.h"
#include "tune/template.h"

namespace collage::te_ops::detail {

// f32 elements in the target's widest vector (16 with AVX-512, 8 with AVX2, 4 otherwise).
int f32_lanes(const codegen::TargetSpec& target);

// Vector accumulators a register tile may hold: three quarters of the target's vector registers
// (24 with AVX-512 or NEON, 12 with AVX2), the rest holding one step's weights and broadcasts.
int accumulator_budget(const codegen::TargetSpec& target);

// "f32[1,64,56,56]".
std::string type_signature(DType dtype, const Shape& shape);
inline std::string type_signature(const te::Tensor& t) { return type_signature(t.dtype(), t.shape()); }

// "|target=<cpu>": the part of a template's signature that keys tuning records by the target
// code is compiled for (knobs tuned for 32 registers do not suit 16).
std::string target_signature(const codegen::TargetSpec& target);

// Whether `t` is one of the group's inputs holding a constant.
bool is_constant_input(const AnchorGroup& g, const te::Tensor& t);

// How an anchor group's stages are arranged by its schedule.
struct Epilogue {
  te::Tensor out;  // the stage whose loops are tiled (the group's output); undefined: see below
  te::Tensor acc;  // the reduction, computed inside `out`'s tiles (cache_write'd when out == it)
};

// Inlines every compute stage of `s` that is neither a group output, nor `reduction`, nor one of
// `producers` (the stages the reduction reads: packed layouts, padding), and returns the roles.
// With one group output `out` is that output; with several the reduction cannot sit inside one
// output's tiles, and `out` is left undefined (the caller schedules every stage at the top level,
// serially).
Epilogue plan_epilogue(te::Schedule& s, const AnchorGroup& g, const te::Tensor& reduction,
                       const std::vector<te::Tensor>& producers);

// The group's knobs: the template's defaults, overridden by the tuning log's values for its
// signature when the group has a log that knows it.
tune::Knobs knobs_for(const AnchorGroup& g, const tune::ScheduleTemplate& t);

// A value of `candidates` closest to `want` from below (the smallest one if all are larger).
int64_t pick_at_most(const std::vector<int64_t>& candidates, int64_t want);

// The divisors of n in [1, limit], ascending.
std::vector<int64_t> divisors(int64_t n, int64_t limit);

// `values` filtered to those <= limit, keeping at least the smallest; sorted, unique.
std::vector<int64_t> at_most(std::vector<int64_t> values, int64_t limit);

}  // namespace collage::te_ops::detail
