// cuBLAS and cuDNN (the cuda runtime module's library steps) against collage's generated GPU
// kernels, on the same sizes, as GPU programs timed by the module's own runner (CUDA events,
// steps replayed from a CUDA graph): the per-operator choice a GPU placement will make. For each
// case both programs run on the same random inputs and their outputs are compared. Prints one
// JSON object per case (bench/RESULTS.md has the table); without a usable device it says why and
// exits 1.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "codegen/cuda/cuda_codegen.h"
#include "codegen/cuda/cuda_device.h"
#include "codegen/cuda/cuda_fingerprint.h"
#include "codegen/cuda/gpu_schedules.h"
#include "codegen/cuda/launch_step.h"
#include "cuda_driver.h"
#include "program_runner.h"

namespace collage {
namespace {

using codegen::cuda::Conv2dShape;
using codegen::cuda::GpuKernelDef;
using rt_cuda::GpuProgram;

// Both sides of a case: programs over the same arguments (inputs, then the one output).
struct Case {
  std::string name;
  double flops = 0;
  std::vector<uint64_t> arg_bytes;  // inputs then the output
  std::function<absl::StatusOr<GpuProgram>()> generated, library;
};

absl::StatusOr<codegen::cuda::CompiledCuda> compile(const absl::StatusOr<GpuKernelDef>& def,
                                                    const std::string& name) {
  if (!def.ok()) return def.status();
  absl::StatusOr<te::PrimFunc> f = codegen::cuda::lower_gpu(*def, name);
  if (!f.ok()) return f.status();
  absl::StatusOr<codegen::cuda::CudaKernel> k = codegen::cuda::generate_cuda(*f);
  if (!k.ok()) return k.status();
  codegen::cuda::NvrtcOptions options;
  options.arch = codegen::cuda::preferred_cuda_arch();
  return codegen::cuda::compile_cuda(*k, options);
}

// A program whose arena holds the arguments in order; `offsets` gets their offsets.
GpuProgram program_over(const std::vector<uint64_t>& arg_bytes, std::vector<uint64_t>* offsets) {
  GpuProgram p;
  for (uint64_t b : arg_bytes) p.arg_offsets.push_back(reserve(p, b));
  *offsets = p.arg_offsets;
  return p;
}

// One generated kernel over all the arguments, in order.
std::function<absl::StatusOr<GpuProgram>()> generated_program(
    std::vector<uint64_t> arg_bytes, std::function<absl::StatusOr<GpuKernelDef>()> define,
    std::string name) {
  return [=]() -> absl::StatusOr<GpuProgram> {
    absl::StatusOr<codegen::cuda::CompiledCuda> c = compile(define(), name);
    if (!c.ok()) return c.status();
    std::vector<uint64_t> at;
    GpuProgram p = program_over(arg_bytes, &at);
    p.images = {codegen::cuda::image_bytes(*c)};
    p.steps = {codegen::cuda::launch_step(*c, 0, at)};
    return p;
  };
}

rt_cuda::GemmStep gemm(int64_t m, int64_t n, int64_t k, uint64_t a, uint64_t b, uint64_t c) {
  rt_cuda::GemmStep g;
  g.m = m, g.n = n, g.k = k, g.lda = k, g.ldb = n, g.ldc = n;
  g.a = a, g.b = b, g.c = c;
  return g;
}

Case matmul(int64_t m, int64_t n, int64_t k) {
  const std::vector<uint64_t> bytes = {uint64_t(4 * m * k), uint64_t(4 * k * n),
                                       uint64_t(4 * m * n)};
  return {"matmul " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k),
          2.0 * m * n * k, bytes,
          generated_program(
              bytes, [=] { return codegen::cuda::gpu_matmul(m, n, k); }, "matmul"),
          [=]() -> absl::StatusOr<GpuProgram> {
            std::vector<uint64_t> at;
            GpuProgram p = program_over(bytes, &at);
            p.steps = {gemm(m, n, k, at[0], at[1], at[2])};
            return p;
          }};
}

te::Expr gelu(te::Expr y) {
  return 0.5f * y * (1.0f + te::erf(y * 0.70710678f));
}

// BERT's first feed-forward layer: the generated dense kernel with bias and gelu in its epilogue,
// against a cuBLAS GEMM followed by a generated bias-and-gelu kernel.
Case dense_gelu(int64_t m, int64_t n, int64_t k) {
  const std::vector<uint64_t> bytes = {uint64_t(4 * m * k), uint64_t(4 * k * n), uint64_t(4 * n),
                                       uint64_t(4 * m * n)};
  return {"dense+gelu " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k),
          2.0 * m * n * k, bytes,
          generated_program(
              bytes,
              [=] {
                te::Tensor bias = te::placeholder({n}, DType::f32, "bias");
                return codegen::cuda::gpu_dense(
                    m, n, k, {bias},
                    [=](te::Expr acc, te::Var, te::Var j) { return gelu(acc + bias(j)); });
              },
              "dense_gelu"),
          [=]() -> absl::StatusOr<GpuProgram> {
            te::Tensor acc = te::placeholder({m, n}, DType::f32, "acc");
            te::Tensor bias = te::placeholder({n}, DType::f32, "bias");
            te::Tensor out = te::compute(
                {m, n},
                [&](const std::vector<te::Var>& i) { return gelu(acc(i[0], i[1]) + bias(i[1])); },
                "bias_gelu");
            absl::StatusOr<codegen::cuda::CompiledCuda> c =
                compile(codegen::cuda::gpu_elementwise(out, {acc, bias}), "bias_gelu");
            if (!c.ok()) return c.status();
            std::vector<uint64_t> at;
            GpuProgram p = program_over(bytes, &at);
            const uint64_t product = reserve(p, 4 * m * n);
            p.images = {codegen::cuda::image_bytes(*c)};
            p.steps = {gemm(m, n, k, at[0], at[1], product),
                       codegen::cuda::launch_step(*c, 0, {product, at[2], at[3]})};
            return p;
          }};
}

