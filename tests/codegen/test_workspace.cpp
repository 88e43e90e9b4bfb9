// Generated kernels take their large local buffers from the per-thread workspace
// (runtime/core/kernel_workspace.h): allocated on a thread's first run, reused by the next.
#include <catch2/catch.hpp>
#include <thread>

#include "codegen/jit_test_util.h"
#include "runtime/core/kernel_workspace.h"

using namespace collage;
using namespace collage::testing;

TEST_CASE("a kernel's buffer above the stack limit comes from the workspace and is kept",
          "[codegen][jit]") {
  // C = A * 2 through a 512 KiB local buffer (cache_write at the root): too large for the stack.
  constexpr int64_t kRows = 256, kCols = 512;
  te::Tensor A = te::placeholder({kRows, kCols}, DType::f32, "A");
  te::Tensor C = te::compute(
      {kRows, kCols}, [&](te::Var i, te::Var j) { return A(i, j) * 2.0f; }, "C");
  te::Schedule s = te::create_schedule({C});
  s.cache_write(C);
  Compiled k = compile_kernel(s, {A, C});
  REQUIRE_THAT(te::to_string(k.func), Catch::Contains("allocate"));

  std::vector<float> a = random_floats(kRows * kCols, 3), c(kRows * kCols);
  const int64_t before = rt::workspace_system_allocations();
  for (int run = 0; run < 3; ++run) {
    std::fill(c.begin(), c.end(), 0.f);
    run_tasks(k, {a.data(), c.data()});
    CHECK(c[0] == a[0] * 2.f);
    CHECK(c.back() == a.back() * 2.f);
  }
  // One buffer from the system for three runs (malloc, before: none counted here, and a fresh
  // mapping per run once the buffer passed glibc's mmap threshold).
  CHECK(rt::workspace_system_allocations() == before + 1);
}

TEST_CASE("the workspace lends each nested buffer its own memory and reuses the best fit",
          "[codegen]") {
  // On a thread of its own: its cache starts empty.
  std::thread([] {
    void* a = rt::workspace_alloc(1000);
    void* b = rt::workspace_alloc(300000);
    REQUIRE(a != nullptr);
    REQUIRE(b != nullptr);
    CHECK(a != b);
    CHECK(reinterpret_cast<uintptr_t>(b) % 64 == 0);
    rt::workspace_free(b);
    rt::workspace_free(a);
    // The small request takes the small buffer, the large one the large buffer: nothing new.
    void* small = rt::workspace_alloc(500);
    void* large = rt::workspace_alloc(200000);
    CHECK(small == a);
    CHECK(large == b);
    // A request larger than every free buffer replaces one of them.
    rt::workspace_free(small);
    void* larger = rt::workspace_alloc(400000);
    CHECK(larger != nullptr);
    rt::workspace_free(larger);
    rt::workspace_free(large);
    CHECK(rt::workspace_system_allocations() == 3);
  }).join();
}
