// CUDA C generation: kernel text, launch configuration, storage and synchronisation, the warp and
// vector patterns, and the errors for loop IR a GPU kernel cannot have.
#include <catch2/catch.hpp>

#include "codegen/cuda/cuda_codegen.h"
#include "codegen/cuda/gpu_schedules.h"
#include "collage/schedule.h"

namespace collage {
namespace {

using codegen::cuda::CudaKernel;
using codegen::cuda::generate_cuda;

absl::StatusOr<CudaKernel> generate(const te::Schedule& s, const std::vector<te::Tensor>& args,
                                    const std::string& name = "kernel") {
  absl::StatusOr<te::PrimFunc> f = te::lower(s, args, name);
  INFO((f.ok() ? std::string() : std::string(f.status().message())));
  REQUIRE(f.ok());
  return generate_cuda(*f);
}

CudaKernel generate_ok(const te::Schedule& s, const std::vector<te::Tensor>& args,
                       const std::string& name = "kernel") {
  absl::StatusOr<CudaKernel> k = generate(s, args, name);
  INFO((k.ok() ? std::string() : std::string(k.status().message())));
  REQUIRE(k.ok());
  return *k;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST_CASE("an elementwise kernel binds blocks and threads and guards the tail", "[cuda]") {
  te::Tensor A = te::placeholder({1000}, DType::f32, "A");
  te::Tensor B = te::compute(
      {1000}, [&](te::Var i) { return te::tanh(A(i)) + te::erf(A(i)) * te::exp(A(i)); }, "B");
  te::Schedule s = te::create_schedule({B});
  auto [bx, tx] = s[B].split(B.axis(0), 128);
  s[B].bind(bx, "blockIdx.x").bind(tx, "threadIdx.x");
  CudaKernel k = generate_ok(s, {A, B}, "ew");
  INFO(k.source);
  CHECK(k.name == "ew");
  CHECK(k.launch.grid == std::array<int64_t, 3>{8, 1, 1});
  CHECK(k.launch.block == std::array<int64_t, 3>{128, 1, 1});
  CHECK(k.launch.static_shared_bytes == 0);
  REQUIRE(k.params.size() == 2);
  CHECK(k.params[1].name == "B");
  CHECK(k.params[1].shape == Shape{1000});
  CHECK(k.params[1].bytes() == 4000);
  CHECK(contains(k.source,
                 "extern \"C\" __global__ void __launch_bounds__(128) ew("
                 "float* __restrict__ A, float* __restrict__ B)"));
  CHECK(contains(k.source, "const int i0_outer = (int)blockIdx.x;"));
  CHECK(contains(k.source, "const int i0_inner = (int)threadIdx.x;"));
  CHECK(contains(k.source, "tanhf("));
  CHECK(contains(k.source, "erff("));
  CHECK(contains(k.source, "expf("));
  CHECK(contains(k.source, "< 1000)"));  // 8 * 128 > 1000: the tail is guarded
}

TEST_CASE("a thread loop shorter than the block runs under a guard", "[cuda]") {
  te::Tensor A = te::placeholder({64, 48}, DType::f32, "A");
  te::Tensor B = te::compute(
      {64, 48}, [&](te::Var i, te::Var j) { return A(i, j) * 2.0f; }, "B");
  te::Tensor C = te::compute(
      {64, 48}, [&](te::Var i, te::Var j) { return B(i, j) + 1.0f; }, "C");
  te::Schedule s = te::create_schedule({C});
  s[C].bind(C.axis(0), "blockIdx.x").bind(C.axis(1), "threadIdx.x");
  s[B].bind(B.axis(0), "blockIdx.x");
  auto [jo, ji] = s[B].split(B.axis(1), 32);
  s[B].bind(ji, "threadIdx.x");
  CudaKernel k = generate_ok(s, {A, B, C}, "two_nests");
  INFO(k.source);
  CHECK(k.launch.block[0] == 48);
  CHECK(k.launch.grid[0] == 64);
  CHECK(contains(k.source, "< 32)"));
}

TEST_CASE("math intrinsics, casts and floor division map to CUDA", "[cuda]") {
  te::Tensor A = te::placeholder({256}, DType::f32, "A");
  te::Tensor I = te::placeholder({256}, DType::i32, "I");
  te::Tensor H = te::placeholder({256}, DType::f16, "H");
  te::Tensor B = te::compute(
      {256},
      [&](te::Var i) {
        te::Expr x = A(i);
        te::Expr y = te::sqrt(te::fabs(x)) + te::rsqrt(x * x + 1.0f) + te::log(x * x + 1.0f) +
                     te::pow(te::fabs(x), 1.5f) + te::sigmoid(x) + te::round(x) + te::floor(x) +
                     te::ceil(x) + te::maximum(x, 0.0f) + te::cast(DType::f32, H(i));
        return y + te::cast(DType::f32, te::floordiv(I(i), 3) + te::floormod(I(i), 5));
      },
      "B");
  te::Schedule s = te::create_schedule({B});
  auto [bx, tx] = s[B].split(B.axis(0), 64);
  s[B].bind(bx, "blockIdx.x").bind(tx, "threadIdx.x");
  CudaKernel k = generate_ok(s, {A, I, H, B}, "math");
  INFO(k.source);
  for (const char* fn : {"sqrtf(", "fabsf(", "rsqrtf(", "logf(", "powf(", "collage_sigmoid(",
                         "rintf(", "floorf(", "ceilf(", "collage_fmax(", "collage_h2f(",
                         "collage_floordiv<int>(", "collage_floormod<int>("}) {
    CHECK(contains(k.source, fn));
  }
  CHECK(contains(k.source, "int* __restrict__ I"));
  CHECK(contains(k.source, "unsigned short* __restrict__ H"));
}

TEST_CASE("index arithmetic is 64-bit where 32 bits could overflow", "[cuda]") {
  te::Tensor A = te::placeholder({1024}, DType::f32, "A");
  te::Tensor I = te::placeholder({1024}, DType::i64, "I");
  te::Tensor B = te::compute(
      {1024}, [&](te::Var i) { return A(te::minimum(te::maximum(I(i), 0), 1023)); }, "B");
  te::Schedule s = te::create_schedule({B});
  auto [bx, tx] = s[B].split(B.axis(0), 256);
  s[B].bind(bx, "blockIdx.x").bind(tx, "threadIdx.x");
  CudaKernel k = generate_ok(s, {A, I, B}, "gather");  // an i64 buffer: 64-bit indices
  INFO(k.source);
  CHECK(contains(k.source, "long long* __restrict__ I"));
  CHECK(contains(k.source, "const long long i0_inner = (long long)threadIdx.x;"));
  CHECK(contains(k.source, "collage_max<long long>("));
}

TEST_CASE("a vectorized contiguous loop uses float4 loads and stores", "[cuda]") {
  te::Tensor A = te::placeholder({64, 256}, DType::f32, "A");
  te::Tensor b = te::placeholder({256}, DType::f32, "b");
  te::Tensor C = te::compute(
      {64, 256}, [&](te::Var i, te::Var j) { return te::maximum(A(i, j) + b(j), 0.0f); }, "C");
  te::Schedule s = te::create_schedule({C});
  auto [jo, ji] = s[C].split(C.axis(1), 4);
  s[C].bind(C.axis(0), "blockIdx.x").bind(jo, "threadIdx.x").vectorize(ji);
  CudaKernel k = generate_ok(s, {A, b, C}, "bias_relu");
  INFO(k.source);
  CHECK(k.launch.block[0] == 64);
  CHECK(contains(k.source, "*reinterpret_cast<const float4*>(&A["));
  CHECK(contains(k.source, "*reinterpret_cast<const float4*>(&b["));
  CHECK(contains(k.source, "*reinterpret_cast<float4*>(&C["));
}

TEST_CASE("a misaligned vectorized loop stays scalar", "[cuda]") {
  te::Tensor A = te::placeholder({64, 258}, DType::f32, "A");
  te::Tensor C = te::compute(
      {64, 256}, [&](te::Var i, te::Var j) { return A(i, j + 1) * 2.0f; }, "C");
  te::Schedule s = te::create_schedule({C});
  auto [jo, ji] = s[C].split(C.axis(1), 4);
  s[C].bind(C.axis(0), "blockIdx.x").bind(jo, "threadIdx.x").vectorize(ji);
  CudaKernel k = generate_ok(s, {A, C}, "shifted");
  INFO(k.source);
  CHECK_FALSE(contains(k.source, "const float4*>(&A["));  // A's row is 258 and the offset 1
  CHECK(contains(k.source, "*reinterpret_cast<float4*>(&C["));
}

TEST_CASE("GPU-incompatible loop IR is refused with InvalidArgument", "[cuda]") {
  te::Tensor A = te::placeholder({64, 64}, DType::f32, "A");
  te::Tensor B = te::compute(
      {64, 64}, [&](te::Var i, te::Var j) { return A(i, j) + 1.0f; }, "B");
  auto expect_error = [&](te::Schedule& s, const std::string& part) {
    absl::StatusOr<CudaKernel> k = generate(s, {A, B}, "bad");
    REQUIRE_FALSE(k.ok());
    INFO(k.status().message());
    CHECK(k.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(contains(std::string(k.status().message()), "cuda kernel 'bad'"));
    CHECK(contains(std::string(k.status().message()), part));
  };
  SECTION("parallel loop") {
    te::Schedule s = te::create_schedule({B});
    s[B].parallel(B.axis(0));
    expect_error(s, "parallel loop 'i0' is not bound to a GPU index");
  }
  SECTION("no binding") {
    te::Schedule s = te::create_schedule({B});
    expect_error(s, "no loop is bound to blockIdx/threadIdx");
  }
  SECTION("block index inside a thread index") {
    te::Schedule s = te::create_schedule({B});
    s[B].bind(B.axis(0), "threadIdx.x").bind(B.axis(1), "blockIdx.x");
    expect_error(s, "bound to blockIdx.x is nested in loop 'i0' bound to threadIdx.x");
  }
  SECTION("block index inside a serial loop") {
    te::Schedule s = te::create_schedule({B});
    s[B].bind(B.axis(1), "blockIdx.x");
    expect_error(s, "is nested in loop 'i0' (not block-bound)");
  }
  SECTION("too many threads") {
    te::Schedule s = te::create_schedule({B});
    te::IterVar f = s[B].fuse(B.axis(0), B.axis(1));
    s[B].bind(f, "threadIdx.x");
    expect_error(s, "threadIdx.x extent 4096 exceeds 1024");
  }
  SECTION("two loops bound to the same thread index") {
    te::Schedule s = te::create_schedule({B});
    s[B].bind(B.axis(0), "threadIdx.x").bind(B.axis(1), "threadIdx.x");
    expect_error(s, "(mismatched bindings");
  }
}

TEST_CASE("a barrier under a thread-dependent condition is refused", "[cuda]") {
  // for tx in threadIdx.x(64): if (tx < 10) { shared S[64]; for t in threadIdx.x(64): S[t] = A[t];
  //                                           out[tx] = S[63 - tx] }
  te::Buffer A("A", DType::f32, {64}), out("out", DType::f32, {64}), S("S", DType::f32, {64});
  te::Var tx("tx"), t("t");
  te::Stmt fill = te::make_for(t, 0, 64, te::ForKind::thread_bound,
                               te::make_store(S, {t}, te::load(A, {t})), "threadIdx.x");
  te::Stmt use = te::make_store(out, {tx}, te::load(S, {te::Expr(63) - tx}));
  te::Stmt body = te::make_if(tx < 10, te::make_allocate(S, te::make_seq({fill, use})));
  te::PrimFunc f{"divergent",
                 {A, out},
                 te::make_for(tx, 0, 64, te::ForKind::thread_bound, body, "threadIdx.x")};
  absl::StatusOr<CudaKernel> k = generate_cuda(f);
  REQUIRE_FALSE(k.ok());
  CHECK(k.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(contains(std::string(k.status().message()),
                 "sits under a condition that depends on the thread index"));

  // The same kernel without the condition is fine: S is shared and fenced by barriers.
  f.body = te::make_for(tx, 0, 64, te::ForKind::thread_bound,
                        te::make_allocate(S, te::make_seq({fill, use})), "threadIdx.x");
  absl::StatusOr<CudaKernel> ok = generate_cuda(f);
  INFO((ok.ok() ? ok->source : std::string(ok.status().message())));
  REQUIRE(ok.ok());
  CHECK(contains(ok->source, "__shared__ __align__(16) float S[64];"));
  CHECK(ok->launch.static_shared_bytes == 256);
  CHECK(contains(ok->source, "__syncthreads();"));
}

TEST_CASE("a shared tile that depends on an outer thread index is refused", "[cuda]") {
  // Columns of A staged at C's threadIdx.x loop but spread over threadIdx.y only: the column
  // depends on the threadIdx.x loop outside the stage, so the threads sharing the buffer would
  // write different columns.
  te::Tensor A = te::placeholder({16, 16}, DType::f32, "A");
  te::Tensor As = te::compute(
      {16, 16}, [&](te::Var i, te::Var j) { return A(i, j); }, "A_shared");
  te::IterVar r = te::reduce_axis({0, 16}, "r");
  te::Tensor C = te::compute(
      {16, 16}, [&](te::Var i, te::Var j) { return te::sum(As(r, j) * 2.0f, {r}); }, "C");
  te::Schedule s = te::create_schedule({C});
  s[C].bind(C.axis(0), "blockIdx.x").bind(C.axis(1), "threadIdx.x");
  s[As].compute_at(s[C], C.axis(1));
  s[As].bind(As.axis(0), "threadIdx.y");
  absl::StatusOr<CudaKernel> k = generate(s, {A, C}, "bad_tile");
  REQUIRE_FALSE(k.ok());
  CHECK(k.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(contains(std::string(k.status().message()),
                 "shared buffer 'A_shared' is written with 'i1' (threadIdx.x"));
}

TEST_CASE("a loop whose body writes shared memory starts with a barrier", "[cuda]") {
  // for tx in threadIdx.x(32): shared S[32];
  //   for t in threadIdx.x(32): S[t] = A[t]
  //   for k in 0..4: { for t2 in threadIdx.x(32): S[t2] = S[t2] * 2; out[tx] = S[31 - tx] }
  // Iteration k + 1 overwrites S while slower threads may still read it in iteration k: the
  // barrier printed before the loop does not stand in for one at the start of its body.
  te::Buffer A("A", DType::f32, {32}), out("out", DType::f32, {32}), S("S", DType::f32, {32});
  te::Var tx("tx"), t("t"), t2("t2"), k("k");
  te::Stmt fill = te::make_for(t, 0, 32, te::ForKind::thread_bound,
                               te::make_store(S, {t}, te::load(A, {t})), "threadIdx.x");
  te::Stmt twice = te::make_for(t2, 0, 32, te::ForKind::thread_bound,
                                te::make_store(S, {t2}, te::load(S, {t2}) * 2.0f), "threadIdx.x");
  te::Stmt use = te::make_store(out, {tx}, te::load(S, {te::Expr(31) - tx}));
  te::Stmt loop = te::make_for(k, 0, 4, te::ForKind::serial, te::make_seq({twice, use}));
  te::PrimFunc f{"iterate",
                 {A, out},
                 te::make_for(tx, 0, 32, te::ForKind::thread_bound,
                              te::make_allocate(S, te::make_seq({fill, loop})), "threadIdx.x")};
  absl::StatusOr<CudaKernel> kern = generate_cuda(f);
  REQUIRE(kern.ok());
  const std::string& src = kern->source;
  INFO(src);
  const size_t body = src.find("for (int k = 0; k < 4; ++k) {\n");
  REQUIRE(body != std::string::npos);
  const size_t first = src.find_first_not_of(' ', src.find('\n', body) + 1);
  CHECK(src.compare(first, 17, "__syncthreads();\n") == 0);
}

TEST_CASE("more static shared memory than a kernel may declare is refused", "[cuda]") {
  codegen::cuda::MatmulTiling t;
  t.block_k = 128;  // (64x128 + 128x64) floats = 64 KiB
  absl::StatusOr<codegen::cuda::GpuKernelDef> def = codegen::cuda::gpu_matmul(256, 256, 256, t);
  REQUIRE(def.ok());
  absl::StatusOr<te::PrimFunc> f = codegen::cuda::lower_gpu(*def, "big_tiles");
  REQUIRE(f.ok());
  absl::StatusOr<CudaKernel> k = generate_cuda(*f);
  REQUIRE_FALSE(k.ok());
  CHECK(k.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(
      contains(std::string(k.status().message()), "65536 bytes of shared memory exceed the 49152"));
}

TEST_CASE("a kernel name that is not a C identifier is refused", "[cuda]") {
  te::PrimFunc f;
  f.name = "my-kernel";
  f.body = te::make_seq({});
  absl::StatusOr<CudaKernel> k = generate_cuda(f);
  REQUIRE_FALSE(k.ok());
  CHECK(k.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(contains(std::string(k.status().message()), "not a C identifier"));
}

}  // namespace
}  // namespace collage
