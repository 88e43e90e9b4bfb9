// The sequential scheduler.
#include "executor.h"

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
      args.clear();
      for (const ArgRef& a : step.args) args.push_back(arg_pointer(plan, frame, a));
      StepTiming timing;
      if (frame.timings) timing.start = std::chrono::steady_clock::now();
      COLLAGE_RT_RETURN_IF_ERROR(run_step(step, args.data()));
      if (frame.timings) {
        timing.end = std::chrono::steady_clock::now();
        frame.timings->push_back(timing);
      }
    }
    return Status();
  }

 private:
  Status run_step(const Step& step, void* const* args) const {
    const int32_t n = step.kernel->task_count();
    if (n == 1) return step.kernel->run_task(args, 0);
    std::mutex mu;
    Status first;
    pool_->parallel_for(n, [&](int32_t task) {
      Status s = step.kernel->run_task(args, task);
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