Conv2dShape conv_shape(int64_t batch, int64_t c, int64_t hw, int64_t o, int64_t k, int64_t stride,
                       int64_t pad) {
  Conv2dShape s;
  s.batch = batch, s.in_channels = c, s.height = s.width = hw, s.out_channels = o;
  s.kernel_h = s.kernel_w = k, s.stride = stride, s.pad = pad;
  return s;
}

rt_cuda::ConvStep conv_step(const Conv2dShape& s, int64_t groups) {
  rt_cuda::ConvStep c;
  c.n = s.batch, c.c = s.in_channels, c.h = s.height, c.w = s.width, c.o = s.out_channels;
  c.kh = s.kernel_h, c.kw = s.kernel_w, c.pad_h = c.pad_w = s.pad;
  c.stride_h = c.stride_w = s.stride, c.groups = groups;
  return c;
}

std::string conv_name(const char* what, const Conv2dShape& s) {
  return std::string(what) + " n" + std::to_string(s.batch) + " " + std::to_string(s.in_channels) +
         "->" + std::to_string(s.out_channels) + " " + std::to_string(s.height) + "x" +
         std::to_string(s.width) + " k" + std::to_string(s.kernel_h) + " s" +
         std::to_string(s.stride);
}

// A convolution with bias and relu: generated implicit GEMM against cuDNN (fused).
Case conv_bias_relu(const Conv2dShape& s) {
  const int64_t out = s.batch * s.out_channels * s.out_height() * s.out_width();
  const std::vector<uint64_t> bytes = {
      uint64_t(4 * s.batch * s.in_channels * s.height * s.width),
      uint64_t(4 * s.out_channels * s.in_channels * s.kernel_h * s.kernel_w),
      uint64_t(4 * s.out_channels), uint64_t(4 * out)};
  return {conv_name("conv+bias+relu", s), 2.0 * out * s.in_channels * s.kernel_h * s.kernel_w,
          bytes,
          generated_program(
              bytes,
              [=] {
                te::Tensor bias = te::placeholder({s.out_channels}, DType::f32, "bias");
                return codegen::cuda::gpu_conv2d(s, {bias}, [=](te::Expr acc, te::Var o, te::Var) {
                  return te::maximum(acc + bias(o), 0.0f);
                });
              },
              "conv_bias_relu"),
          [=]() -> absl::StatusOr<GpuProgram> {
            std::vector<uint64_t> at;
            GpuProgram p = program_over(bytes, &at);
            rt_cuda::ConvStep c = conv_step(s, 1);
            c.x = at[0], c.weight = at[1], c.bias = at[2], c.y = at[3];
            c.has_bias = true;
            c.activation = rt_cuda::ConvActivation::relu;
            p.steps = {c};
            return p;
          }};
}

Case depthwise(const Conv2dShape& s) {
  const int64_t out = s.batch * s.out_channels * s.out_height() * s.out_width();
  const std::vector<uint64_t> bytes = {uint64_t(4 * s.batch * s.in_channels * s.height * s.width),
                                       uint64_t(4 * s.in_channels * s.kernel_h * s.kernel_w),
                                       uint64_t(4 * out)};
  return {conv_name("depthwise", s), 2.0 * out * s.kernel_h * s.kernel_w, bytes,
          generated_program(
              bytes, [=] { return codegen::cuda::gpu_depthwise_conv2d(s); }, "depthwise"),
          [=]() -> absl::StatusOr<GpuProgram> {
            std::vector<uint64_t> at;
            GpuProgram p = program_over(bytes, &at);
            rt_cuda::ConvStep c = conv_step(s, s.in_channels);
            c.x = at[0], c.weight = at[1], c.y = at[2];
            p.steps = {c};
            return p;
          }};
}

