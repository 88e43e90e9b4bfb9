// The compile-time profiler on fake kernels: a kernel with a thread team gets a pinned variant
// (its team limited to one thread) unless that changes its outputs, and is exclusive otherwise;
// one without gets none.
#include <catch2/catch.hpp>

#include "waves/kernel_profile.h"

using namespace collage;
using namespace collage::waves;

namespace {

// out[i] = in[i] * 2, plus `pinned_bias` when run with a limited team. Records the thread
// limits it was run with.
class FakeKernel : public Kernel {
 public:
  FakeKernel(bool team, float pinned_bias) : team_(team), pinned_bias_(pinned_bias) {}
  int32_t task_count() const override { return 2; }
  absl::Status run_task(void* const* args, int32_t task_id) override {
    return compute(args, task_id, 0.f);
  }
  bool has_thread_team() const override { return team_; }
  absl::Status run_task_threads(void* const* args, int32_t task_id, int32_t max_threads) override {
    limits.push_back(max_threads);
    return compute(args, task_id, pinned_bias_);
  }
  const KernelRecord& record() const override { return record_; }
  std::vector<int32_t> limits;

 private:
  absl::Status compute(void* const* args, int32_t task_id, float bias) {
    const auto* in = static_cast<const float*>(args[0]);
    auto* out = static_cast<float*>(args[1]);
    for (int i = task_id * 8; i < task_id * 8 + 8; ++i) out[i] = in[i] * 2 + bias;
    return absl::OkStatus();
  }
  bool team_;
  float pinned_bias_;
  KernelRecord record_;
};

KernelProfile profile(FakeKernel& k) {
  const TensorType t{DType::f32, {16}};
  KernelBuffers buffers = make_kernel_buffers({t, t}, 1);
  auto p = profile_kernel(k, buffers, 1, /*repeats=*/3);
  REQUIRE(p.ok());
  return *p;
}

}  // namespace

TEST_CASE("waves: a kernel with a thread team is profiled pinned to one thread",
          "[waves][profile]") {
  FakeKernel k(/*team=*/true, 0.f);
  const KernelProfile p = profile(k);
  CHECK(p.task_us.size() == 2);
  CHECK(p.pinned_us.size() == 2);
  // Its team never runs beside another kernel, even though this fake keeps one core busy.
  CHECK(p.exclusive);
  CHECK_FALSE(k.limits.empty());
  for (int32_t limit : k.limits) CHECK(limit == 1);
}

TEST_CASE("waves: a pinned variant that changes the outputs is not offered", "[waves][profile]") {
  FakeKernel k(/*team=*/true, 1e-6f);
  const KernelProfile p = profile(k);
  CHECK(p.task_us.size() == 2);
  CHECK_FALSE(k.limits.empty());
  CHECK(p.pinned_us.empty());
  CHECK(p.exclusive);  // so its team runs alone
}

TEST_CASE("waves: a kernel without a thread team has no pinned variant", "[waves][profile]") {
  FakeKernel k(/*team=*/false, 0.f);
  const KernelProfile p = profile(k);
  CHECK(p.task_us.size() == 2);
  CHECK(k.limits.empty());
  CHECK(p.pinned_us.empty());
  CHECK_FALSE(p.exclusive);
}
