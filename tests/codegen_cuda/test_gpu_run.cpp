// Generated kernels run on a GPU and match the CPU references. Tagged [gpu]: without a usable
// device (no driver, no GPU) each case says why and skips.
#include <catch2/catch.hpp>

#include "codegen/cuda/cuda_device.h"
#include "codegen/cuda/cuda_fingerprint.h"
#include "gpu_test_util.h"

namespace collage {
namespace {

using codegen::cuda::CudaDevice;
using codegen::cuda::GpuKernelDef;
using codegen::cuda::HostBuffer;

// The device, or null after printing why the case is skipped.
std::unique_ptr<CudaDevice> device_or_skip() {
  absl::StatusOr<std::unique_ptr<CudaDevice>> d = CudaDevice::open(0);
  if (!d.ok()) {
    WARN("SKIPPED (no usable CUDA device): " << d.status().message());
    return nullptr;
  }
  return std::move(*d);
}

template <typename T>
HostBuffer host(std::vector<T>& v) {
  return HostBuffer{v.data(), v.size() * sizeof(T)};
}

testing::GpuCompiled compile_for(const CudaDevice& d, const GpuKernelDef& def,
                                 const std::string& name) {
  return testing::compile_gpu(def, name, d.info().compute_capability);
}

TEST_CASE("the device probe names the GPU or says why there is none", "[cuda][gpu]") {
  absl::StatusOr<codegen::cuda::DeviceInfo> info = codegen::cuda::probe_cuda_device();
  if (!info.ok()) {
    CHECK(info.status().code() == absl::StatusCode::kFailedPrecondition);
    CHECK_FALSE(info.status().message().empty());
    CHECK(codegen::cuda::preferred_cuda_arch() == 90);
    WARN("SKIPPED (no usable CUDA device): " << info.status().message());
    return;
  }
  CHECK(codegen::cuda::preferred_cuda_arch() == info->compute_capability);
  CHECK_FALSE(info->name.empty());
  CHECK(info->compute_capability >= 50);
  CHECK(info->total_memory > 0);
  WARN("device: " << info->name << ", sm_" << info->compute_capability << ", driver "
                  << info->driver_version);
}

TEST_CASE("the fingerprint names the device or why there is none, and the libraries",
          "[cuda][gpu]") {
  codegen::cuda::CudaFingerprint f = codegen::cuda::cuda_fingerprint();
  const std::string line = f.to_string();
  INFO(line);
  CHECK(f.nvrtc == codegen::cuda::nvrtc_version());
  CHECK(line.find(" | nvrtc " + f.nvrtc) != std::string::npos);
  CHECK(f.device.empty() != f.no_device.empty());
  if (f.device.empty()) {
    CHECK(line.rfind("no GPU (", 0) == 0);
    CHECK(f.compute_capability == 0);
  } else {
    CHECK(line.find(" sm_" + std::to_string(f.compute_capability) + " driver ") !=
          std::string::npos);
  }
  // The toolkit this was built with ships cuDNN 9 and cuBLAS; their versions are read at run time.
  if (f.cudnn.empty() || f.cublas.empty()) WARN("cuDNN or cuBLAS not loadable: " << line);
  if (!f.cudnn.empty()) CHECK(f.cudnn.rfind("9.", 0) == 0);
}

TEST_CASE("matmul runs on the GPU", "[cuda][gpu]") {
  std::unique_ptr<CudaDevice> dev = device_or_skip();
  if (!dev) return;
  for (auto [m, n, k] : {std::array<int64_t, 3>{256, 192, 128}, {70, 45, 19}}) {
    absl::StatusOr<GpuKernelDef> def = codegen::cuda::gpu_matmul(m, n, k);
    REQUIRE(def.ok());
    testing::GpuCompiled c = compile_for(*dev, *def, "matmul");
    std::vector<float> a = testing::random_values(m * k, 1), b = testing::random_values(k * n, 2);
    std::vector<float> out(m * n, NAN);
    absl::Status s = dev->run(c.image, {host(a), host(b), host(out)});
    INFO(s.message());
    REQUIRE(s.ok());
    CHECK(testing::max_scaled_error(out, testing::matmul_reference(a, b, m, n, k)) < 1e-5);
  }
}

TEST_CASE("a kernel is timed with events on device-resident arguments", "[cuda][gpu]") {
  std::unique_ptr<CudaDevice> dev = device_or_skip();
  if (!dev) return;
  const int64_t m = 128, n = 96, k = 64;
  absl::StatusOr<GpuKernelDef> def = codegen::cuda::gpu_matmul(m, n, k);
  REQUIRE(def.ok());
  testing::GpuCompiled c = compile_for(*dev, *def, "matmul_timed");
  std::vector<float> a = testing::random_values(m * k, 20), b = testing::random_values(k * n, 21);
  std::vector<float> out(m * n, NAN);
  absl::StatusOr<std::vector<double>> ms = dev->time(c.image, {host(a), host(b), host(out)}, 2, 5);
  INFO(ms.status().message());
  REQUIRE(ms.ok());
  REQUIRE(ms->size() == 5);
  for (double t : *ms) CHECK((t > 0 && t < 1000));
  // Samples of several launches: still one figure per sample, per launch.
  absl::StatusOr<std::vector<double>> batched =
      dev->time(c.image, {host(a), host(b), host(out)}, 0, 3, 10);
  REQUIRE(batched.ok());
  REQUIRE(batched->size() == 3);
  for (double t : *batched) CHECK((t > 0 && t < 1000));
  // The results of the last launch come back.
  CHECK(testing::max_scaled_error(out, testing::matmul_reference(a, b, m, n, k)) < 1e-5);
  absl::StatusOr<std::vector<double>> none =
      dev->time(c.image, {host(a), host(b), host(out)}, 0, 0);
  CHECK(none.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(none.status().message()).find("repeats >= 1") != std::string::npos);
  absl::StatusOr<std::vector<double>> no_launch =
      dev->time(c.image, {host(a), host(b), host(out)}, 0, 1, 0);
  CHECK(no_launch.status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("dense with a bias and gelu epilogue runs on the GPU", "[cuda][gpu]") {
  std::unique_ptr<CudaDevice> dev = device_or_skip();
  if (!dev) return;
  const int64_t m = 100, n = 200, k = 64;
  te::Tensor bias = te::placeholder({n}, DType::f32, "bias");
  absl::StatusOr<GpuKernelDef> def =
      codegen::cuda::gpu_dense(m, n, k, {bias}, [&](te::Expr acc, te::Var, te::Var j) {
        te::Expr y = acc + bias(j);
        return 0.5f * y * (1.0f + te::erf(y * 0.70710678f));
      });
  REQUIRE(def.ok());
  testing::GpuCompiled c = compile_for(*dev, *def, "dense_gelu");
  std::vector<float> a = testing::random_values(m * k, 10), b = testing::random_values(k * n, 11);
  std::vector<float> bv = testing::random_values(n, 12), out(m * n, NAN);
  REQUIRE(dev->run(c.image, {host(a), host(b), host(bv), host(out)}).ok());
  std::vector<float> ref = testing::matmul_reference(a, b, m, n, k);
  for (int64_t i = 0; i < m * n; ++i) {
    const double y = double(ref[i]) + bv[i % n];
    ref[i] = static_cast<float>(0.5 * y * (1 + std::erf(y * 0.70710678)));
  }
  CHECK(testing::max_scaled_error(out, ref) < 1e-5);
}

TEST_CASE("conv2d as an implicit GEMM runs on the GPU", "[cuda][gpu]") {
  std::unique_ptr<CudaDevice> dev = device_or_skip();
  if (!dev) return;
  codegen::cuda::Conv2dShape cs;  // a ResNet-50 layer1 3x3 convolution, two images
  cs.batch = 2;
  cs.in_channels = 64;
  cs.height = cs.width = 56;
  cs.out_channels = 64;
  cs.kernel_h = cs.kernel_w = 3;
  cs.pad = 1;
  te::Tensor bias = te::placeholder({64}, DType::f32, "bias");
  absl::StatusOr<GpuKernelDef> def = codegen::cuda::gpu_conv2d(
      cs, {bias},
      [&](te::Expr acc, te::Var o, te::Var) { return te::maximum(acc + bias(o), 0.0f); });
  REQUIRE(def.ok());
  testing::GpuCompiled c = compile_for(*dev, *def, "conv2d_bias_relu");
  std::vector<float> x = testing::random_values(2 * 64 * 56 * 56, 13);
  std::vector<float> w = testing::random_values(64 * 64 * 9, 14);
  std::vector<float> bv = testing::random_values(64, 17), y(2 * 64 * 56 * 56, NAN);
  REQUIRE(dev->run(c.image, {host(x), host(w), host(bv), host(y)}).ok());
  std::vector<float> ref = testing::conv2d_reference(x, w, cs);
  for (size_t i = 0; i < ref.size(); ++i)
    ref[i] = std::max(ref[i] + bv[(i / (56 * 56)) % 64], 0.0f);
  CHECK(testing::max_scaled_error(y, ref) < 1e-5);
}

TEST_CASE("depthwise conv2d runs on the GPU", "[cuda][gpu]") {
  std::unique_ptr<CudaDevice> dev = device_or_skip();
  if (!dev) return;
  codegen::cuda::Conv2dShape cs;  // a MobileNetV2 depthwise layer
  cs.batch = 1;
  cs.in_channels = cs.out_channels = 144;
  cs.height = cs.width = 56;
  cs.kernel_h = cs.kernel_w = 3;
  cs.stride = 2;
  cs.pad = 1;
  absl::StatusOr<GpuKernelDef> def = codegen::cuda::gpu_depthwise_conv2d(cs);
  REQUIRE(def.ok());
  testing::GpuCompiled c = compile_for(*dev, *def, "depthwise");
  std::vector<float> x = testing::random_values(144 * 56 * 56, 15);
  std::vector<float> w = testing::random_values(144 * 9, 16);
  std::vector<float> y(144 * cs.out_height() * cs.out_width(), NAN);
  REQUIRE(dev->run(c.image, {host(x), host(w), host(y)}).ok());
  CHECK(testing::max_scaled_error(y, testing::depthwise_reference(x, w, cs)) < 1e-5);
}

TEST_CASE("an elementwise chain runs on the GPU", "[cuda][gpu]") {
  std::unique_ptr<CudaDevice> dev = device_or_skip();
  if (!dev) return;
  te::Tensor X = te::placeholder({33, 64}, DType::f32, "X");
  te::Tensor Y = te::compute(
      {33, 64}, [&](te::Var i, te::Var j) { return te::tanh(X(i, j)) * te::sigmoid(X(i, j)); },
      "Y");
  absl::StatusOr<GpuKernelDef> def = codegen::cuda::gpu_elementwise(Y, {X}, 128);
  REQUIRE(def.ok());
  testing::GpuCompiled c = compile_for(*dev, *def, "tanh_sigmoid");
  std::vector<float> x = testing::random_values(33 * 64, 3, -3.f, 3.f), y(33 * 64, NAN), ref(y);
  REQUIRE(dev->run(c.image, {host(x), host(y)}).ok());
  for (size_t i = 0; i < x.size(); ++i) ref[i] = std::tanh(x[i]) / (1.f + std::exp(-x[i]));
  CHECK(testing::max_rel_error(y, ref) < 1e-5);
}

TEST_CASE("row reductions and softmax run on the GPU", "[cuda][gpu]") {
  std::unique_ptr<CudaDevice> dev = device_or_skip();
  if (!dev) return;
  const int64_t rows = 37, cols = 1000;
  std::vector<float> x = testing::random_values(rows * cols, 4, -5.f, 5.f);
  {
    absl::StatusOr<GpuKernelDef> def = codegen::cuda::gpu_row_reduce(rows, cols, te::ReduceOp::max);
    REQUIRE(def.ok());
    testing::GpuCompiled c = compile_for(*dev, *def, "row_max");
    std::vector<float> out(rows, NAN), ref(rows, -INFINITY);
    REQUIRE(dev->run(c.image, {host(x), host(out)}).ok());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < cols; ++j) ref[r] = std::max(ref[r], x[r * cols + j]);
    }
    CHECK(out == ref);
  }
  {
    absl::StatusOr<GpuKernelDef> def = codegen::cuda::gpu_softmax(rows, cols);
    REQUIRE(def.ok());
    testing::GpuCompiled c = compile_for(*dev, *def, "softmax");
    // Softmax does not depend on the maximum it subtracts unless exp overflows: a workspace
    // starting at -1000 makes a stale read of it give inf / inf = NaN.
    std::vector<float> mx(rows, -1000.f), y(rows * cols, NAN), ref_max(rows, -INFINITY);
    REQUIRE(dev->run(c.image, {host(x), host(mx), host(y)}).ok());
    CHECK(testing::max_rel_error(y, testing::softmax_reference(x, rows, cols)) < 1e-4);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < cols; ++j) ref_max[r] = std::max(ref_max[r], x[r * cols + j]);
    }
    CHECK(mx == ref_max);
  }
}