std::vector<Case> cases() {
  return {matmul(1024, 1024, 1024),
          matmul(4096, 4096, 4096),
          matmul(128, 768, 768),
          dense_gelu(128, 3072, 768),
          dense_gelu(2048, 3072, 768),
          conv_bias_relu(conv_shape(1, 64, 56, 64, 3, 1, 1)),
          conv_bias_relu(conv_shape(16, 64, 56, 64, 3, 1, 1)),
          conv_bias_relu(conv_shape(1, 512, 7, 512, 3, 1, 1)),
          conv_bias_relu(conv_shape(1, 256, 56, 64, 1, 1, 0)),
          conv_bias_relu(conv_shape(1, 3, 224, 64, 7, 2, 3)),
          depthwise(conv_shape(1, 144, 56, 144, 3, 2, 1)),
          depthwise(conv_shape(16, 144, 56, 144, 3, 2, 1))};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Runs program `p` once on `args` (output last) and times its steps; the median ms, or an error
// naming the side.
std::string run_side(const char* side, const Case& c, const absl::StatusOr<GpuProgram>& p,
                     std::vector<std::vector<float>>& args, double* ms, std::string* notes) {
  if (!p.ok()) return std::string(side) + ": " + std::string(p.status().message());
  std::unique_ptr<rt_cuda::ProgramRunner> runner;
  const int inputs = static_cast<int>(c.arg_bytes.size()) - 1;
  if (std::string e = rt_cuda::ProgramRunner::create(*p, c.arg_bytes, inputs, {}, {}, &runner);
      !e.empty())
    return std::string(side) + ": " + e;
  std::vector<void*> pointers;
  for (std::vector<float>& a : args) pointers.push_back(a.data());
  if (std::string e = runner->run(pointers.data()); !e.empty()) return std::string(side) + ": " + e;
  std::vector<double> samples;
  if (std::string e = runner->time_steps(5, 21, 10, &samples); !e.empty())
    return std::string(side) + ": " + e;
  *ms = median(samples);
  *notes = runner->describe();
  return "";
}

std::string json_escape(std::string s) {
  for (char& ch : s)
    if (ch == '"' || ch == '\\') ch = '\'';
  return s;
}

// Every program is made (its kernels generated and compiled, for sm_90 without a device) before
// anything runs, so that a machine without a GPU still checks them.
int run() {
  const std::vector<Case> all = cases();
  std::vector<absl::StatusOr<GpuProgram>> generated, library;
  size_t failed = 0;
  for (const Case& c : all) {
    generated.push_back(c.generated());
    library.push_back(c.library());
    failed += !generated.back().ok() + !library.back().ok();
  }
  std::string why;
  if (rt_cuda::cuda_driver(&why) == nullptr) {
    std::fprintf(stderr,
                 "gpu_library_steps_bench: %zu programs made, %zu failed; no usable CUDA device "
                 "to run them: %s\n",
                 2 * all.size(), failed, why.c_str());
    return 1;
  }
  std::fprintf(stderr, "%s\n", codegen::cuda::cuda_fingerprint().to_string().c_str());
  bool ok = true;
  for (size_t i = 0; i < all.size(); ++i) {
    const Case& c = all[i];
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> uniform(-1.f, 1.f);
    std::vector<std::vector<float>> gen_args, lib_args;
    for (uint64_t b : c.arg_bytes) {
      gen_args.emplace_back(b / 4);
      for (float& v : gen_args.back()) v = uniform(rng);
    }
    lib_args = gen_args;
    double gen_ms = 0, lib_ms = 0;
    std::string gen_notes, lib_notes;
    std::string e = run_side("generated", c, generated[i], gen_args, &gen_ms, &gen_notes);
    if (e.empty()) e = run_side("library", c, library[i], lib_args, &lib_ms, &lib_notes);
    if (!e.empty()) {
      std::printf("{\"case\": \"%s\", \"error\": \"%s\"}\n", c.name.c_str(),
                  json_escape(e).c_str());
      ok = false;
      continue;
    }
    // The two outputs, relative to the largest magnitude.
    const std::vector<float>&g = gen_args.back(), &l = lib_args.back();
    double err = 0, scale = 0;
    for (size_t i = 0; i < g.size(); ++i) {
      err = std::max(err, std::fabs(double(g[i]) - l[i]));
      scale = std::max(scale, std::fabs(double(l[i])));
    }
    std::printf(
        "{\"case\": \"%s\", \"generated_ms\": %.5f, \"library_ms\": %.5f, \"library_speedup\": "
        "%.2f, \"generated_tflops\": %.2f, \"library_tflops\": %.2f, \"max_scaled_difference\": "
        "%.2e, \"library\": \"%s\"}\n",
        c.name.c_str(), gen_ms, lib_ms, gen_ms / lib_ms, c.flops / gen_ms * 1e-9,
        c.flops / lib_ms * 1e-9, scale > 0 ? err / scale : err, json_escape(lib_notes).c_str());
    std::fflush(stdout);
  }
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace collage

int main() {
  return collage::run();
}
