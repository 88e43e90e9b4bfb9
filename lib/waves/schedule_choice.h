// What make_artifact_schedule measures, remembered as a measured choice (MeasuredChoices): the
// kernels' profiles, whether the team kernels were pinned, and the two executors' times, keyed by
// everything the schedule depends on, so that a later compile of the same kernels schedules the
// same waves and prefers the same executor without running anything.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "waves/artifact_schedule.h"

namespace collage::waves {

// The kind of the choice (MeasuredChoices::lookup).
inline constexpr std::string_view kScheduleChoice = "wave-schedule";

struct RememberedSchedule {
  std::vector<KernelProfile> profiles;  // per kernel
  bool teams_pinned = false;            // the beside schedule was kept (Teams::beside)
  bool teams_measured = false;
  double sequential_ms = 0, waves_ms = 0;
  bool waves_preferred = false;  // what `automatic` chose
};

// The key: every kernel's module, entry, parameters (hashed), task count and arguments; the
// tensors and arena; the options that change what is measured or chosen. The device is the
// store's.
std::string schedule_choice_key(const std::vector<ScheduleKernel>& kernels,
                                const std::vector<ScheduleTensor>& tensors, uint64_t arena_bytes,
                                const WaveOptions& options);

std::vector<double> encode_schedule_choice(const RememberedSchedule& s);
// nullopt when `values` do not hold `num_kernels` profiles (a malformed record).
std::optional<RememberedSchedule> decode_schedule_choice(const std::vector<double>& values,
                                                         size_t num_kernels);

}  // namespace collage::waves
