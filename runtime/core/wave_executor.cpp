// WaveScheduler: argument pointers of every step resolved once per run, each entry running its
// chunk of tasks; the first error stops the remaining entries' work (not their counters).
#include "wave_executor.h"

#include <atomic>
#include <mutex>

#include "wave_runner.h"

namespace collage::rt {
namespace {

using Clock = std::chrono::steady_clock;

class WaveScheduler : public Scheduler {
 public:
  WaveScheduler(const waves::WaveSchedule* schedule, std::unique_ptr<Scheduler> fallback)
      : schedule_(schedule), fallback_(std::move(fallback)), runner_(schedule) {}

  Status run(const ExecPlan& plan, const Frame& frame) const override {
    size_t num_args = 0;
    for (const Step& step : plan.steps) num_args += step.args.size();
    std::vector<void*> args;
    std::vector<size_t> first_arg;
    args.reserve(num_args);
    first_arg.reserve(plan.steps.size());
    for (const Step& step : plan.steps) {
      first_arg.push_back(args.size());
      for (const ArgRef& a : step.args) args.push_back(arg_pointer(plan, frame, a));
    }
    // Profiles: per step the earliest task start and the latest task end (ns from `origin`).
    const bool timed = frame.timings != nullptr;
    const Clock::time_point origin = Clock::now();
    std::vector<std::atomic<int64_t>> starts(timed ? plan.steps.size() : 0);
    std::vector<std::atomic<int64_t>> ends(timed ? plan.steps.size() : 0);
    for (auto& s : starts) s.store(INT64_MAX, std::memory_order_relaxed);
    for (auto& e : ends) e.store(0, std::memory_order_relaxed);

    std::atomic<bool> failed{false};
    std::mutex mu;
    Status first;
    const waves::WaveRunner::EntryFn fn = [&](uint32_t kernel, uint32_t chunk) {
      if (failed.load(std::memory_order_relaxed)) return;
      const Step& step = plan.steps[kernel];
      const auto [begin, end] =
          waves::chunk_range(step.kernel->task_count(), schedule_->chunks[kernel], chunk);
      const int64_t t0 = timed ? (Clock::now() - origin).count() : 0;
      const uint32_t threads = schedule_->threads.empty() ? 0 : schedule_->threads[kernel];
      for (int32_t t = begin; t < end; ++t) {
        void* const* a = args.data() + first_arg[kernel];
        Status s = threads ? step.kernel->run_task_threads(a, t, static_cast<int32_t>(threads))
                           : step.kernel->run_task(a, t);
        if (s.ok()) continue;
        std::lock_guard<std::mutex> lock(mu);
        if (first.ok()) first = std::move(s);
        failed.store(true, std::memory_order_relaxed);
        return;
      }
      if (!timed) return;
      const int64_t t1 = (Clock::now() - origin).count();
      for (int64_t v = starts[kernel].load(); t0 < v && !starts[kernel].compare_exchange_weak(v, t0);) {
      }
      for (int64_t v = ends[kernel].load(); t1 > v && !ends[kernel].compare_exchange_weak(v, t1);) {
      }
    };
    if (!runner_.try_run(fn)) {
      fallback_runs_.fetch_add(1, std::memory_order_relaxed);
      return fallback_->run(plan, frame);
    }
    if (!first.ok()) return first;
    if (timed)
      for (size_t k = 0; k < plan.steps.size(); ++k)
        frame.timings->push_back({origin + Clock::duration(starts[k].load()),
                                  origin + Clock::duration(ends[k].load())});
    return Status();
  }

  SchedulerStats stats() const override {
    const waves::WaveRunStats r = runner_.stats();
    SchedulerStats s;
    s.name = "waves";
    s.runs = r.runs;
    s.wall_ns = r.wall_ns;
    s.task_ns = r.task_ns;
    s.wait_ns = r.wait_ns;
    s.overhead_ns = r.overhead_ns;
    s.wake_ns = r.wake_ns;
    s.fallback_runs = fallback_runs_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  const waves::WaveSchedule* schedule_;
  std::unique_ptr<Scheduler> fallback_;
  mutable waves::WaveRunner runner_;
  mutable std::atomic<uint64_t> fallback_runs_{0};
};

}  // namespace

std::unique_ptr<Scheduler> make_wave_scheduler(const waves::WaveSchedule* schedule,
                                               std::unique_ptr<Scheduler> fallback) {
  return std::make_unique<WaveScheduler>(schedule, std::move(fallback));
}

}  // namespace collage::rt
