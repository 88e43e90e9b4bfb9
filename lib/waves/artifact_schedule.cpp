// make_artifact_schedule: dependencies, profiles, Algorithm 1, then the executors measured over
// one run's buffers (an arena, inputs and outputs of the artifact's types).
#include "waves/artifact_schedule.h"

#include <algorithm>
#include <new>
#include <thread>

#include "waves/executor_measure.h"
#include "waves/schedule_choice.h"
#include "waves/kernel_profile.h"

namespace collage::waves {
namespace {

std::vector<KernelAccess> accesses(const std::vector<ScheduleKernel>& kernels) {
  std::vector<KernelAccess> a;
  for (const ScheduleKernel& k : kernels) a.push_back({k.reads, k.writes});
  return a;
}

// The schedule made from remembered measurements, as make_artifact_schedule made it from them.
ScheduleResult replay(const RememberedSchedule& m, const std::vector<std::vector<uint32_t>>& deps,
                      const SchedulerOptions& so, Executor preferred, ExecutorChoice executor) {
  SchedulerOptions chosen = so;
  if (m.teams_pinned) chosen.teams = SchedulerOptions::Teams::beside;
  ScheduleResult r = schedule_waves(m.profiles, deps, chosen);
  r.teams_measured = m.teams_measured;
  r.schedule.sequential_ms = m.sequential_ms;
  r.schedule.waves_ms = m.waves_ms;
  r.schedule.preferred = executor == ExecutorChoice::automatic
                             ? (m.waves_preferred ? Executor::waves : Executor::sequential)
                             : preferred;
  return r;
}

struct ArenaDeleter {
  void operator()(uint8_t* p) const { ::operator delete[](p, std::align_val_t{64}); }
};

}  // namespace

std::vector<uint32_t> dataflow_waves(const std::vector<ScheduleKernel>& kernels,
                                     size_t num_tensors) {
  // Every tensor its own resource: only the dataflow orders the kernels.
  return wave_levels(kernel_dependencies(accesses(kernels), std::vector<TensorSpan>(num_tensors)));
}

absl::StatusOr<ScheduleResult> make_artifact_schedule(const std::vector<ScheduleKernel>& kernels,
                                                      const std::vector<ScheduleTensor>& tensors,
                                                      uint64_t arena_bytes,
                                                      const WaveOptions& options) {
  std::vector<TensorSpan> spans;
  for (const ScheduleTensor& t : tensors)
    spans.push_back({t.where == ScheduleTensor::Where::arena, t.location,
                     t.location + t.type.bytes()});
  const auto deps = kernel_dependencies(accesses(kernels), spans);
  SchedulerOptions so = options.scheduler;
  so.workers = options.workers ? options.workers
                               : std::max(1u, std::thread::hardware_concurrency());
  const Executor preferred =
      options.executor == ExecutorChoice::waves ? Executor::waves : Executor::sequential;

  const bool all_live = std::all_of(kernels.begin(), kernels.end(),
                                    [](const ScheduleKernel& k) { return k.kernel != nullptr; });
  std::string key;
  if (options.choices && all_live) {
    key = schedule_choice_key(kernels, tensors, arena_bytes, options);
    if (auto v = options.choices->lookup(kScheduleChoice, key))
      if (auto remembered = decode_schedule_choice(*v, kernels.size()))
        return replay(*remembered, deps, so, preferred, options.executor);
  }

  const bool measure = options.measure && options.measure_in_time();
  RememberedSchedule measured;
  std::vector<KernelProfile>& profiles = measured.profiles;
  for (const ScheduleKernel& k : kernels) {
    if (!k.kernel || !measure) {
      profiles.push_back({std::vector<double>(std::max(k.task_count, 1), 1.0)});
      continue;
    }
    std::vector<TensorType> types;
    for (uint32_t t : k.reads) types.push_back(tensors[t].type);
    for (uint32_t t : k.writes) types.push_back(tensors[t].type);
    KernelBuffers buffers = make_kernel_buffers(types, k.reads.size());
    auto profile =
        profile_kernel(*k.kernel, buffers, k.reads.size(), options.profile_repeats);
    if (!profile.ok()) return profile.status();
    profiles.push_back(*std::move(profile));
  }

  ScheduleResult r = schedule_waves(profiles, deps, so);
  r.schedule.preferred = preferred;
  if (!all_live || !measure) return r;

  // One run's buffers: the arena and a tensor per graph input and output position.
  std::unique_ptr<uint8_t[], ArenaDeleter> arena(
      new (std::align_val_t{64}) uint8_t[arena_bytes + 64]());
  std::vector<Tensor> io;
  std::vector<void*> inputs, outputs;
  for (const ScheduleTensor& t : tensors) {
    if (t.where != ScheduleTensor::Where::input && t.where != ScheduleTensor::Where::output)
      continue;
    std::vector<void*>& list = t.where == ScheduleTensor::Where::input ? inputs : outputs;
    if (list.size() <= t.location) list.resize(t.location + 1, nullptr);
    KernelBuffers b = make_kernel_buffers({t.type}, t.where == ScheduleTensor::Where::input);
    list[t.location] = b.pointers[0];
    io.push_back(std::move(b.tensors[0]));
  }
  std::vector<BoundKernel> bound;
  for (const ScheduleKernel& k : kernels) {
    BoundKernel& b = bound.emplace_back();
    b.kernel = k.kernel;
    for (const std::vector<uint32_t>* ids : {&k.reads, &k.writes})
      for (uint32_t id : *ids) {
        const ScheduleTensor& t = tensors[id];
        switch (t.where) {
          case ScheduleTensor::Where::arena:
            b.args.push_back(arena.get() + t.location);
            break;
          case ScheduleTensor::Where::input:
            b.args.push_back(inputs[t.location]);
            break;
          case ScheduleTensor::Where::output:
            b.args.push_back(outputs[t.location]);
            break;
          case ScheduleTensor::Where::constant:
            return absl::InvalidArgumentError(
                "wave schedule: a kernel takes a constant tensor as an argument");
        }
      }
  }
  ExecutorMeasureOptions mo;
  mo.runs = options.measure_runs;
  mo.min_runs = std::min(options.measure_min_runs, std::max(options.measure_runs, 1));
  mo.warmup = options.measure_warmup;
  mo.max_ms = options.measure_max_ms;
  // A kernel with a thread team of its own that the simulation runs exclusive although its wave
  // has other kernels to run beside it pinned: the simulation weighs the team's profiled times,
  // taken alone in a loop, where a run in the schedule has its team wake and wait for cores at
  // every fork and join (bench/RESULTS.md: an OpenVINO region exclusive ran 1.09-1.20x slower
  // than pinned beside a native kernel, in every run, while the simulation chose exclusive in
  // one compile of seven). Such a schedule is kept only when it measures clearly faster, whole
  // runs alternating, than the one with those kernels pinned.
  if (so.teams == SchedulerOptions::Teams::profiled) {
    SchedulerOptions beside = so;
    beside.teams = SchedulerOptions::Teams::beside;
    ScheduleResult pinned = schedule_waves(profiles, deps, beside);
    if (pinned.schedule.threads != r.schedule.threads) {
      pinned.schedule.preferred = preferred;
      auto t = measure_wave_schedules(bound, pinned.schedule, r.schedule, mo);
      if (!t.ok()) return t.status();
      if (!second_clearly_faster(*t, options.waves_margin)) {
        r = std::move(pinned);
        measured.teams_pinned = true;
      }
      r.teams_measured = true;
    }
  }
  WaveSchedule& s = r.schedule;
  auto times = measure_executors(bound, s, mo);
  if (!times.ok()) return times.status();
  s.sequential_ms = times->sequential_ms;
  s.waves_ms = times->waves_ms;
  measured.waves_preferred = waves_clearly_faster(*times, options.waves_margin);
  if (options.executor == ExecutorChoice::automatic)
    s.preferred = measured.waves_preferred ? Executor::waves : Executor::sequential;
  if (!key.empty()) {
    measured.teams_measured = r.teams_measured;
    measured.sequential_ms = s.sequential_ms;
    measured.waves_ms = s.waves_ms;
    options.choices->remember(kScheduleChoice, key, encode_schedule_choice(measured));
  }
  return r;
}

}  // namespace collage::waves
