// The simulated backends: kernels that compute a unary node, then occupy simulated cores.
#include "side_by_side/simulated_backends.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

namespace collage::testing {
namespace {

using Clock = std::chrono::steady_clock;

class SimulatedKernel : public Kernel {
 public:
  SimulatedKernel(const Graph& group, const SimulatedBackendOptions& options,
                  SimulatedCores* machine)
      : sigmoid_(group.nodes().front().op_name() == "Sigmoid"),
        numel_(group.value(group.inputs().front()).type.numel()),
        cores_(options.cores),
        busy_(std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double, std::milli>(options.busy_ms))),
        machine_(machine) {
    record_.module = options.name;
    record_.entry = sigmoid_ ? "sigmoid" : "relu";
  }

  int32_t task_count() const override { return 1; }
  const KernelRecord& record() const override { return record_; }

  absl::Status run_task(void* const* args, int32_t) override {
    const float* x = static_cast<const float*>(args[0]);
    float* y = static_cast<float*>(args[1]);
    for (int64_t i = 0; i < numel_; ++i)
      y[i] = sigmoid_ ? 1.f / (1.f + std::exp(-x[i])) : std::max(x[i], 0.f);
    machine_->acquire(cores_);
    std::this_thread::sleep_until(Clock::now() + busy_);
    machine_->release(cores_);
    return absl::OkStatus();
  }

 private:
  bool sigmoid_;
  int64_t numel_;
  int cores_;
  Clock::duration busy_;
  SimulatedCores* machine_;
  KernelRecord record_;
};

class SimulatedBackend : public Backend {
 public:
  SimulatedBackend(SimulatedBackendOptions options, SimulatedCores* machine)
      : Backend(options.name, DeviceKind::cpu, "1"),
        options_(std::move(options)),
        machine_(machine) {
    add_pattern("unary", is_op("Relu", "Sigmoid")(wildcard().has_dtype(DType::f32)));
  }

  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& group,
                                                const BuildOptions&) const override {
    return std::make_unique<SimulatedKernel>(group, options_, machine_);
  }

 private:
  SimulatedBackendOptions options_;
  SimulatedCores* machine_;
};

}  // namespace

void SimulatedCores::acquire(int n) {
  std::unique_lock<std::mutex> lock(mu_);
  freed_.wait(lock, [&] { return free_ >= n; });
  free_ -= n;
}

void SimulatedCores::release(int n) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    free_ += n;
  }
  freed_.notify_all();
}

std::unique_ptr<Backend> make_simulated_backend(SimulatedBackendOptions options,
                                                SimulatedCores* machine) {
  return std::make_unique<SimulatedBackend>(std::move(options), machine);
}

Graph two_branch_graph(const Context& ctx) {
  GraphBuilder b(ctx, "two_branches");
  ValueId x = b.add_input("x", {DType::f32, {64, 64}});
  ValueId left = *b.add("Relu", {x}, nullptr, "left");
  ValueId right = *b.add("Sigmoid", {x}, nullptr, "right");
  b.add_output(left);
  b.add_output(right);
  return *b.finish();
}

}  // namespace collage::testing
