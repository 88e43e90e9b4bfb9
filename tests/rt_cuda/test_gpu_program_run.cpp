// GPU programs on a GPU: generated kernels and cuBLAS in one program, replayed from a CUDA graph
// with new inputs each run, through ProgramRunner and through the module's C entry points; a
// cubin or kernel the device cannot load is refused by name. Tagged [gpu]: without a usable device
// each case says why and skips.
#include <catch2/catch.hpp>

#include "../codegen_cuda/gpu_test_util.h"
#include "codegen/cuda/cuda_device.h"
#include "codegen/cuda/launch_step.h"
#include "cuda_driver.h"
#include "cuda_module.h"
#include "program_desc.h"
#include "program_runner.h"

namespace collage::rt_cuda {
namespace {

bool skip_without_device() {
  std::string why;
  if (cuda_driver(&why) != nullptr && codegen::cuda::probe_cuda_device().ok()) return false;
  WARN("SKIPPED (no usable CUDA device): " << (why.empty() ? "no device" : why));
  return true;
}

using codegen::cuda::image_bytes;
using codegen::cuda::launch_step;

// y = gelu(x W1 + b1) W2: the first layer a generated dense kernel with its epilogue, the second
// a cuBLAS GEMM; x [m, k] in, y [m, n] out, the weights constants, h [m, hidden] never leaves
// the GPU.
struct Mlp {
  static constexpr int64_t m = 64, k = 96, hidden = 256, n = 80;
  std::vector<float> w1 = testing::random_values(k * hidden, 21);
  std::vector<float> b1 = testing::random_values(hidden, 22);
  std::vector<float> w2 = testing::random_values(hidden * n, 23);
  GpuProgram program;

