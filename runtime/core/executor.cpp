// The sequential scheduler.
#include "executor.h"

#include <algorithm>

#include "wave_schedule.h"

namespace collage::rt {

void* arg_pointer(const ExecPlan& plan, const Frame& frame, const ArgRef& a) {
  switch (a.storage) {
    case Storage::arena:
      return frame.arena + a.location;
    case Storage::input:
      return const_cast<void*>(frame.inputs[a.location]);
    case Storage::output:
      return frame.outputs[a.location];
    case Storage::constant:
      return const_cast<void*>(plan.constants[a.location]);
    case Storage::dynamic:
      return (*frame.dynamic)[a.tensor].data.get();
  }
  return nullptr;
}

namespace {

class SequentialScheduler : public Scheduler {
 public:
  explicit SequentialScheduler(TaskPool* pool) : pool_(pool) {}

  Status run(const ExecPlan& plan, const Frame& frame) const override {
    std::vector<void*> args;
    for (const Step& step : plan.steps) {
      StepTiming timing;
      if (frame.timings) timing.start = std::chrono::steady_clock::now();
      if (step.dynamic || step.strings) {
        COLLAGE_RT_RETURN_IF_ERROR(run_dynamic_step(plan, frame, step));
      } else {
        args.clear();
        for (const ArgRef& a : step.args) args.push_back(arg_pointer(plan, frame, a));
        COLLAGE_RT_RETURN_IF_ERROR(run_step(step, args.data()));
      }
      if (frame.timings) {
        timing.end = std::chrono::steady_clock::now();
        frame.timings->push_back(timing);
      }
    }
    return Status();
  }

 private:
  // A kernel may have more tasks than the pool has threads (finer splits for the wave
  // scheduler): they run as one contiguous chunk per thread, as the wave scheduler's variant with
  // that many chunks does.
  Status run_step(const Step& step, void* const* args) const {
    const int32_t n = step.kernel->task_count();
    const uint32_t chunks =
        static_cast<uint32_t>(std::clamp(pool_->num_threads(), 1, std::max(n, 1)));
    auto run_chunk = [&](uint32_t chunk) {
      const auto [begin, end] = waves::chunk_range(n, chunks, chunk);
      for (int32_t t = begin; t < end; ++t)
        COLLAGE_RT_RETURN_IF_ERROR(step.kernel->run_task(args, t));
      return Status();
    };
    if (chunks <= 1) return run_chunk(0);
    std::mutex mu;
    Status first;
    pool_->parallel_for(static_cast<int32_t>(chunks), [&](int32_t chunk) {
      Status s = run_chunk(static_cast<uint32_t>(chunk));
      if (s.ok()) return;
      std::lock_guard<std::mutex> lock(mu);
      if (first.ok()) first = std::move(s);
    });
    return first;
  }

  TaskPool* pool_;
};

}  // namespace

std::unique_ptr<Scheduler> make_sequential_scheduler(TaskPool* pool) {
  return std::make_unique<SequentialScheduler>(pool);
}

}  // namespace collage::rt
