// The tuner: searches a schedule template's knob space by measurement under a time budget
// (the default configuration first, then random samples, then mutations of the best ones), and
// the measurer that JIT-compiles and times a configuration.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "collage/thread_pool.h"
#include "collage/te_ops.h"
#include "tune/template.h"

namespace collage::tune {

struct SearchOptions {
  double budget_s = 10;   // wall-clock seconds for one template; the search stops after it
  int max_trials = 1000;  // configurations measured at most
  uint64_t seed = 1;
  int population = 6;     // best configurations kept as parents for mutation
  double explore = 0.25;  // chance that a trial after the first samples the space at random
};

// Time of one run of a configuration in milliseconds, or the reason it cannot run (a schedule
// the lowering refuses, a compile error).
using MeasureFn = std::function<absl::StatusOr<double>(const Knobs& knobs)>;

struct SearchResult {
  Knobs best;             // the defaults when no configuration ran
  double best_ms = 0;     // 0 when no configuration ran
  double default_ms = 0;  // the default configuration's time (0 if it failed)
  int trials = 0;         // configurations measured (successful or not)
  int failed = 0;
  double seconds = 0;  // wall-clock time spent
};

// Called after each trial with the trial count and the best time so far (ms; 0 before the first
// success).
using TrialFn = std::function<void(int trials, double best_ms)>;

// Deterministic for a given seed and given measurements: the sequence of configurations depends
// only on them (and on the budget, which is checked between trials).
SearchResult search(const ScheduleTemplate& t, const MeasureFn& measure,
                    const SearchOptions& options, const TrialFn& on_trial = nullptr);

struct MeasureOptions {
  int tasks = 0;            // tasks per kernel call; 0: the group's num_threads
  int min_runs = 3;         // runs timed at least (after one warm-up run)
  double min_time_ms = 20;  // and for at least this long
};

// A MeasureFn for `group`: applies the knobs, JIT-compiles the kernel, binds random inputs and
// returns the median run time on `pool` (may be null: runs on the calling thread).
MeasureFn jit_measurer(const te_ops::AnchorGroup& group, const ScheduleTemplate& t,
                       ThreadPool* pool, const MeasureOptions& options = {});

}  // namespace collage::tune
