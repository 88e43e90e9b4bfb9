// The GPU schedules (codegen/cuda/gpu_schedules.h) timed on device 0 at the sizes of the models
// collage targets (BERT-base, ResNet-50, MobileNetV2 at batch 1 and 16): each kernel is generated,
// compiled by NVRTC for the device and timed with CUDA events on device-resident arguments.
// Prints one JSON object per kernel (op, its sizes, median and best milliseconds per launch over
// samples of back-to-back launches, FLOPs and bytes)
// for bench/python/gpu_schedules_vs_torch.py, which times PyTorch's kernels on the same sizes and
// prints the ratios. Without a usable device it says why and exits 1.
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bench/te_bench_util.h"
#include "codegen/cuda/cuda_codegen.h"
#include "codegen/cuda/cuda_device.h"
#include "codegen/cuda/cuda_fingerprint.h"
#include "codegen/cuda/gpu_schedules.h"
#include "codegen/cuda/nvrtc_compiler.h"

namespace collage {
namespace {

using codegen::cuda::Conv2dShape;
using codegen::cuda::GpuKernelDef;
using codegen::cuda::MatmulTiling;

struct Case {
  std::string op;
  std::map<std::string, int64_t> sizes;  // the op's sizes, as the torch side reads them
  double flops = 0, bytes = 0;           // useful work: 2 per multiply-add; bytes read + written
  std::function<absl::StatusOr<GpuKernelDef>()> define;
  std::string tiling;  // the GEMM tiling, "block_m x block_n x block_k / thread_m x thread_n"
};

std::string tiling_text(const MatmulTiling& t) {
  return std::to_string(t.block_m) + "x" + std::to_string(t.block_n) + "x" +
         std::to_string(t.block_k) + "/" + std::to_string(t.thread_m) + "x" +
         std::to_string(t.thread_n);
}

// The default tiling and larger ones (256 threads each), to see what per-shape tiling would win.
std::vector<MatmulTiling> tilings() {
  return {MatmulTiling{}, MatmulTiling{128, 64, 8, 8, 4}, MatmulTiling{128, 128, 8, 8, 8},
          MatmulTiling{128, 128, 16, 8, 8}};
}

Case matmul(int64_t m, int64_t n, int64_t k, const MatmulTiling& t = {}) {
  return {"matmul",
          {{"m", m}, {"n", n}, {"k", k}},
          2.0 * m * n * k,
          4.0 * (m * k + k * n + m * n),
          [=] { return codegen::cuda::gpu_matmul(m, n, k, t); },
          tiling_text(t)};
}

// BERT's first feed-forward dense: bias and exact gelu in the epilogue.
Case dense_gelu(int64_t m, int64_t n, int64_t k, const MatmulTiling& t = {}) {
  return {"dense_gelu",
          {{"m", m}, {"n", n}, {"k", k}},
          2.0 * m * n * k,
          4.0 * (m * k + k * n + n + m * n),
          [=] {
            te::Tensor bias = te::placeholder({n}, DType::f32, "bias");
            return codegen::cuda::gpu_dense(
                m, n, k, {bias},
                [=](te::Expr acc, te::Var, te::Var j) {
                  te::Expr y = acc + bias(j);
                  return 0.5f * y * (1.0f + te::erf(y * 0.70710678f));
                },
                t);
          },
          tiling_text(t)};
}

Case batch_matmul(int64_t b, int64_t m, int64_t n, int64_t k) {
  return {"batch_matmul",
          {{"b", b}, {"m", m}, {"n", n}, {"k", k}},
          2.0 * b * m * n * k,
          4.0 * b * (m * k + k * n + m * n),
          [=] { return codegen::cuda::gpu_batch_matmul(b, m, n, k); },
          tiling_text({})};
}

Conv2dShape conv_shape(int64_t n, int64_t c, int64_t hw, int64_t o, int64_t kernel, int64_t stride,
                       int64_t pad) {
  Conv2dShape s;
  s.batch = n;
  s.in_channels = c;
  s.height = s.width = hw;
  s.out_channels = o;
  s.kernel_h = s.kernel_w = kernel;
  s.stride = stride;
  s.pad = pad;
  return s;
}

std::map<std::string, int64_t> conv_sizes(const Conv2dShape& s) {
  return {{"n", s.batch},         {"c", s.in_channels}, {"hw", s.height}, {"o", s.out_channels},
          {"kernel", s.kernel_h}, {"stride", s.stride}, {"pad", s.pad}};
}

// ResNet-50's 3x3 convolution with bias and relu.
Case conv2d_bias_relu(const Conv2dShape& s, const MatmulTiling& t = {}) {
  const double out = double(s.batch) * s.out_channels * s.out_height() * s.out_width();
  return {"conv2d_bias_relu",
          conv_sizes(s),
          2.0 * out * s.in_channels * s.kernel_h * s.kernel_w,
          4.0 * (double(s.batch) * s.in_channels * s.height * s.width +
                 double(s.out_channels) * s.in_channels * s.kernel_h * s.kernel_w + out),
          [=] {
            te::Tensor bias = te::placeholder({s.out_channels}, DType::f32, "bias");
            return codegen::cuda::gpu_conv2d(
                s, {bias},
                [=](te::Expr acc, te::Var o, te::Var) { return te::maximum(acc + bias(o), 0.0f); },
                t);
          },
          tiling_text(t)};
}

Case depthwise(const Conv2dShape& s) {
  const double out = double(s.batch) * s.in_channels * s.out_height() * s.out_width();
  return {"depthwise",
          conv_sizes(s),
          2.0 * out * s.kernel_h * s.kernel_w,
          4.0 * (double(s.batch) * s.in_channels * s.height * s.width + out),
          [=] { return codegen::cuda::gpu_depthwise_conv2d(s); },
          ""};
}

Case tanh_sigmoid(int64_t elements) {
  return {"tanh_sigmoid",
          {{"elements", elements}},
          0,
          8.0 * elements,
          [=] {
            te::Tensor x = te::placeholder({elements}, DType::f32, "X");
            te::Tensor y = te::compute(
                {elements}, [&](te::Var i) { return te::tanh(x(i)) * te::sigmoid(x(i)); }, "Y");
            return codegen::cuda::gpu_elementwise(y, {x});
          },
          ""};
}

Case row_sum(int64_t rows, int64_t cols) {
  return {"row_sum",
          {{"rows", rows}, {"cols", cols}},
          double(rows) * cols,
          4.0 * (double(rows) * cols + rows),
          [=] { return codegen::cuda::gpu_row_reduce(rows, cols, te::ReduceOp::sum); },
          ""};
}

Case softmax(int64_t rows, int64_t cols) {
  return {"softmax",
          {{"rows", rows}, {"cols", cols}},
          0,
          8.0 * rows * cols,
          [=] { return codegen::cuda::gpu_softmax(rows, cols); },
          ""};
}

Case layer_norm(int64_t rows, int64_t cols) {
  return {"layer_norm",
          {{"rows", rows}, {"cols", cols}},
          0,
          4.0 * (2.0 * rows * cols + 2 * cols),
          [=] { return codegen::cuda::gpu_layer_norm(rows, cols, 1e-5f); },
          ""};
}

std::vector<Case> cases() {
  std::vector<Case> all;
  for (const MatmulTiling& t : tilings()) {
    all.push_back(matmul(1024, 1024, 1024, t));
    all.push_back(matmul(4096, 4096, 4096, t));
    all.push_back(dense_gelu(2048, 3072, 768, t));
    // With 128-pixel blocks the gathered im2col tile's bounds exceed the 48 KiB of static
    // shared memory (bounds inference over-approximates the pixel rows a tile touches).
    if (t.block_n <= 64) all.push_back(conv2d_bias_relu(conv_shape(16, 64, 56, 64, 3, 1, 1), t));
  }
  for (Case c :
       {dense_gelu(128, 3072, 768), batch_matmul(12, 128, 128, 64), batch_matmul(192, 128, 128, 64),
        conv2d_bias_relu(conv_shape(1, 64, 56, 64, 3, 1, 1)),
        depthwise(conv_shape(1, 144, 56, 144, 3, 2, 1)),
        depthwise(conv_shape(16, 144, 56, 144, 3, 2, 1)), tanh_sigmoid(int64_t{1} << 24),
        row_sum(4096, 4096), softmax(12 * 128, 128), softmax(16 * 12 * 128, 128),
        layer_norm(128, 768), layer_norm(2048, 768)}) {
    all.push_back(std::move(c));
  }
  return all;
}

std::string sizes_json(const std::map<std::string, int64_t>& sizes) {
  std::string s = "{";
  for (const auto& [name, value] : sizes) {
    if (s.size() > 1) s += ", ";
    s += "\"" + name + "\": " + std::to_string(value);
  }
  return s + "}";
}

void print_error(const Case& c, const absl::Status& s) {
  std::printf("{\"op\": \"%s\", \"sizes\": %s, \"tiling\": \"%s\", \"error\": \"%s\"}\n",
              c.op.c_str(), sizes_json(c.sizes).c_str(), c.tiling.c_str(),
              std::string(s.message()).c_str());
}

// Schedule, lower, generate and compile one case for sm_<arch> (the user's cache is not used, so
// that the compile is timed).
absl::StatusOr<codegen::cuda::CompiledCuda> compile_case(const Case& c, int arch,
                                                         double& compile_ms) {
  const double start = bench::now_ms();
  absl::StatusOr<GpuKernelDef> def = c.define();
  if (!def.ok()) return def.status();
  absl::StatusOr<te::PrimFunc> f = codegen::cuda::lower_gpu(*def, c.op);
  if (!f.ok()) return f.status();
  absl::StatusOr<codegen::cuda::CudaKernel> k = codegen::cuda::generate_cuda(*f);
  if (!k.ok()) return k.status();
  codegen::cuda::NvrtcOptions options;
  options.arch = arch;
  options.cache_dir = std::filesystem::path();
  absl::StatusOr<codegen::cuda::CompiledCuda> image = codegen::cuda::compile_cuda(*k, options);
  compile_ms = bench::now_ms() - start;
  return image;
}

// Back-to-back launches per timed sample: the GPU's queue stays full, so that a kernel of a few
// microseconds is timed, not the host's launch latency (the torch side replays as many copies of
// its kernels in one CUDA graph).
constexpr int kLaunchesPerSample = 20;

// Times one compiled case; prints its JSON line, or an error line naming the case.
bool time_case(codegen::cuda::CudaDevice& device, const Case& c,
               const codegen::cuda::CompiledCuda& image, double compile_ms, int warmup,
               int repeats) {
  std::vector<std::vector<float>> storage;
  std::vector<codegen::cuda::HostBuffer> args;
  for (const codegen::cuda::KernelParam& p : image.params) {
    storage.emplace_back(p.bytes() / sizeof(float), 0.5f);
    args.push_back({storage.back().data(), p.bytes()});
  }
  absl::StatusOr<std::vector<double>> ms =
      device.time(image, args, warmup, repeats, kLaunchesPerSample);
  if (!ms.ok()) {
    print_error(c, ms.status());
    return false;
  }
  const codegen::cuda::LaunchConfig& l = image.launch;
  std::printf(
      "{\"op\": \"%s\", \"sizes\": %s, \"tiling\": \"%s\", \"median_ms\": %.5f, \"best_ms\": %.5f, "
      "\"launches_per_sample\": %d, "
      "\"flops\": %.0f, \"bytes\": %.0f, \"compile_ms\": %.1f, \"grid\": [%lld, %lld, %lld], "
      "\"block\": [%lld, %lld, %lld]}\n",
      c.op.c_str(), sizes_json(c.sizes).c_str(), c.tiling.c_str(), bench::median(*ms),
      bench::best(*ms), kLaunchesPerSample, c.flops, c.bytes, compile_ms,
      static_cast<long long>(l.grid[0]), static_cast<long long>(l.grid[1]),
      static_cast<long long>(l.grid[2]), static_cast<long long>(l.block[0]),
      static_cast<long long>(l.block[1]), static_cast<long long>(l.block[2]));
  std::fflush(stdout);
  return true;
}

// Every case is compiled first (for sm_90 without a device), so that a machine without a GPU
// still checks that they generate and compile.
int run(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 50;
  absl::StatusOr<std::unique_ptr<codegen::cuda::CudaDevice>> device =
      codegen::cuda::CudaDevice::open(0);
  const int arch = device.ok() ? (*device)->info().compute_capability : 90;
  const std::vector<Case> all_cases = cases();
  bool all = true;
  std::vector<std::pair<absl::StatusOr<codegen::cuda::CompiledCuda>, double>> images;
  for (const Case& c : all_cases) {
    double compile_ms = 0;
    images.emplace_back(compile_case(c, arch, compile_ms), compile_ms);
    if (!images.back().first.ok()) {
      print_error(c, images.back().first.status());
      all = false;
    }
  }
  if (!device.ok()) {
    std::fprintf(stderr,
                 "gpu_schedules_bench: %zu kernels compiled for sm_90%s; no usable CUDA "
                 "device to time them: %s\n",
                 images.size(), all ? "" : " (some failed)",
                 std::string(device.status().message()).c_str());
    return 1;
  }
  std::fprintf(stderr, "%s\n", codegen::cuda::cuda_fingerprint().to_string().c_str());
  for (size_t i = 0; i < all_cases.size(); ++i) {
    if (!images[i].first.ok()) continue;
    all = time_case(**device, all_cases[i], *images[i].first, images[i].second, 10, repeats) && all;
  }
  return all ? 0 : 1;
}

}  // namespace
}  // namespace collage

int main(int argc, char** argv) {
  return collage::run(argc, argv);
}
