// make_artifact_schedule with WaveOptions::choices: the profiles, the team choice and the
// executors' times measured once and remembered, then the same schedule and preference made from
// them without running a kernel; nothing run when the runs would not end in time; the remembered
// values' encoding and its malformed forms.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>

#include "common/fake_choices.h"
#include "waves/schedule_choice.h"

using namespace collage;
using namespace collage::waves;

namespace {

// Tasks that spin for `us` each, counting runs.
class SpinKernel : public Kernel {
 public:
  SpinKernel(int32_t tasks, double us) : tasks_(tasks), us_(us) {
    record_.module = "test";
    record_.entry = "spin";
  }
  int32_t task_count() const override { return tasks_; }
  absl::Status run_task(void* const*, int32_t) override {
    ++runs;
    const auto end =
        std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(us_);
    while (std::chrono::steady_clock::now() < end) {
    }
    return absl::OkStatus();
  }
  const KernelRecord& record() const override { return record_; }
  std::atomic<int> runs{0};

 private:
  int32_t tasks_;
  double us_;
  KernelRecord record_;
};

}  // namespace

TEST_CASE("schedule choice: measured once, then remade from what was remembered", "[waves]") {
  SpinKernel a(4, 200), b(2, 300), c(1, 100);
  const TensorType t{DType::f32, {4}};
  const std::vector<ScheduleTensor> tensors = {{ScheduleTensor::Where::input, 0, t},
                                               {ScheduleTensor::Where::arena, 0, t},
                                               {ScheduleTensor::Where::arena, 64, t},
                                               {ScheduleTensor::Where::output, 0, t}};
  // a and b side by side, c after both.
  const std::vector<ScheduleKernel> kernels = {
      {&a, 4, {0}, {1}}, {&b, 2, {0}, {2}}, {&c, 1, {1, 2}, {3}}};
  WaveOptions o;
  o.executor = ExecutorChoice::automatic;
  o.workers = 2;
  o.measure_runs = 5;
  testing::FakeChoices store;
  o.choices = &store;

  auto first = make_artifact_schedule(kernels, tensors, 128, o);
  REQUIRE(first.ok());
  CHECK(store.measured() == 1);
  CHECK(store.reused() == 0);
  REQUIRE(store.values.size() == 1);
  CHECK(store.values.begin()->first.starts_with("wave-schedule|schedule 3 kernels "));
  const int runs = a.runs + b.runs + c.runs;
  CHECK(runs > 0);

  auto second = make_artifact_schedule(kernels, tensors, 128, o);
  REQUIRE(second.ok());
  CHECK(store.measured() == 1);
  CHECK(store.reused() == 1);
  CHECK(a.runs + b.runs + c.runs == runs);  // nothing ran
  const WaveSchedule &s1 = first->schedule, &s2 = second->schedule;
  CHECK(s2.chunks == s1.chunks);
  CHECK(s2.threads == s1.threads);
  CHECK(s2.wave_of_kernel == s1.wave_of_kernel);
  CHECK(s2.kernel_us == s1.kernel_us);
  CHECK(s2.num_segments == s1.num_segments);
  CHECK(s2.sequential_ms == s1.sequential_ms);
  CHECK(s2.waves_ms == s1.waves_ms);
  CHECK(s2.preferred == s1.preferred);
  CHECK(second->predicted_us == first->predicted_us);

  // Other options measure again: they are part of the key.
  o.workers = 1;
  REQUIRE(make_artifact_schedule(kernels, tensors, 128, o).ok());
  CHECK(store.measured() == 2);
}

TEST_CASE("schedule choice: the remembered values read back, malformed ones do not", "[waves]") {
  RememberedSchedule s;
  s.teams_pinned = true;
  s.teams_measured = true;
  s.sequential_ms = 1.25;
  s.waves_ms = 1.0 / 3;
  s.waves_preferred = true;
  s.profiles = {{{1.5, 2.5}, false, {}}, {{7}, true, {9}}};
  const std::vector<double> v = encode_schedule_choice(s);
  auto back = decode_schedule_choice(v, 2);
  REQUIRE(back);
  CHECK(back->teams_pinned);
  CHECK(back->teams_measured);
  CHECK(back->sequential_ms == 1.25);
  CHECK(back->waves_ms == 1.0 / 3);
  CHECK(back->waves_preferred);
  REQUIRE(back->profiles.size() == 2);
  CHECK(back->profiles[0].task_us == std::vector<double>{1.5, 2.5});
  CHECK(back->profiles[0].pinned_us.empty());
  CHECK(back->profiles[1].exclusive);
  CHECK(back->profiles[1].pinned_us == std::vector<double>{9});

  CHECK_FALSE(decode_schedule_choice(v, 3));  // fewer kernels than the schedule has
  CHECK_FALSE(decode_schedule_choice(v, 1));  // values left over
  std::vector<double> cut(v.begin(), v.end() - 1);
  CHECK_FALSE(decode_schedule_choice(cut, 2));
  std::vector<double> bad = v;
  bad[6] = 1e9;  // the first kernel's task count
  CHECK_FALSE(decode_schedule_choice(bad, 2));
  bad[6] = 1.5;
  CHECK_FALSE(decode_schedule_choice(bad, 2));
  CHECK_FALSE(decode_schedule_choice({}, 0));
}

TEST_CASE("schedule choice: nothing runs when the runs would not end by measure_until",
          "[waves]") {
  SpinKernel a(2, 100);
  const TensorType t{DType::f32, {4}};
  const std::vector<ScheduleTensor> tensors = {{ScheduleTensor::Where::input, 0, t},
                                               {ScheduleTensor::Where::output, 0, t}};
  const std::vector<ScheduleKernel> kernels = {{&a, 2, {0}, {1}}};
  WaveOptions o;
  o.executor = ExecutorChoice::automatic;
  o.workers = 2;
  o.measure_runs = 5;
  // 2 s of runs predicted, 1 s left: not started, sequential, nothing remembered.
  o.measure_runs_ms = 2000;
  o.measure_until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  testing::FakeChoices store;
  o.choices = &store;
  auto cut = make_artifact_schedule(kernels, tensors, 128, o);
  REQUIRE(cut.ok());
  CHECK(a.runs == 0);
  CHECK(cut->schedule.preferred == Executor::sequential);
  CHECK(cut->schedule.waves_ms == 0);
  CHECK(store.measured() == 0);
  // 2 ms predicted: measured.
  o.measure_runs_ms = 2;
  auto measured = make_artifact_schedule(kernels, tensors, 128, o);
  REQUIRE(measured.ok());
  CHECK(a.runs > 0);
  CHECK(measured->schedule.waves_ms > 0);
  CHECK(store.measured() == 1);
}
