// The cuda backend: what it runs, how a group becomes one GPU program (steps, arena, constants),
// its candidates, and its registration without a device; on a GPU ([gpu]) whole groups against
// the reference executor, in process and through the runtime module.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "backends/cuda/cuda_chains.h"
#include "backends/cuda/cuda_lowering.h"
#include "codegen/cuda/cuda_device.h"
#include "collage/backends/cuda.h"
#include "collage/ops/elementwise.h"
#include "collage/ops/nn.h"
#include "common/backend_check.h"
#include "cuda_module.h"
#include "program_runner.h"

namespace collage {
namespace {

using rt_cuda::ConvStep;
using rt_cuda::GemmStep;
using rt_cuda::LaunchStep;
using testing::TestGraph;

std::shared_ptr<const OpAttrs> conv_attrs(std::vector<int64_t> pads,
                                          std::vector<int64_t> strides = {1, 1},
                                          int64_t group = 1) {
  return make_attrs<ConvAttrs>([&](auto& a) {
    a.pads = pads;
    a.strides = strides;
    a.group = group;
  });
}

// x [1, 3, 16, 16] -> Conv (3x3, pad 1, bias) -> Relu -> Sigmoid.
// (The graph's operators live in `t`'s context.)
Graph conv_chain(TestGraph& t) {
  ValueId x = t.input({1, 3, 16, 16});
  ValueId y =
      t.op("Conv", {x, t.constant({8, 3, 3, 3}), t.constant({8})}, conv_attrs({1, 1, 1, 1}));
  y = t.op("Relu", {y});
  return t.finish(t.op("Sigmoid", {y}));
}

// x [4, 32] -> MatMul -> Add (bias) -> Relu -> Gemm (C broadcast from [10]).
Graph mlp(TestGraph& t) {
  ValueId x = t.input({4, 32});
  ValueId h = t.op("MatMul", {x, t.constant({32, 64})});
  h = t.op("Relu", {t.op("Add", {h, t.constant({64})})});
  return t.finish(t.op("Gemm", {h, t.constant({64, 10}), t.constant({10})}));
}

std::vector<uint64_t> arg_bytes(const Graph& g) {
  std::vector<uint64_t> b;
  for (ValueId v : g.inputs()) b.push_back(g.value(v).type.bytes());
  for (ValueId v : g.outputs()) b.push_back(g.value(v).type.bytes());
  return b;
}

std::vector<uint64_t> constant_bytes(const cuda_backend::LoweredProgram& l) {
  std::vector<uint64_t> b;
  for (const Tensor& t : l.constants) b.push_back(t.bytes());
  return b;
}

TEST_CASE("cuda: a convolution chain is one cuDNN step with its relu and a generated sigmoid",
          "[cuda_backend]") {
  TestGraph t;
  const Graph g = conv_chain(t);
  absl::StatusOr<cuda_backend::LoweredProgram> l = cuda_backend::lower_group(g, false, 90);
  INFO((l.ok() ? "" : std::string(l.status().message())));
  REQUIRE(l.ok());
  REQUIRE(l->program.steps.size() == 1);  // uncompiled: the sigmoid kernel is only defined
  const auto& c = std::get<ConvStep>(l->program.steps[0]);
  CHECK((c.c == 3 && c.o == 8 && c.kh == 3 && c.pad_h == 1 && c.has_bias));
  CHECK(c.activation == rt_cuda::ConvActivation::relu);
  CHECK(l->constants.size() == 2);
  CHECK(rt_cuda::check_program(l->program, arg_bytes(g), constant_bytes(*l)).empty());
}

// Compiled kernels go to a cache of this test process's own (XDG_CACHE_HOME): ctest runs test
// cases side by side, and one removing a shared folder failed the other's build.
std::filesystem::path own_kernel_cache() {
  const std::filesystem::path cache =
      std::filesystem::temp_directory_path() / ("collage-cuda-test-" + std::to_string(getpid()));
  setenv("XDG_CACHE_HOME", cache.c_str(), 1);
  return cache;
}

TEST_CASE("cuda: an MLP is cuBLAS GEMMs and generated kernels over one arena, compiled by NVRTC",
          "[cuda_backend]") {
  const std::filesystem::path cache = own_kernel_cache();
  TestGraph t;
  const Graph g = mlp(t);
  absl::StatusOr<cuda_backend::LoweredProgram> l = cuda_backend::lower_group(g, true, 90);
  INFO((l.ok() ? "" : std::string(l.status().message())));
  REQUIRE(l.ok());
  const auto& steps = l->program.steps;
  REQUIRE(steps.size() == 5);
  const auto& first = std::get<GemmStep>(steps[0]);
  CHECK((first.m == 4 && first.n == 64 && first.k == 32 && first.beta == 0.0f));
  CHECK(std::holds_alternative<LaunchStep>(steps[1]));  // Add
  CHECK(std::holds_alternative<LaunchStep>(steps[2]));  // Relu
  const auto& broadcast = std::get<LaunchStep>(steps[3]);
  const auto& last = std::get<GemmStep>(steps[4]);
  CHECK((last.m == 4 && last.n == 10 && last.k == 64 && last.beta == 1.0f));
  // The broadcast C is written where the GEMM accumulates: the group's output, argument 1.
  CHECK(broadcast.args.back() == last.c);
  CHECK(last.c == l->program.arg_offsets[1]);
  CHECK(l->program.images.size() == 3);
  CHECK(l->constants.size() == 4);
  CHECK(rt_cuda::check_program(l->program, arg_bytes(g), constant_bytes(*l)).empty());
  // The program survives its binary form.
  const std::vector<uint8_t> bytes = rt_cuda::encode_program(l->program);
  rt_cuda::GpuProgram back;
  CHECK(rt_cuda::decode_program(bytes.data(), bytes.size(), &back).empty());
  std::filesystem::remove_all(cache);
}

// x [1, 16, 12, 12] -> depthwise Conv (3x3, stride 2, pad 1, bias) -> Relu.
Graph depthwise_relu(TestGraph& t) {
  ValueId x = t.input({1, 16, 12, 12});
  ValueId y = t.op("Conv", {x, t.constant({16, 1, 3, 3}), t.constant({16})},
                   conv_attrs({1, 1, 1, 1}, {2, 2}, 16));
  return t.finish(t.op("Relu", {y}));
}

TEST_CASE("cuda: a depthwise convolution is cuDNN's or, chosen, the generated kernel and epilogue",
          "[cuda_backend]") {
  const std::filesystem::path cache = own_kernel_cache();
  TestGraph t;
  const Graph g = depthwise_relu(t);
  absl::StatusOr<cuda_backend::LoweredProgram> library = cuda_backend::lower_group(g, true, 90);
  REQUIRE(library.ok());
  REQUIRE(library->program.steps.size() == 1);
  CHECK(std::get<ConvStep>(library->program.steps[0]).groups == 16);
  CHECK(library->depthwise_key == "1,16,12,12,3x3,2,1,true,true;");
  absl::StatusOr<cuda_backend::LoweredProgram> generated =
      cuda_backend::lower_group(g, true, 90, {.generated_depthwise = true});
  INFO((generated.ok() ? "" : std::string(generated.status().message())));
  REQUIRE(generated.ok());
  const auto& steps = generated->program.steps;
  REQUIRE(steps.size() == 2);  // the convolution into a buffer of its own, then bias and relu
  const auto& conv = std::get<LaunchStep>(steps[0]);
  const auto& epilogue = std::get<LaunchStep>(steps[1]);
  CHECK(conv.args.back() == epilogue.args[0]);
  CHECK(epilogue.args.back() == generated->program.arg_offsets[1]);
  CHECK(generated->program.arena_bytes > library->program.arena_bytes);
  CHECK(
      rt_cuda::check_program(generated->program, arg_bytes(g), constant_bytes(*generated)).empty());
  std::filesystem::remove_all(cache);
}

TEST_CASE("cuda: operators, types and attributes it does not run are refused by node",
          "[cuda_backend]") {
  TestGraph t;
  ValueId x = t.input({1, 4, 8, 8});
  ValueId asym = t.op("Conv", {x, t.constant({4, 4, 3, 3})}, conv_attrs({1, 1, 0, 0}));
  ValueId soft = t.op("Softmax", {asym});
  ValueId half = t.op("Cast", {soft}, make_attrs<CastAttrs>([](auto& a) { a.to = "f16"; }));
  const Graph g = t.finish(t.op("Relu", {half}));
  auto why = [&](NodeId n) {
    return std::string(cuda_backend::check_node(g, g.node(n)).message());
  };
  CHECK(why(0).find("only symmetric padding") != std::string::npos);
  CHECK(why(1).find("does not run this operator") != std::string::npos);
  CHECK(why(3).find("only f32 values") != std::string::npos);

  TestGraph b;
  ValueId a = b.input({2, 3, 5, 6});
  const Graph bad = b.finish(b.op("MatMul", {a, b.constant({1, 6, 7})}));
  CHECK(std::string(cuda_backend::check_node(bad, bad.node(0)).message())
            .find("same batch dimensions") != std::string::npos);
}

TEST_CASE("cuda: candidates are chains of the nodes it runs, every prefix", "[cuda_backend]") {
  TestGraph t;
  ValueId x = t.input({4, 32});
  ValueId h = t.op("MatMul", {x, t.constant({32, 16})});  // 0
  h = t.op("Relu", {h});                                  // 1
  h = t.op("Softmax", {h});                               // 2: not run here
  h = t.op("Tanh", {h});                                  // 3
  const Graph g = t.finish(h);
  const std::vector<NodeSet> c = cuda_backend::chains(g, 8);
  auto has = [&](std::vector<NodeId> nodes) {
    const NodeSet s = NodeSet::of(g.nodes().size(), nodes);
    return std::find(c.begin(), c.end(), s) != c.end();
  };
  CHECK(c.size() == 4);
  CHECK(has({0}));
  CHECK(has({0, 1}));
  CHECK(has({1}));  // a chain starts at every node
  CHECK(has({3}));
}

TEST_CASE("cuda: the backend is registered where a device is usable, else says why",
          "[cuda_backend]") {
  BackendRegistry registry;
  REQUIRE(register_cuda_backend(registry).ok());
  if (codegen::cuda::probe_cuda_device().ok()) {
    REQUIRE(registry.find(kCudaBackend) != nullptr);
    CHECK(registry.find(kCudaBackend)->device() == DeviceKind::cuda);
  } else {
    CHECK(registry.find(kCudaBackend) == nullptr);
    CHECK(registry.unavailable_reason(kCudaBackend).find("no usable CUDA device") !=
          std::string::npos);
  }
}

// The backend, or null after saying why the case is skipped.
std::unique_ptr<Backend> backend_or_skip() {
  absl::StatusOr<std::unique_ptr<Backend>> b = make_cuda_backend();
  if (!b.ok()) {
    WARN("SKIPPED (no usable CUDA device): " << b.status().message());
    return nullptr;
  }
  return std::move(*b);
}

TEST_CASE("cuda: whole groups match the reference on a GPU", "[cuda_backend][gpu]") {
  std::unique_ptr<Backend> b = backend_or_skip();
  if (!b) return;
  const testing::GroupCheck check{.tolerance = 1e-4,
                                  .elementwise = false,
                                  .claim = true,
                                  .threads = {1},
                                  .module = rt_cuda::module_table()};
  TestGraph c, p;
  testing::check_group(*b, conv_chain(c), check);
  testing::check_group(*b, mlp(p), check);
  const testing::GroupCheck plain{.tolerance = 1e-4, .elementwise = false, .threads = {1}};
  TestGraph d;  // depthwise, stride 2
  ValueId x = d.input({2, 16, 9, 9});
  testing::check_group(
      *b,
      d.finish(d.op("Conv", {x, d.constant({16, 1, 3, 3})}, conv_attrs({1, 1, 1, 1}, {2, 2}, 16))),
      plain);
  TestGraph dw;  // depthwise with bias and relu, whichever way the backend measured faster
  testing::check_group(*b, depthwise_relu(dw), check);
  TestGraph m;  // a batched MatMul over the same batch
  ValueId a = m.input({2, 5, 25});
  testing::check_group(*b, m.finish(m.op("MatMul", {a, m.constant({2, 25, 7})})), plain);
}

}  // namespace
}  // namespace collage

