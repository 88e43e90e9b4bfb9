// The compile-time choice between the executors: the wave executor only when it is faster by a
// margin in most measured pairs, measure_executors bounded by its time limit, and two wave
// schedules measured against each other.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>

#include "waves/executor_measure.h"
#include "waves/wave_scheduler.h"

using namespace collage;
using namespace collage::waves;

namespace {

// One task that keeps its thread busy for `us` microseconds.
class BusyKernel : public Kernel {
 public:
  explicit BusyKernel(double us) : us_(us) {}
  int32_t task_count() const override { return 1; }
  absl::Status run_task(void* const*, int32_t) override {
    const auto end =
        std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(us_);
    while (std::chrono::steady_clock::now() < end) {
    }
    ++runs;
    return absl::OkStatus();
  }
  const KernelRecord& record() const override { return record_; }
  std::atomic<int> runs{0};

 private:
  double us_;
  KernelRecord record_;
};

ExecutorTimes times(int pairs, double ratio, int waves_faster) {
  ExecutorTimes t;
  t.pairs = pairs;
  t.waves_ratio = ratio;
  t.waves_faster = waves_faster;
  return t;
}

}  // namespace

TEST_CASE("waves: the wave executor is chosen only when clearly faster", "[waves][choice]") {
  CHECK(waves_clearly_faster(times(15, 0.90, 14), 0.03));
  CHECK(waves_clearly_faster(times(15, 0.97, 10), 0.03));
  // Faster by less than the margin: a tie, kept sequential.
  CHECK_FALSE(waves_clearly_faster(times(15, 0.99, 12), 0.03));
  // A lower median but faster in too few pairs: the noise decides, kept sequential.
  CHECK_FALSE(waves_clearly_faster(times(15, 0.95, 9), 0.03));
  CHECK_FALSE(waves_clearly_faster(times(15, 1.10, 2), 0.03));
  CHECK_FALSE(waves_clearly_faster(times(0, 0.5, 0), 0.03));
}

TEST_CASE("waves: measure_executors alternates whole runs and stops at its time bound",
          "[waves][choice]") {
  // Two independent kernels of 2 ms each on 2 workers.
  BusyKernel a(2000), b(2000);
  std::vector<KernelProfile> profiles = {{{2000.0}}, {{2000.0}}};
  SchedulerOptions so;
  so.workers = 2;
  const WaveSchedule s = schedule_waves(profiles, {{}, {}}, so).schedule;
  std::vector<BoundKernel> kernels = {{&a, {}}, {&b, {}}};
  ExecutorMeasureOptions mo;
  mo.runs = 50;
  mo.min_runs = 3;
  mo.warmup = 1;
  mo.max_ms = 1;  // reached after the first timed pair
  auto t = measure_executors(kernels, s, mo);
  REQUIRE(t.ok());
  CHECK(t->pairs == 3);
  // Each timed or warm-up pair runs every kernel once per executor.
  CHECK(a.runs == 2 * (3 + 1));
  CHECK(t->sequential_ms >= 4.0);
  CHECK(t->waves_ms >= 2.0);
  CHECK(t->waves_faster <= t->pairs);
}

TEST_CASE("waves: two wave schedules measured against each other", "[waves][choice]") {
  // Two independent kernels of 2 ms each: side by side on 2 workers, or one after the other on
  // one worker (every chunk moved to worker 0's list).
  BusyKernel a(2000), b(2000);
  std::vector<KernelProfile> profiles = {{{2000.0}}, {{2000.0}}};
  SchedulerOptions so;
  so.workers = 2;
  const WaveSchedule side_by_side = schedule_waves(profiles, {{}, {}}, so).schedule;
  so.workers = 1;
  const WaveSchedule one_worker = schedule_waves(profiles, {{}, {}}, so).schedule;
  std::vector<BoundKernel> kernels = {{&a, {}}, {&b, {}}};
  ExecutorMeasureOptions mo;
  mo.runs = 4;
  mo.min_runs = 4;
  mo.warmup = 1;
  auto t = measure_wave_schedules(kernels, one_worker, side_by_side, mo);
  REQUIRE(t.ok());
  CHECK(t->pairs == 4);
  CHECK(a.runs == 2 * (4 + 1));
  CHECK(t->first_ms >= 4.0);   // the kernels spin: one worker takes both in turn
  CHECK(t->second_ms >= 2.0);
  CHECK(t->second_faster <= t->pairs);

  ScheduleTimes clear;
  clear.pairs = 15, clear.second_ratio = 0.9, clear.second_faster = 12;
  CHECK(second_clearly_faster(clear, 0.03));
  ScheduleTimes tie = clear;
  tie.second_ratio = 0.99;
  CHECK_FALSE(second_clearly_faster(tie, 0.03));
  ScheduleTimes few = clear;
  few.second_faster = 9;
  CHECK_FALSE(second_clearly_faster(few, 0.03));
}