TEST_CASE("batched matmul and layer norm run on the GPU", "[cuda][gpu]") {
  std::unique_ptr<CudaDevice> dev = device_or_skip();
  if (!dev) return;
  {
    const int64_t batch = 4, m = 64, n = 96, k = 40;
    absl::StatusOr<GpuKernelDef> def = codegen::cuda::gpu_batch_matmul(batch, m, n, k);
    REQUIRE(def.ok());
    testing::GpuCompiled c = compile_for(*dev, *def, "batch_matmul");
    std::vector<float> a = testing::random_values(batch * m * k, 5);
    std::vector<float> b = testing::random_values(batch * k * n, 6);
    std::vector<float> out(batch * m * n, NAN), ref;
    REQUIRE(dev->run(c.image, {host(a), host(b), host(out)}).ok());
    for (int64_t i = 0; i < batch; ++i) {
      std::vector<float> ai(a.begin() + i * m * k, a.begin() + (i + 1) * m * k);
      std::vector<float> bi(b.begin() + i * k * n, b.begin() + (i + 1) * k * n);
      std::vector<float> ci = testing::matmul_reference(ai, bi, m, n, k);
      ref.insert(ref.end(), ci.begin(), ci.end());
    }
    CHECK(testing::max_scaled_error(out, ref) < 1e-5);
  }
  {
    const int64_t rows = 9, cols = 768;
    absl::StatusOr<GpuKernelDef> def = codegen::cuda::gpu_layer_norm(rows, cols, 1e-5f);
    REQUIRE(def.ok());
    testing::GpuCompiled c = compile_for(*dev, *def, "layer_norm");
    std::vector<float> x = testing::random_values(rows * cols, 7, -2.f, 3.f);
    std::vector<float> g = testing::random_values(cols, 8), b = testing::random_values(cols, 9);
    // A stale read of the row-sum workspace (it starts far from any row's sum) shows in Y.
    std::vector<float> ws(rows, 1e6f), y(rows * cols, NAN);
    REQUIRE(dev->run(c.image, {host(x), host(g), host(b), host(ws), host(y)}).ok());
    CHECK(testing::max_scaled_error(y, testing::layer_norm_reference(x, g, b, rows, cols, 1e-5)) <
          1e-5);
  }
}

TEST_CASE("wrong arguments and a cubin for another architecture family are refused",
          "[cuda][gpu]") {
  std::unique_ptr<CudaDevice> dev = device_or_skip();
  if (!dev) return;
  absl::StatusOr<GpuKernelDef> def = codegen::cuda::gpu_row_reduce(2, 8, te::ReduceOp::sum);
  REQUIRE(def.ok());
  const int other = dev->info().compute_capability >= 90 ? 80 : 90;
  testing::GpuCompiled c = testing::compile_gpu(*def, "row_sum", other);
  std::vector<float> x(16, 1.f), out(2), short_out(1);
  absl::Status wrong_size = dev->run(c.image, {host(x), host(short_out)});
  CHECK(wrong_size.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(wrong_size.message()).find("argument 1 ('out') has 4 bytes") !=
        std::string::npos);
  absl::Status s = dev->run(c.image, {host(x), host(out)});
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.message()).find("compiled for sm_") != std::string::npos);
}

}  // namespace
}  // namespace collage