namespace collage {
namespace {

TEST_CASE("cuda: both ways of a depthwise convolution give the same output on a GPU",
          "[cuda_backend][gpu]") {
  std::unique_ptr<Backend> b = backend_or_skip();
  if (!b) return;
  TestGraph t;
  const Graph g = depthwise_relu(t);
  const int arch = codegen::cuda::preferred_cuda_arch();
  std::vector<std::vector<float>> outputs;
  for (bool generated : {false, true}) {
    absl::StatusOr<cuda_backend::LoweredProgram> l =
        cuda_backend::lower_group(g, true, arch, {.generated_depthwise = generated});
    REQUIRE(l.ok());
    std::vector<const void*> constants;
    for (const Tensor& c : l->constants) constants.push_back(c.raw());
    std::unique_ptr<rt_cuda::ProgramRunner> runner;
    const std::string made = rt_cuda::ProgramRunner::create(l->program, arg_bytes(g), 1, constants,
                                                            constant_bytes(*l), &runner);
    INFO(made);
    REQUIRE(made.empty());
    Tensor x = t.feed(g)[0];
    std::vector<float> y(16 * 6 * 6, NAN);  // [1, 16, 6, 6]
    void* args[] = {x.raw(), y.data()};
    REQUIRE(runner->run(args).empty());
    std::vector<double> ms;
    REQUIRE(runner->time_steps(2, 5, 10, &ms).empty());
    std::sort(ms.begin(), ms.end());
    WARN((generated ? "generated" : "cuDNN")
         << ": " << ms[2] * 1000 << " us; " << runner->describe());
    outputs.push_back(std::move(y));
  }
  double worst = 0;
  for (size_t i = 0; i < outputs[0].size(); ++i)
    worst = std::max(worst, std::fabs(double(outputs[0][i]) - outputs[1][i]));
  CHECK(worst < 1e-5);
}

}  // namespace
}  // namespace collage
