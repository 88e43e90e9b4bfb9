// The wave scheduler: runs a plan by the wave schedule of its artifact on persistent workers
// (waves::WaveRunner), every kernel's tasks grouped into the schedule's chunks. Results are those
// of the sequential scheduler: the same tasks run, each once, after everything they depend on.
#pragma once

#include <memory>

#include "executor.h"
#include "wave_schedule.h"

namespace collage::rt {

// `schedule` (checked against the plan's kernels, borrowed) drives the runs; a run that finds
// the workers busy with another caller's run goes to `fallback` instead, so concurrent callers
// never wait for each other.
std::unique_ptr<Scheduler> make_wave_scheduler(const waves::WaveSchedule* schedule,
                                               std::unique_ptr<Scheduler> fallback);

}  // namespace collage::rt