  explicit Mlp(bool use_graph) {
    te::Tensor bias = te::placeholder({hidden}, DType::f32, "bias");
    absl::StatusOr<codegen::cuda::GpuKernelDef> def =
        codegen::cuda::gpu_dense(m, hidden, k, {bias}, [&](te::Expr acc, te::Var, te::Var j) {
          te::Expr y = acc + bias(j);
          return 0.5f * y * (1.0f + te::erf(y * 0.70710678f));
        });
    REQUIRE(def.ok());
    const testing::GpuCompiled dense =
        testing::compile_gpu(*def, "mlp_dense_gelu", codegen::cuda::preferred_cuda_arch());
    GpuProgram& p = program;
    const uint64_t x = reserve(p, 4 * m * k), y = reserve(p, 4 * m * n),
                   h = reserve(p, 4 * m * hidden);
    const uint64_t cw1 = reserve(p, 4 * k * hidden), cb1 = reserve(p, 4 * hidden),
                   cw2 = reserve(p, 4 * hidden * n);
    program.arg_offsets = {x, y};
    program.constant_offsets = {cw1, cb1, cw2};
    program.images = {image_bytes(dense.image)};
    GemmStep g;
    g.m = m, g.n = n, g.k = hidden;
    g.lda = hidden, g.ldb = n, g.ldc = n;
    g.a = h, g.b = cw2, g.c = y;
    program.steps = {launch_step(dense.image, 0, {x, cw1, cb1, h}), g};
    program.use_graph = use_graph;
  }
  std::vector<const void*> constants() const { return {w1.data(), b1.data(), w2.data()}; }
  std::vector<uint64_t> constant_bytes() const {
    return {4 * w1.size(), 4 * b1.size(), 4 * w2.size()};
  }
  std::vector<float> reference(const std::vector<float>& x) const {
    std::vector<float> h = testing::matmul_reference(x, w1, m, hidden, k);
    for (int64_t i = 0; i < m * hidden; ++i) {
      const double v = double(h[i]) + b1[i % hidden];
      h[i] = static_cast<float>(0.5 * v * (1 + std::erf(v * 0.70710678)));
    }
    return testing::matmul_reference(h, w2, m, n, hidden);
  }
};

TEST_CASE("a generated kernel and a cuBLAS GEMM run as one program, replayed as a CUDA graph",
          "[rt_cuda][gpu]") {
  if (skip_without_device()) return;
  Mlp mlp(/*use_graph=*/true);
  std::unique_ptr<ProgramRunner> runner;
  const std::string made =
      ProgramRunner::create(mlp.program, {4 * Mlp::m * Mlp::k, 4 * Mlp::m * Mlp::n}, 1,
                            mlp.constants(), mlp.constant_bytes(), &runner);
  INFO(made);
  REQUIRE(made.empty());
  for (uint32_t round = 0; round < 3; ++round) {
    std::vector<float> x = testing::random_values(Mlp::m * Mlp::k, 30 + round);
    std::vector<float> y(Mlp::m * Mlp::n, NAN);
    void* args[] = {x.data(), y.data()};
    const std::string ran = runner->run(args);
    INFO("round " << round << ": " << ran);
    REQUIRE(ran.empty());
    CHECK(testing::max_scaled_error(y, mlp.reference(x)) < 1e-4);
  }
  CHECK(runner->uses_graph());
  WARN(runner->describe());
  std::vector<double> ms;
  REQUIRE(runner->time_steps(2, 5, 10, &ms).empty());
  REQUIRE(ms.size() == 5);
  for (double t : ms) CHECK(t > 0);
}

TEST_CASE("the cuda module runs a GPU program through its C entry points", "[rt_cuda][gpu]") {
  if (skip_without_device()) return;
  Mlp mlp(/*use_graph=*/false);
  const std::vector<uint8_t> params = encode_program(mlp.program);
  const int64_t xs[] = {Mlp::m, Mlp::k}, ys[] = {Mlp::m, Mlp::n};
  const collage_tensor_desc_t args[] = {{COLLAGE_DTYPE_F32, 2, xs}, {COLLAGE_DTYPE_F32, 2, ys}};
  const int64_t s1[] = {Mlp::k, Mlp::hidden}, s2[] = {Mlp::hidden}, s3[] = {Mlp::hidden, Mlp::n};
  const collage_tensor_desc_t cdescs[] = {
      {COLLAGE_DTYPE_F32, 2, s1}, {COLLAGE_DTYPE_F32, 1, s2}, {COLLAGE_DTYPE_F32, 2, s3}};
  std::vector<const void*> constants = mlp.constants();
  const collage_kernel_desc_t desc =
      testing::gpu_program_desc(params, args, 2, 1, cdescs, constants.data(), 3);
  const collage_rt_module_v1_t* m = module_table();
  char err[1024] = {};
  void* kernel = nullptr;
  INFO(err);
  REQUIRE(m->kernel_create(&desc, &kernel, err, sizeof err) == 0);
  CHECK(m->kernel_task_count(kernel) == 1);
  std::vector<float> x = testing::random_values(Mlp::m * Mlp::k, 40), y(Mlp::m * Mlp::n, NAN);
  void* run_args[] = {x.data(), y.data()};
  CHECK(m->kernel_run(kernel, run_args, 0, 1, err, sizeof err) == 0);
  CHECK(testing::max_scaled_error(y, mlp.reference(x)) < 1e-4);
  m->kernel_destroy(kernel);
}

TEST_CASE("a cubin the device cannot load or a kernel it lacks is refused by name",
          "[rt_cuda][gpu]") {
  if (skip_without_device()) return;
  Mlp mlp(/*use_graph=*/false);
  const std::vector<uint64_t> arg_bytes = {4 * Mlp::m * Mlp::k, 4 * Mlp::m * Mlp::n};
  std::unique_ptr<ProgramRunner> runner;
  GpuProgram garbage = mlp.program;
  garbage.images[0] = {0x7f, 'E', 'L', 'F', 0, 0, 0, 0};
  std::string e =
      ProgramRunner::create(garbage, arg_bytes, 1, mlp.constants(), mlp.constant_bytes(), &runner);
  CHECK(e.find("cubin 0 does not load") != std::string::npos);
  GpuProgram renamed = mlp.program;
  std::get<LaunchStep>(renamed.steps[0]).function = "no_such_kernel";
  e = ProgramRunner::create(renamed, arg_bytes, 1, mlp.constants(), mlp.constant_bytes(), &runner);
  CHECK(e.find("step 0: cubin 0 has no kernel no_such_kernel") != std::string::npos);
  CHECK(runner == nullptr);
}

TEST_CASE("a chain of small kernels runs faster as a CUDA graph than launched step by step",
          "[rt_cuda][gpu]") {
  if (skip_without_device()) return;
  // x <- x * 0.5 + 1, 64 times over 4096 elements: launch-bound work.
  constexpr int64_t kElements = 4096, kSteps = 64;
  te::Tensor in = te::placeholder({kElements}, DType::f32, "in");
  te::Tensor out = te::compute(
      {kElements}, [&](const std::vector<te::Var>& i) { return in(i[0]) * 0.5f + 1.0f; }, "axpb");
  absl::StatusOr<codegen::cuda::GpuKernelDef> def = codegen::cuda::gpu_elementwise(out, {in});
  REQUIRE(def.ok());
  const testing::GpuCompiled k =
      testing::compile_gpu(*def, "axpb", codegen::cuda::preferred_cuda_arch());
  std::vector<double> medians;
  for (bool graph : {false, true}) {
    GpuProgram p;
    p.arena_bytes = 2 * 4 * kElements;
    p.arg_offsets = {0, 4 * kElements};
    p.images = {image_bytes(k.image)};
    for (int64_t s = 0; s < kSteps; ++s) {
      const uint64_t from = s == 0 ? 0 : 4 * kElements, to = 4 * kElements;
      p.steps.push_back(launch_step(k.image, 0, {from, to}));
    }
    p.use_graph = graph;
    std::unique_ptr<ProgramRunner> runner;
    REQUIRE(ProgramRunner::create(p, {4 * kElements, 4 * kElements}, 1, {}, {}, &runner).empty());
    std::vector<float> x = testing::random_values(kElements, 50), y(kElements, NAN);
    void* args[] = {x.data(), y.data()};
    REQUIRE(runner->run(args).empty());
    CHECK(runner->uses_graph() == graph);
    std::vector<float> ref = x;
    for (int64_t s = 0; s < kSteps; ++s)
      for (float& v : ref) v = v * 0.5f + 1.0f;
    CHECK(testing::max_scaled_error(y, ref) < 1e-6);
    std::vector<double> ms;
    REQUIRE(runner->time_steps(3, 9, 20, &ms).empty());
    std::sort(ms.begin(), ms.end());
    medians.push_back(ms[ms.size() / 2]);
  }
  WARN("64 launches: step by step " << medians[0] * 1000 << " us, CUDA graph " << medians[1] * 1000
                                    << " us per run");
}

}  // namespace
}  // namespace collage::rt_cuda
