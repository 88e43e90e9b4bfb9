// A user-defined backend in C++: a hand-written GEMM for 2-D f32 MatMul (Relu optionally fused
// after it) and a Relu, registered next to the reference backend and placed by the greedy
// strategy, then run in process. The backend is the first 60 lines; the rest builds a model and
// runs it. (Its kernels have no runtime module, so they run in process only: a backend whose
// kernels ship in artifacts is examples/c_plugin or examples/compile_and_run.)
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "collage/executor.h"
#include "collage/placement.h"
#include "collage/reference.h"

using namespace collage;

// Runs a group that is MatMul, MatMul+Relu or Relu. Operands are kernel arguments or constants.
class GemmKernel : public Kernel {
 public:
  explicit GemmKernel(Graph g) : g_(std::move(g)) { record_.module = "mygemm"; }
  int32_t task_count() const override { return 1; }
  const KernelRecord& record() const override { return record_; }

  absl::Status run_task(void* const* args, int32_t) override {
    const Node& first = g_.nodes().front();
    const float* a = operand(first.inputs[0], args);
    float* c = static_cast<float*>(args[g_.inputs().size()]);
    const bool relu = g_.nodes().back().op_name() == "Relu";
    if (first.op_name() == "Relu") {
      for (int64_t i = 0; i < g_.value(first.inputs[0]).type.numel(); ++i)
        c[i] = std::max(a[i], 0.f);
      return absl::OkStatus();
    }
    const float* b = operand(first.inputs[1], args);
    const Shape& as = g_.value(first.inputs[0]).type.shape;
    const int64_t m = as[0], k = as[1], n = g_.value(first.inputs[1]).type.shape[1];
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float acc = 0;
        for (int64_t p = 0; p < k; ++p) acc += a[i * k + p] * b[p * n + j];
        c[i * n + j] = relu ? std::max(acc, 0.f) : acc;
      }
    return absl::OkStatus();
  }

 private:
  const float* operand(ValueId v, void* const* args) const {
    if (const Tensor* t = g_.constant_of(v)) return t->data<float>();
    for (size_t i = 0; i < g_.inputs().size(); ++i)
      if (g_.inputs()[i] == v) return static_cast<const float*>(args[i]);
    return nullptr;
  }
  Graph g_;
  KernelRecord record_;
};

class GemmBackend : public Backend {
 public:
  GemmBackend() : Backend("mygemm", DeviceKind::cpu, "1") {
    Pattern mat = wildcard().has_dtype(DType::f32).has_rank(2);
    Pattern mm = is_op("MatMul")(mat, wildcard().has_dtype(DType::f32).has_rank(2));
    add_pattern("matmul_relu", mm.optional([](const Pattern& x) { return is_op("Relu")(x); }));
    add_pattern("relu", is_op("Relu")(wildcard().has_dtype(DType::f32)));
  }
  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& group,
                                                const BuildOptions&) const override {
    return std::make_unique<GemmKernel>(group);
  }
};

int main() {
  Context ctx;
  BackendRegistry backends;
  if (!backends.add(std::make_unique<GemmBackend>()).ok() ||
      !backends.add(make_reference_backend()).ok())
    return 1;

  // y = sigmoid(relu(x @ w1) @ w2 + b)
  GraphBuilder b(ctx, "mlp");
  ValueId x = b.add_input("x", {DType::f32, {4, 8}});
  std::vector<float> w1(8 * 16), w2(16 * 4), bias(4);
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = std::sin(0.7f * i);
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = std::cos(0.3f * i);
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.1f * i;
  ValueId h = *b.add("MatMul", {x, b.add_constant("w1", Tensor::from_f32({8, 16}, w1))});
  h = *b.add("Relu", {h});
  h = *b.add("MatMul", {h, b.add_constant("w2", Tensor::from_f32({16, 4}, w2))});
  h = *b.add("Add", {h, b.add_constant("b", Tensor::from_f32({4}, bias))});
  b.add_output(*b.add("Sigmoid", {h}));
  Graph g = *b.finish();

  PlacementOptions options;
  options.strategy = "greedy";  // backends in registration order claim what their patterns match
  auto placement = optimize(ctx, backends, g, options);
  if (!placement.ok()) return std::printf("%s\n", placement.status().ToString().c_str()), 1;
  std::printf("%s\n", placement->to_json(g).c_str());
  auto model = compile_placement(ctx, backends, g, *placement);
  if (!model.ok()) return std::printf("%s\n", model.status().ToString().c_str()), 1;

  std::vector<float> xs(4 * 8);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::cos(1.3f * i);
  std::vector<Tensor> inputs{Tensor::from_f32({4, 8}, xs)};
  auto got = model->run(inputs);
  auto want = run_reference(g, inputs);
  if (!got.ok() || !want.ok()) return 1;
  float worst = 0;
  for (int64_t i = 0; i < (*want)[0].numel(); ++i)
    worst = std::max(worst, std::fabs((*got)[0].data<float>()[i] - (*want)[0].data<float>()[i]));
  std::printf("max |mygemm placement - reference| = %g\n", worst);
  return worst < 1e-5f ? 0 : 1;
}
