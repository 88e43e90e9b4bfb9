// make_artifact_schedule on fake kernels with a thread team: where the simulation runs one
// exclusive beside other work of its wave, that schedule is measured against pinning it and kept
// only when it is clearly faster. The kernels spin for fixed times, so the right choice is known;
// the times are tens of milliseconds so that a loaded machine's preemptions (a few ms) do not
// turn them around.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>

#include "waves/artifact_schedule.h"

using namespace collage;
using namespace collage::waves;

namespace {

void spin_us(double us) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(us);
  while (std::chrono::steady_clock::now() < end) {
  }
}

// One task with a thread team of its own: `team_us` with its team (the first `honest_runs` runs;
// `later_team_us` after them: a team that profiles faster than it runs in the schedule),
// `pinned_us` limited to one thread. Writes nothing, so its pinned variant is offered.
class TeamKernel : public Kernel {
 public:
  TeamKernel(double team_us, double pinned_us, int honest_runs, double later_team_us)
      : team_us_(team_us), pinned_us_(pinned_us), honest_runs_(honest_runs),
        later_team_us_(later_team_us) {}
  int32_t task_count() const override { return 1; }
  absl::Status run_task(void* const*, int32_t) override {
    spin_us(team_runs++ < honest_runs_ ? team_us_ : later_team_us_);
    return absl::OkStatus();
  }
  bool has_thread_team() const override { return true; }
  absl::Status run_task_threads(void* const*, int32_t, int32_t) override {
    spin_us(pinned_us_);
    return absl::OkStatus();
  }
  const KernelRecord& record() const override { return record_; }
  std::atomic<int> team_runs{0};

 private:
  double team_us_, pinned_us_;
  int honest_runs_;
  double later_team_us_;
  KernelRecord record_;
};

// One task of generated code (no team) that spins for `us`.
class PlainKernel : public Kernel {
 public:
  explicit PlainKernel(double us) : us_(us) {}
  int32_t task_count() const override { return 1; }
  absl::Status run_task(void* const*, int32_t) override {
    spin_us(us_);
    return absl::OkStatus();
  }
  const KernelRecord& record() const override { return record_; }

 private:
  double us_;
  KernelRecord record_;
};

// The team kernel and the plain one side by side (both read the input, each writes an output of
// its own): one wave.
ScheduleResult schedule(TeamKernel& team, PlainKernel& plain) {
  const TensorType t{DType::f32, {4}};
  std::vector<ScheduleTensor> tensors = {{ScheduleTensor::Where::input, 0, t},
                                         {ScheduleTensor::Where::output, 0, t},
                                         {ScheduleTensor::Where::output, 1, t}};
  std::vector<ScheduleKernel> kernels = {{&team, 1, {0}, {1}}, {&plain, 1, {0}, {2}}};
  WaveOptions o;
  o.executor = ExecutorChoice::waves;
  o.workers = 2;
  o.profile_repeats = 3;
  o.measure_runs = 9;
  o.measure_max_ms = 5000;
  auto r = make_artifact_schedule(kernels, tensors, 0, o);
  REQUIRE(r.ok());
  return *std::move(r);
}

}  // namespace

TEST_CASE("waves: a team kernel exclusive beside other work is kept when it measures faster",
          "[waves][teams]") {
  // Simulated and measured alike: exclusive 10 ms + 20 ms, pinned 80 ms beside 20 ms.
  TeamKernel team(10000, 80000, 1 << 30, 10000);
  PlainKernel plain(20000);
  const ScheduleResult r = schedule(team, plain);
  CHECK(r.teams_measured);
  CHECK(r.schedule.threads[0] == 0);
  CHECK(r.schedule.exclusive[0] == 1);
}

TEST_CASE("waves: a team kernel that profiled faster than it runs is pinned after measuring",
          "[waves][teams]") {
  // Profiled (its first four runs: one untimed, three timed) at 10 ms with its team, the
  // simulation runs it exclusive (10 + 20 ms against 80 ms pinned); in the schedule its team
  // takes 140 ms, and pinned wins.
  TeamKernel team(10000, 80000, 4, 140000);
  PlainKernel plain(20000);
  const ScheduleResult r = schedule(team, plain);
  CHECK(r.teams_measured);
  CHECK(r.schedule.threads[0] == 1);
  CHECK(r.schedule.exclusive[0] == 0);
}

TEST_CASE("waves: a team kernel alone in its wave is not measured against pinning",
          "[waves][teams]") {
  TeamKernel team(10000, 80000, 1 << 30, 10000);
  const TensorType t{DType::f32, {4}};
  std::vector<ScheduleTensor> tensors = {{ScheduleTensor::Where::input, 0, t},
                                         {ScheduleTensor::Where::output, 0, t}};
  std::vector<ScheduleKernel> kernels = {{&team, 1, {0}, {1}}};
  WaveOptions o;
  o.executor = ExecutorChoice::waves;
  o.workers = 2;
  o.profile_repeats = 3;
  o.measure_runs = 3;
  auto r = make_artifact_schedule(kernels, tensors, 0, o);
  REQUIRE(r.ok());
  CHECK_FALSE(r->teams_measured);
  CHECK(r->schedule.exclusive[0] == 1);
}
