// GEMM steps (cuBLAS) and convolution steps (cuDNN) of GPU programs run through ProgramRunner
// and match CPU references computed in double, to 1e-4 of each element's scale (fp32 with TF32
// off; see library_steps_util.h). Tagged [gpu]: without a usable device each case says why and
// skips.
#include <catch2/catch.hpp>

#include "../codegen_cuda/gpu_test_util.h"
#include "cuda_driver.h"
#include "library_steps_util.h"

namespace collage::rt_cuda {
namespace {

using testing::check_close;
using testing::random_values;
using testing::run_program;

bool skip_without_device() {
  std::string why;
  if (cuda_driver(&why) != nullptr) return false;
  WARN("SKIPPED (no usable CUDA device): " << why);
  SUCCEED("SKIPPED (no usable CUDA device): " + why);
  return true;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

struct GemmCase {
  const char* name;
  bool trans_a, trans_b;
  int64_t batch;
  int64_t pad_a, pad_b;  // row strides this much past the stored rows' widths
  bool b_constant;       // B uploaded once as a constant rather than copied in each run
};

TEST_CASE("cuBLAS GEMMs match the reference: transposes, padded rows, a strided batch",
          "[rt_cuda][gpu]") {
  if (skip_without_device()) return;
  const GemmCase cases[] = {
      {"67x45x33", false, false, 1, 0, 0, false},
      {"trans_a", true, false, 1, 0, 0, false},
      {"trans_b, B a constant", false, true, 1, 0, 0, true},
      {"both transposed, padded rows", true, true, 1, 3, 5, false},
      {"batch 3, strided with gaps", false, false, 3, 0, 0, false},
      {"batch 3, both transposed, B a constant", true, true, 3, 2, 1, true},
  };
  for (const GemmCase& t : cases) {
    INFO(t.name);
    GemmStep g;
    g.trans_a = t.trans_a, g.trans_b = t.trans_b;
    g.m = 67, g.n = 45, g.k = 33, g.batch = t.batch;
    const int64_t a_rows = t.trans_a ? g.k : g.m, a_cols = t.trans_a ? g.m : g.k;
    const int64_t b_rows = t.trans_b ? g.n : g.k, b_cols = t.trans_b ? g.k : g.n;
    g.lda = a_cols + t.pad_a, g.ldb = b_cols + t.pad_b, g.ldc = g.n;
    // Gaps between the matrices of a batch, so that a stride taken as a matrix size shows.
    g.stride_a = a_rows * g.lda + 7, g.stride_b = b_rows * g.ldb + 3, g.stride_c = g.m * g.n;
    std::vector<float> a = random_values(g.batch * g.stride_a, 1);
    std::vector<float> b = random_values(g.batch * g.stride_b, 2);
    std::vector<float> c(g.batch * g.stride_c, NAN);
    GpuProgram p;
    g.a = reserve(p, 4 * a.size()), g.b = reserve(p, 4 * b.size()), g.c = reserve(p, 4 * c.size());
    p.steps = {g};
    std::unique_ptr<ProgramRunner> runner;
    std::string e;
    if (t.b_constant) {
      p.arg_offsets = {g.a, g.c};
      p.constant_offsets = {g.b};
      e = run_program(p, 1, {&a, &c}, {&b}, &runner);
    } else {
      p.arg_offsets = {g.a, g.b, g.c};
      e = run_program(p, 2, {&a, &b, &c}, {}, &runner);
    }
    INFO(e);
    REQUIRE(e.empty());
    check_close(c, testing::gemm_reference(g, a, b, std::vector<float>(c.size())));
  }
}

TEST_CASE("a cuBLAS GEMM with alpha 0.5 and beta 1 accumulates into C in place", "[rt_cuda][gpu]") {
  if (skip_without_device()) return;
  GemmStep g;
  g.m = 40, g.n = 50, g.k = 30, g.lda = 30, g.ldb = 50;
  g.ldc = 56;  // the padding between C's rows must come back as it went in
  g.alpha = 0.5f, g.beta = 1.0f;
  std::vector<float> a = random_values(g.m * g.k, 3), b = random_values(g.k * g.n, 4);
  std::vector<float> c_in = random_values(g.m * g.ldc, 5), c_out(c_in.size(), NAN);
  GpuProgram p;
  g.a = reserve(p, 4 * a.size()), g.b = reserve(p, 4 * b.size());
  g.c = reserve(p, 4 * c_in.size());
  // C is an input and the output at the same offset: copied in, accumulated into, copied out.
  p.arg_offsets = {g.a, g.b, g.c, g.c};
  p.steps = {g};
  std::unique_ptr<ProgramRunner> runner;
  const std::string e = run_program(p, 3, {&a, &b, &c_in, &c_out}, {}, &runner);
  INFO(e);
  REQUIRE(e.empty());
  check_close(c_out, testing::gemm_reference(g, a, b, c_in));
}

TEST_CASE("BERT's feed-forward GEMM 128x3072x768 runs through cuBLAS", "[rt_cuda][gpu]") {
  if (skip_without_device()) return;
  GemmStep g;
  g.m = 128, g.n = 3072, g.k = 768, g.lda = g.k, g.ldb = g.n, g.ldc = g.n;
  std::vector<float> x = random_values(g.m * g.k, 6), w = random_values(g.k * g.n, 7);
  std::vector<float> y(g.m * g.n, NAN);
  GpuProgram p;
  g.a = reserve(p, 4 * x.size()), g.b = reserve(p, 4 * w.size()), g.c = reserve(p, 4 * y.size());
  p.arg_offsets = {g.a, g.c};
  p.constant_offsets = {g.b};
  p.steps = {g};
  std::unique_ptr<ProgramRunner> runner;
  const std::string e = run_program(p, 1, {&x, &y}, {&w}, &runner);
  INFO(e);
  REQUIRE(e.empty());
  check_close(y, testing::gemm_reference(g, x, w, std::vector<float>(y.size())));
  CHECK(contains(runner->describe(), "; cublas "));
}

struct ConvCase {
  const char* name;
  ConvStep step;
  bool constants;  // weight and bias uploaded once rather than copied in each run
};

ConvStep conv(int64_t n, int64_t c, int64_t hw, int64_t o, int64_t k, int64_t stride, int64_t pad,
              int64_t groups, bool bias, ConvActivation act) {
  ConvStep s;
  s.n = n, s.c = c, s.h = hw, s.w = hw, s.o = o, s.kh = k, s.kw = k;
  s.stride_h = s.stride_w = stride, s.pad_h = s.pad_w = pad, s.groups = groups;
  s.has_bias = bias, s.activation = act;
  return s;
}

TEST_CASE("cuDNN convolutions match the reference", "[rt_cuda][gpu]") {
  if (skip_without_device()) return;
  const ConvActivation none = ConvActivation::none, relu = ConvActivation::relu;
  ConvStep dilated = conv(2, 16, 20, 24, 3, 1, 2, 2, true, relu);
  dilated.dilation_h = dilated.dilation_w = 2;
  const ConvCase cases[] = {
      {"ResNet 3x3 [1,64,56,56] x [64,64,3,3], bias and relu",
       conv(1, 64, 56, 64, 3, 1, 1, 1, true, relu), true},
      {"7x7 stride 2 pad 3 [1,3,224,224] -> 64, bias", conv(1, 3, 224, 64, 7, 2, 3, 1, true, none),
       false},
      {"depthwise 3x3, 32 groups, relu", conv(1, 32, 28, 32, 3, 1, 1, 32, false, relu), true},
      {"1x1 stride 2, batch 2, no bias", conv(2, 64, 28, 128, 1, 2, 0, 1, false, none), false},
      {"batch 2, dilation 2, 2 groups, bias and relu", dilated, true},
  };
  for (const ConvCase& t : cases) {
    INFO(t.name);
    ConvStep s = t.step;
    std::vector<float> x = random_values(s.n * s.c * s.h * s.w, 11);
    std::vector<float> w = random_values(s.o * s.c / s.groups * s.kh * s.kw, 12);
    std::vector<float> bias = random_values(s.has_bias ? s.o : 0, 13);
    std::vector<float> y(s.n * s.o * s.out_h() * s.out_w(), NAN);
    GpuProgram p;
    s.x = reserve(p, 4 * x.size()), s.weight = reserve(p, 4 * w.size());
    s.bias = s.has_bias ? reserve(p, 4 * bias.size()) : 0;
    s.y = reserve(p, 4 * y.size());
    p.steps = {s};
    std::vector<std::vector<float>*> weights = {&w};
    std::vector<uint64_t> weight_offsets = {s.weight};
    if (s.has_bias) {
      weights.push_back(&bias);
      weight_offsets.push_back(s.bias);
    }
    std::unique_ptr<ProgramRunner> runner;
    std::string e;
    if (t.constants) {
      p.arg_offsets = {s.x, s.y};
      p.constant_offsets = weight_offsets;
      e = run_program(p, 1, {&x, &y}, {weights.begin(), weights.end()}, &runner);
    } else {
      p.arg_offsets = {s.x};
      p.arg_offsets.insert(p.arg_offsets.end(), weight_offsets.begin(), weight_offsets.end());
      p.arg_offsets.push_back(s.y);
      std::vector<std::vector<float>*> args = {&x};
      args.insert(args.end(), weights.begin(), weights.end());
      args.push_back(&y);
      e = run_program(p, static_cast<int>(args.size()) - 1, args, {}, &runner);
    }
    INFO(e);
    REQUIRE(e.empty());
    check_close(y, testing::conv_reference(s, x, w, bias));
    const std::string chosen = runner->describe();
    CHECK(contains(chosen, "; conv 0: "));
    CHECK(contains(chosen, " ms measured"));
    WARN(t.name << ": " << chosen);
  }
}

TEST_CASE("a GEMM feeds a convolution through the arena; the second run replays the CUDA graph",
          "[rt_cuda][gpu]") {
  if (skip_without_device()) return;
  // h [8, 144] = W0 [8, 20] x X [20, 144], read by the convolution as [1, 8, 12, 12]; h never
  // leaves the GPU. y = relu(conv3x3(h) + bias), [1, 16, 12, 12].
  GemmStep g;
  g.m = 8, g.n = 144, g.k = 20, g.lda = g.k, g.ldb = g.n, g.ldc = g.n;
  ConvStep s = conv(1, 8, 12, 16, 3, 1, 1, 1, true, ConvActivation::relu);
  std::vector<float> w0 = random_values(g.m * g.k, 21), w1 = random_values(16 * 8 * 9, 22),
                     b1 = random_values(16, 23);
  GpuProgram p;
  g.b = reserve(p, 4 * g.k * g.n);  // X, the input
  s.y = reserve(p, 4 * 16 * 12 * 12);
  g.a = reserve(p, 4 * w0.size()), s.weight = reserve(p, 4 * w1.size());
  s.bias = reserve(p, 4 * b1.size());
  g.c = s.x = reserve(p, 4 * g.m * g.n);
  p.arg_offsets = {g.b, s.y};
  p.constant_offsets = {g.a, s.weight, s.bias};
  p.steps = {g, s};
  std::unique_ptr<ProgramRunner> runner;
  for (uint32_t round = 0; round < 2; ++round) {
    INFO("run " << round);
    std::vector<float> x = random_values(g.k * g.n, 30 + round), y(16 * 12 * 12, NAN);
    std::string e;
    if (round == 0) {
      e = run_program(p, 1, {&x, &y}, {&w0, &w1, &b1}, &runner);
    } else {
      void* args[] = {x.data(), y.data()};
      e = runner->run(args);
    }
    INFO(e);
    REQUIRE(e.empty());
    const testing::Expected h = testing::gemm_reference(g, w0, x, std::vector<float>(g.m * g.n));
    check_close(
        y, testing::conv_reference(s, std::vector<float>(h.value.begin(), h.value.end()), w1, b1));
  }
  CHECK(runner->uses_graph());
  WARN(runner->describe());
}

}  // namespace
}  // namespace collage::rt_cuda
