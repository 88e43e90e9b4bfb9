// NVRTC compilation of generated kernels (no GPU needed): cubin and PTX for sm_90, the on-disk
// cache and its key, and NVRTC's log in errors.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>

#include "codegen/cuda/cuda_codegen.h"
#include "codegen/cuda/nvrtc_compiler.h"
#include "collage/schedule.h"

namespace collage {
namespace {

namespace fs = std::filesystem;
using codegen::cuda::CompiledCuda;
using codegen::cuda::CudaKernel;
using codegen::cuda::ImageKind;
using codegen::cuda::NvrtcOptions;

CudaKernel relu_kernel(int64_t n = 1000) {
  te::Tensor A = te::placeholder({n}, DType::f32, "A");
  te::Tensor B = te::compute(
      {n}, [&](te::Var i) { return te::maximum(A(i), 0.0f); }, "B");
  te::Schedule s = te::create_schedule({B});
  auto [bx, tx] = s[B].split(B.axis(0), 128);
  s[B].bind(bx, "blockIdx.x").bind(tx, "threadIdx.x");
  absl::StatusOr<te::PrimFunc> f = te::lower(s, {A, B}, "relu");
  REQUIRE(f.ok());
  absl::StatusOr<CudaKernel> k = codegen::cuda::generate_cuda(*f);
  REQUIRE(k.ok());
  return *k;
}

// A fresh directory under the system's temporary directory, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    std::random_device rd;
    path = fs::temp_directory_path() / ("collage-nvrtc-test-" + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

size_t count_files(const fs::path& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST_CASE("a generated kernel compiles to an sm_90 cubin and to PTX", "[cuda][nvrtc]") {
  CudaKernel k = relu_kernel();
  NvrtcOptions o;
  o.cache_dir = fs::path();  // no cache
  absl::StatusOr<CompiledCuda> cubin = codegen::cuda::compile_cuda(k, o);
  INFO((cubin.ok() ? std::string() : std::string(cubin.status().message())));
  REQUIRE(cubin.ok());
  CHECK(cubin->arch == 90);
  CHECK(cubin->kind == ImageKind::cubin);
  CHECK_FALSE(cubin->from_cache);
  REQUIRE(cubin->image.size() > 4);
  CHECK(cubin->image.compare(0, 4,
                             "\x7f"
                             "ELF") == 0);
  CHECK(cubin->launch.grid[0] == 8);

  o.kind = ImageKind::ptx;
  absl::StatusOr<CompiledCuda> ptx = codegen::cuda::compile_cuda(k, o);
  REQUIRE(ptx.ok());
  CHECK(ptx->image.find(".entry relu") != std::string::npos);
  CHECK(ptx->image.find(".target sm_90") != std::string::npos);
}

TEST_CASE("compiled images are cached by source, architecture and NVRTC version", "[cuda][nvrtc]") {
  TempDir dir;
  NvrtcOptions o;
  o.cache_dir = dir.path / "cuda";  // created on first use
  CudaKernel k = relu_kernel();
  absl::StatusOr<CompiledCuda> first = codegen::cuda::compile_cuda(k, o);
  REQUIRE(first.ok());
  CHECK_FALSE(first->from_cache);
  REQUIRE(count_files(*o.cache_dir) == 1);
  absl::StatusOr<CompiledCuda> second = codegen::cuda::compile_cuda(k, o);
  REQUIRE(second.ok());
  CHECK(second->from_cache);
  CHECK(second->image == first->image);

  // Another architecture and another source are other entries.
  o.arch = 80;
  absl::StatusOr<CompiledCuda> sm80 = codegen::cuda::compile_cuda(k, o);
  REQUIRE(sm80.ok());
  CHECK_FALSE(sm80->from_cache);
  o.arch = 90;
  absl::StatusOr<CompiledCuda> other = codegen::cuda::compile_cuda(relu_kernel(999), o);
  REQUIRE(other.ok());
  CHECK_FALSE(other->from_cache);
  CHECK(count_files(*o.cache_dir) == 3);

  // An entry whose recorded key does not match (here: damaged) is recompiled and rewritten.
  for (const auto& e : fs::directory_iterator(*o.cache_dir)) {
    std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << "CLGCUDA1garbage";
  }
  absl::StatusOr<CompiledCuda> again = codegen::cuda::compile_cuda(k, o);
  REQUIRE(again.ok());
  CHECK_FALSE(again->from_cache);
  CHECK(again->image == first->image);
  absl::StatusOr<CompiledCuda> cached = codegen::cuda::compile_cuda(k, o);
  REQUIRE(cached.ok());
  CHECK(cached->from_cache);
}

TEST_CASE("NVRTC errors carry its log", "[cuda][nvrtc]") {
  CudaKernel k;
  k.name = "broken";
  k.source = "extern \"C\" __global__ void broken(float* x) { x[0] = undeclared_thing; }\n";
  NvrtcOptions o;
  o.cache_dir = fs::path();
  absl::StatusOr<CompiledCuda> c = codegen::cuda::compile_cuda(k, o);
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().code() == absl::StatusCode::kInvalidArgument);
  const std::string m(c.status().message());
  INFO(m);
  CHECK(m.find("kernel 'broken' does not compile for sm_90") != std::string::npos);
  CHECK(m.find("undeclared_thing") != std::string::npos);  // from NVRTC's log
}

TEST_CASE("an architecture NVRTC does not know is refused", "[cuda][nvrtc]") {
  NvrtcOptions o;
  o.arch = 12;
  o.cache_dir = fs::path();
  absl::StatusOr<CompiledCuda> c = codegen::cuda::compile_cuda(relu_kernel(), o);
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(c.status().message()).find("sm_12 is not supported") != std::string::npos);
}

TEST_CASE("the default cache lives in the user's cache directory", "[cuda][nvrtc]") {
  const fs::path d = codegen::cuda::default_cuda_cache_dir();
  if (d.empty()) {
    WARN("neither XDG_CACHE_HOME nor HOME is set");
    return;
  }
  CHECK(d.filename() == "cuda");
  CHECK(d.parent_path().filename() == "collage");
}

}  // namespace
}  // namespace collage
