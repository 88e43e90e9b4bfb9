// The part of a compile's time budget the placement leaves to building the artifact: the kernels
// the placement's measurement did not build, the backends' records of them, the executors'
// measurement (bounded by its own share) and the write of the constants.
#pragma once

#include "collage/backend.h"
#include "collage/placement.h"

namespace collage {

// The share of the budget (PlacementOptions::time_budget_s) kept for building the artifact.
inline constexpr double kBuildShare = 0.1;
// What writing an artifact's constants to disk takes, about (BERT-base's 416 MiB in 1.4-1.6 s,
// GPT-2's 620 MiB in 2.0 s on the AVX2 host, bench/RESULTS.md).
inline constexpr double kWriteBytesPerSecond = 256.0 * (1 << 20);
// Seconds writing `constant_bytes` of constants to disk takes, about.
inline double write_seconds(double constant_bytes) {
  return constant_bytes / kWriteBytesPerSecond;
}
// What recording constants into an artifact takes, about, where the openvino backend holds them:
// its record serializes the region's model and weights, exports the compiled region and finds
// the weights in the export (GPT-2's 620 MiB region on the AVX2 host: 2.1 + 2.5 + 1.1 s in a quiet
// single:openvino compile; 8.4 s as a default compile's whole build step). Since the record
// writes into reserved strings (ov_module.cpp, StringSink) serializing took 0.6 s and exporting
// 1.0 s; the whole build step was not timed again, so the rate stays the one measured before.
// The other backends' records hand their constants over.
inline constexpr double kRegionRecordBytesPerSecond = 80.0 * (1 << 20);

// Seconds of `options.time_budget_s` kept from the placement of a model with `constant_bytes` of
// constants: kBuildShare of it, or what writing the constants and, where the openvino backend
// takes part (registered, among options.backends, not ruled out by a single:OTHER strategy),
// recording them would take when that is more; at most half the budget.
double build_reserve_s(const BackendRegistry& backends, const PlacementOptions& options,
                       double constant_bytes);

}  // namespace collage
