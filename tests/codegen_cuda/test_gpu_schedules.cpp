// GPU schedules: each generates CUDA C that NVRTC compiles for sm_90, has the structure the
// schedule promises (shared tiles, barriers, warp shuffles, vector accesses), and whose loop IR,
// run sequentially on the CPU, matches the reference.
#include <catch2/catch.hpp>

#include "gpu_test_util.h"

namespace collage {
namespace {

using codegen::cuda::GpuKernelDef;
using testing::compile_gpu;
using testing::GpuCompiled;
using testing::max_rel_error;
using testing::random_values;

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

size_t count(const std::string& s, const std::string& part) {
  size_t n = 0;
  for (size_t p = s.find(part); p != std::string::npos; p = s.find(part, p + 1)) ++n;
  return n;
}

TEST_CASE("matmul stages tiles in shared memory and accumulates in registers", "[cuda][schedule]") {
  const int64_t m = 128, n = 192, k = 48;
  absl::StatusOr<GpuKernelDef> def = codegen::cuda::gpu_matmul(m, n, k);
  REQUIRE(def.ok());
  GpuCompiled c = compile_gpu(*def, "matmul");
  const std::string& src = c.kernel.source;
  INFO(src);
  CHECK(c.kernel.launch.grid == std::array<int64_t, 3>{3, 2, 1});
  CHECK(c.kernel.launch.block == std::array<int64_t, 3>{16, 16, 1});
  CHECK(c.kernel.launch.static_shared_bytes == (64 * 8 + 8 * 64) * 4);
  CHECK(count(src, "__shared__ __align__(16) float") == 2);
  CHECK(contains(src, "__align__(16) float C_local[16];"));  // the 4x4 register tile
  CHECK(count(src, "__syncthreads();") >= 2);
  CHECK(contains(src, "#pragma unroll"));
  // Tile loads move float4s (K and N are multiples of 4, so every row starts aligned).
  CHECK(contains(src, "*reinterpret_cast<const float4*>(&A["));
  CHECK(contains(src, "*reinterpret_cast<const float4*>(&B["));
  CHECK(contains(src, "*reinterpret_cast<float4*>(&A_shared["));

  std::vector<float> a = random_values(m * k, 1), b = random_values(k * n, 2), out(m * n, NAN);
  testing::run_on_cpu(c.func, {a.data(), b.data(), out.data()});
  CHECK(testing::max_scaled_error(out, testing::matmul_reference(a, b, m, n, k)) < 1e-5);
}

TEST_CASE("matmul with sizes that do not divide the tiles", "[cuda][schedule]") {
  const int64_t m = 70, n = 45, k = 19;
  absl::StatusOr<GpuKernelDef> def = codegen::cuda::gpu_matmul(m, n, k);
  REQUIRE(def.ok());
  GpuCompiled c = compile_gpu(*def, "matmul_tail");
  INFO(c.kernel.source);
  CHECK(c.kernel.launch.grid == std::array<int64_t, 3>{1, 2, 1});
  // Rows of 19 and 45 floats are not 16-byte aligned: scalar copies.
  CHECK_FALSE(contains(c.kernel.source, "const float4*>(&A["));
  CHECK_FALSE(contains(c.kernel.source, "const float4*>(&B["));
  std::vector<float> a = random_values(m * k, 3), b = random_values(k * n, 4), out(m * n, NAN);
  testing::run_on_cpu(c.func, {a.data(), b.data(), out.data()});
  CHECK(testing::max_scaled_error(out, testing::matmul_reference(a, b, m, n, k)) < 1e-5);
}

TEST_CASE("dense computes its bias and activation in registers before the store",
          "[cuda][schedule]") {
  const int64_t m = 50, n = 64, k = 33;
  te::Tensor bias = te::placeholder({n}, DType::f32, "bias");
  absl::StatusOr<GpuKernelDef> def = codegen::cuda::gpu_dense(
      m, n, k, {bias},
      [&](te::Expr acc, te::Var, te::Var j) { return te::maximum(acc + bias(j), 0.0f); });
  REQUIRE(def.ok());
  GpuCompiled c = compile_gpu(*def, "dense_bias_relu");
  const std::string& src = c.kernel.source;
  INFO(src);
  CHECK(contains(src, "float* __restrict__ bias, float* __restrict__ C)"));
  CHECK(contains(src, "= collage_fmax((C_local["));
  CHECK(count(src, "__shared__") == 2);
  std::vector<float> a = random_values(m * k, 14), b = random_values(k * n, 15);
  std::vector<float> bv = random_values(n, 16), out(m * n, NAN);
  testing::run_on_cpu(c.func, {a.data(), b.data(), bv.data(), out.data()});
  std::vector<float> ref = testing::matmul_reference(a, b, m, n, k);
  for (int64_t i = 0; i < m * n; ++i) ref[i] = std::max(ref[i] + bv[i % n], 0.0f);
  CHECK(testing::max_scaled_error(out, ref) < 1e-5);

  absl::StatusOr<GpuKernelDef> none = codegen::cuda::gpu_dense(m, n, k, {}, nullptr);
  REQUIRE_FALSE(none.ok());
  CHECK(contains(std::string(none.status().message()), "gpu_dense: no epilogue given"));
}

TEST_CASE("batched matmul binds the batch to blockIdx.z", "[cuda][schedule]") {
  const int64_t batch = 3, m = 40, n = 72, k = 24;
  absl::StatusOr<GpuKernelDef> def = codegen::cuda::gpu_batch_matmul(batch, m, n, k);
  REQUIRE(def.ok());
  GpuCompiled c = compile_gpu(*def, "batch_matmul");
  INFO(c.kernel.source);
  CHECK(c.kernel.launch.grid == std::array<int64_t, 3>{2, 1, 3});
  CHECK(contains(c.kernel.source, "(int)blockIdx.z"));
  std::vector<float> a = random_values(batch * m * k, 9), b = random_values(batch * k * n, 10);
  std::vector<float> out(batch * m * n, NAN), ref;
  testing::run_on_cpu(c.func, {a.data(), b.data(), out.data()});
  for (int64_t i = 0; i < batch; ++i) {
    std::vector<float> ai(a.begin() + i * m * k, a.begin() + (i + 1) * m * k);
    std::vector<float> bi(b.begin() + i * k * n, b.begin() + (i + 1) * k * n);
    std::vector<float> ci = testing::matmul_reference(ai, bi, m, n, k);
    ref.insert(ref.end(), ci.begin(), ci.end());
  }
  CHECK(testing::max_scaled_error(out, ref) < 1e-5);
}

TEST_CASE("conv2d gathers the im2col view straight into the shared tile", "[cuda][schedule]") {
  codegen::cuda::Conv2dShape cs;
  cs.batch = 2;
  cs.in_channels = 3;
  cs.height = 9;
  cs.width = 11;
  cs.out_channels = 8;
  cs.kernel_h = 3;
  cs.kernel_w = 3;
  cs.stride = 2;
  cs.pad = 1;
  absl::StatusOr<GpuKernelDef> def = codegen::cuda::gpu_conv2d(cs);
  REQUIRE(def.ok());
  GpuCompiled c = compile_gpu(*def, "conv2d");
  const std::string& src = c.kernel.source;
  INFO(src);
  CHECK(count(src, "__shared__") == 2);
  CHECK(c.kernel.launch.grid[2] == 2);  // one z block per image
  std::vector<float> x = random_values(2 * 3 * 9 * 11, 17), w = random_values(8 * 3 * 9, 18);
  std::vector<float> y(2 * 8 * cs.out_height() * cs.out_width(), NAN);
  testing::run_on_cpu(c.func, {x.data(), w.data(), y.data()});
  CHECK(testing::max_scaled_error(y, testing::conv2d_reference(x, w, cs)) < 1e-5);

  // With a bias and relu epilogue.
  te::Tensor bias = te::placeholder({8}, DType::f32, "bias");
  absl::StatusOr<GpuKernelDef> fused = codegen::cuda::gpu_conv2d(
      cs, {bias},
      [&](te::Expr acc, te::Var o, te::Var) { return te::maximum(acc + bias(o), 0.0f); });
  REQUIRE(fused.ok());
  GpuCompiled cf = compile_gpu(*fused, "conv2d_bias_relu");
  std::vector<float> bv = random_values(8, 21), yf(y.size(), NAN);
  testing::run_on_cpu(cf.func, {x.data(), w.data(), bv.data(), yf.data()});
  std::vector<float> ref = testing::conv2d_reference(x, w, cs);
  const int64_t pixels = cs.out_height() * cs.out_width();
  for (size_t i = 0; i < ref.size(); ++i) ref[i] = std::max(ref[i] + bv[(i / pixels) % 8], 0.0f);
  CHECK(testing::max_scaled_error(yf, ref) < 1e-5);

  cs.pad = -1;
  absl::StatusOr<GpuKernelDef> bad = codegen::cuda::gpu_conv2d(cs);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("depthwise conv2d accumulates its window in a register", "[cuda][schedule]") {
  codegen::cuda::Conv2dShape cs;
  cs.batch = 2;
  cs.in_channels = cs.out_channels = 5;
  cs.height = 10;
  cs.width = 7;
  cs.kernel_h = cs.kernel_w = 3;
  cs.stride = 2;
  cs.pad = 1;
  absl::StatusOr<GpuKernelDef> def = codegen::cuda::gpu_depthwise_conv2d(cs, 128);
  REQUIRE(def.ok());
  GpuCompiled c = compile_gpu(*def, "depthwise");
  const std::string& src = c.kernel.source;
  INFO(src);
  CHECK(contains(src, "__align__(16) float Y_local[1];"));
  CHECK_FALSE(contains(src, "__shared__"));
  // The fused index is non-negative: C division, not the floor-division helper.
  CHECK_FALSE(contains(src, "collage_floordiv<int>("));
  CHECK(contains(src, " / 4)"));
  const int64_t outputs = 2 * 5 * cs.out_height() * cs.out_width();
  CHECK(c.kernel.launch.grid[0] == (outputs + 127) / 128);
  std::vector<float> x = random_values(2 * 5 * 10 * 7, 19), w = random_values(5 * 9, 20);
  std::vector<float> y(outputs, NAN);
  testing::run_on_cpu(c.func, {x.data(), w.data(), y.data()});
  CHECK(testing::max_scaled_error(y, testing::depthwise_reference(x, w, cs)) < 1e-6);

  cs.out_channels = 6;
  absl::StatusOr<GpuKernelDef> bad = codegen::cuda::gpu_depthwise_conv2d(cs);
  REQUIRE_FALSE(bad.ok());
  CHECK(contains(std::string(bad.status().message()), "out_channels == in_channels (6 vs 5)"));
}

TEST_CASE("a matmul tiling that does not fit its thread tile is refused", "[cuda][schedule]") {
  codegen::cuda::MatmulTiling t;
  t.thread_m = 3;
  absl::StatusOr<GpuKernelDef> def = codegen::cuda::gpu_matmul(64, 64, 64, t);
  REQUIRE_FALSE(def.ok());
  CHECK(def.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(contains(std::string(def.status().message()), "not a multiple of the thread tile 3x4"));
}

TEST_CASE("an elementwise chain is inlined into one vectorized kernel", "[cuda][schedule]") {
  te::Tensor X = te::placeholder({32, 64}, DType::f32, "X");
  te::Tensor bias = te::placeholder({64}, DType::f32, "bias");
  te::Tensor Y = te::compute(
      {32, 64}, [&](te::Var i, te::Var j) { return X(i, j) + bias(j); }, "Y");
  te::Tensor G = te::compute(
      {32, 64},
      [&](te::Var i, te::Var j) {
        te::Expr y = Y(i, j);
        return 0.5f * y * (1.0f + te::erf(y * 0.70710678f));
      },
      "gelu");
  absl::StatusOr<GpuKernelDef> def = codegen::cuda::gpu_elementwise(G, {X, bias}, 128);
  REQUIRE(def.ok());
  GpuCompiled c = compile_gpu(*def, "bias_gelu");
  const std::string& src = c.kernel.source;
  INFO(src);
  CHECK(c.kernel.launch.block[0] == 128);
  CHECK(c.kernel.launch.grid[0] == 4);  // 2048 elements, 4 per thread
  CHECK(contains(src, "erff("));
  CHECK(contains(src, "*reinterpret_cast<float4*>(&gelu["));
  CHECK_FALSE(contains(src, "Y["));              // inlined
  CHECK(count(src, "const float4*>(&X[") == 1);  // both reads of X share one vector

  std::vector<float> x = random_values(32 * 64, 5), bv = random_values(64, 6), out(32 * 64, NAN);
  testing::run_on_cpu(c.func, {x.data(), bv.data(), out.data()});
  std::vector<float> ref(out.size());
  for (int64_t i = 0; i < 32; ++i) {
    for (int64_t j = 0; j < 64; ++j) {
      const double y = double(x[i * 64 + j]) + bv[j];
      ref[i * 64 + j] = static_cast<float>(0.5 * y * (1 + std::erf(y * 0.70710678)));
    }
  }
  CHECK(max_rel_error(out, ref) < 1e-4);
}

TEST_CASE("f16 and bf16 storage convert on load and store", "[cuda][schedule]") {
  te::Tensor H = te::placeholder({40, 8}, DType::f16, "H");
  te::Tensor Bf = te::placeholder({40, 8}, DType::bf16, "Bf");
  te::Tensor Y = te::compute(
      {40, 8},
      [&](te::Var i, te::Var j) {
        te::Expr v = te::cast(DType::f32, H(i, j)) * te::cast(DType::f32, Bf(i, j)) + 1.0f;
        return te::cast(DType::f16, v);
      },
      "Y");
  absl::StatusOr<GpuKernelDef> def = codegen::cuda::gpu_elementwise(Y, {H, Bf}, 64);
  REQUIRE(def.ok());
  GpuCompiled c = compile_gpu(*def, "half_mul");  // NVRTC accepts the conversion helpers
  const std::string& src = c.kernel.source;
  INFO(src);
  CHECK(contains(src, "unsigned short* __restrict__ H, unsigned short* __restrict__ Bf"));
  CHECK(contains(src, "collage_h2f(H["));
  CHECK(contains(src, "collage_bf2f(Bf["));
  CHECK(contains(src, "= collage_f2h("));
  CHECK_FALSE(contains(src, "float4"));  // f16 outputs are not vectorized

  std::vector<float> hf = random_values(320, 22, -4.f, 4.f), bf = random_values(320, 23);
  std::vector<uint16_t> h(320), b(320), y(320);
  for (size_t i = 0; i < 320; ++i) {
    h[i] = float_to_half(hf[i]);
    b[i] = float_to_bfloat16(bf[i]);
  }
  testing::run_on_cpu(c.func, {h.data(), b.data(), y.data()});
  for (size_t i = 0; i < 320; ++i) {
    const float ref = half_to_float(h[i]) * bfloat16_to_float(b[i]) + 1.0f;
    INFO("element " << i);
    CHECK(y[i] == float_to_half(ref));
  }
}

TEST_CASE("elementwise kernels refuse bad thread counts", "[cuda][schedule]") {
  te::Tensor X = te::placeholder({10}, DType::f32, "X");
  te::Tensor Y = te::compute(
      {10}, [&](te::Var i) { return X(i) * 2.0f; }, "Y");
  absl::StatusOr<GpuKernelDef> def = codegen::cuda::gpu_elementwise(Y, {X}, 100);
  REQUIRE_FALSE(def.ok());
  CHECK(def.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(contains(std::string(def.status().message()), "100 threads per block"));
}

TEST_CASE("a row reduction ends in a warp shuffle", "[cuda][schedule]") {
  const int64_t rows = 5, cols = 300;
  auto op = GENERATE(te::ReduceOp::sum, te::ReduceOp::max);
  absl::StatusOr<GpuKernelDef> def = codegen::cuda::gpu_row_reduce(rows, cols, op);
  REQUIRE(def.ok());
  GpuCompiled c = compile_gpu(*def, "row_reduce");
  const std::string& src = c.kernel.source;
  INFO(src);
  CHECK(c.kernel.launch.grid[0] == rows);
  CHECK(c.kernel.launch.block[0] == 32);
  CHECK(contains(src, "__shfl_xor_sync(0xffffffffu"));
  CHECK(contains(src, "__shared__"));
  CHECK(contains(src, "if (threadIdx.x == 0) out["));

  std::vector<float> x = random_values(rows * cols, 7), out(rows, NAN), ref(rows);
  testing::run_on_cpu(c.func, {x.data(), out.data()});
  for (int64_t r = 0; r < rows; ++r) {
    double acc = op == te::ReduceOp::sum ? 0.0 : -INFINITY;
    for (int64_t j = 0; j < cols; ++j) {
      acc =
          op == te::ReduceOp::sum ? acc + x[r * cols + j] : std::max<double>(acc, x[r * cols + j]);
    }
    ref[r] = static_cast<float>(acc);
  }
  CHECK(max_rel_error(out, ref) < 1e-4);
}

TEST_CASE("softmax uses two warp reductions and a workspace for the row maximum",
          "[cuda][schedule]") {
  const int64_t rows = 6, cols = 100;
  absl::StatusOr<GpuKernelDef> def = codegen::cuda::gpu_softmax(rows, cols);
  REQUIRE(def.ok());
  GpuCompiled c = compile_gpu(*def, "softmax");
  const std::string& src = c.kernel.source;
  INFO(src);
  CHECK(count(src, "for (int off = 16; off > 0; off >>= 1)") == 2);
  CHECK(contains(src, "expf("));
  CHECK(contains(src, "(float* __restrict__ X, float* row_max, float* __restrict__ Y)"));
  CHECK(c.kernel.launch.block[0] == 32);
  CHECK(c.kernel.launch.grid[0] == rows);

  std::vector<float> x = random_values(rows * cols, 8, -4.f, 4.f), mx(rows), y(rows * cols, NAN);
  testing::run_on_cpu(c.func, {x.data(), mx.data(), y.data()});
  CHECK(max_rel_error(y, testing::softmax_reference(x, rows, cols)) < 1e-4);
}

TEST_CASE("layer norm reduces mean and variance with warp shuffles", "[cuda][schedule]") {
  const int64_t rows = 4, cols = 77;
  absl::StatusOr<GpuKernelDef> def = codegen::cuda::gpu_layer_norm(rows, cols, 1e-5f);
  REQUIRE(def.ok());
  GpuCompiled c = compile_gpu(*def, "layer_norm");
  const std::string& src = c.kernel.source;
  INFO(src);
  CHECK(count(src, "__shfl_xor_sync") == 2);
  CHECK(contains(src, "rsqrtf("));
  // The workspace thread 0 writes and the block reads after a barrier is not __restrict__: with
  // it nvcc reused the value loaded before the barrier (an H200 read the row sum as zeros).
  CHECK(contains(src, "float* __restrict__ beta, float* row_sum, float* __restrict__ Y)"));
  std::vector<float> x = random_values(rows * cols, 11, -2.f, 3.f), g = random_values(cols, 12);
  std::vector<float> b = random_values(cols, 13), ws(rows), y(rows * cols, NAN);
  testing::run_on_cpu(c.func, {x.data(), g.data(), b.data(), ws.data(), y.data()});
  CHECK(testing::max_scaled_error(y, testing::layer_norm_reference(x, g, b, rows, cols, 1e-5)) <
        1e-5);

  absl::StatusOr<GpuKernelDef> bad = codegen::cuda::gpu_layer_norm(rows, cols, -1.0f);
  REQUIRE_FALSE(bad.ok());
  CHECK(contains(std::string(bad.status().message()), "epsilon -1 must be non-negative"));
}

}  // namespace
}  // namespace collage
