// Named x86-64 targets: their features, vector width and registers, whether a machine runs their
// code, and JIT-compiled code that uses only the named target's registers (an AVX2 kernel built on
// an AVX-512 machine has no zmm register) and computes what the loops say.
#include <cmath>

#include "jit_test_util.h"

using namespace collage;
using collage::testing::random_floats;
namespace te = collage::te;

namespace {

// A 16-lane vectorized axpy kernel compiled for `target`, with its assembly; checks its results.
std::string axpy_assembly(const codegen::TargetSpec& target) {
  const int64_t n = 64;
  te::Tensor X = te::placeholder({n}, DType::f32, "X");
  te::Tensor Y = te::placeholder({n}, DType::f32, "Y");
  te::Tensor Z = te::compute(
      {n}, [&](te::Var i) { return X(i) * 3.0f + Y(i); }, "Z");
  te::Schedule s = te::create_schedule({Z});
  auto [o, i] = s[Z].split(Z.axis(0), 16);
  s[Z].vectorize(i);
  absl::StatusOr<te::PrimFunc> f = te::lower(s, {X, Y, Z}, "axpy");
  REQUIRE(f.ok());
  codegen::JitOptions options;
  options.target = target;
  options.keep_assembly = true;
  absl::StatusOr<std::unique_ptr<codegen::JitModule>> m =
      codegen::JitModule::compile({*f}, options);
  INFO(m.status().ToString());
  REQUIRE(m.ok());
  absl::StatusOr<codegen::KernelFn> fn = (*m)->lookup("axpy");
  REQUIRE(fn.ok());
  std::vector<float> x = random_floats(n, 1), y = random_floats(n, 2), z(n);
  std::vector<void*> args = {x.data(), y.data(), z.data()};
  (*fn)(args.data(), 0, 1);
  // Fused or not, by the target: within one rounding.
  for (int64_t k = 0; k < n; ++k) REQUIRE(std::fabs(z[k] - (x[k] * 3.0f + y[k])) <= 1e-6f);
  return (*m)->assembly();
}

}  // namespace

TEST_CASE("named x86-64 targets: aliases, features, vector width and registers",
          "[codegen][target]") {
  if (!codegen::TargetSpec::host().is_x86()) {
    CHECK(codegen::TargetSpec::named("avx2").status().code() == absl::StatusCode::kInvalidArgument);
    return;
  }
  absl::StatusOr<codegen::TargetSpec> avx2 = codegen::TargetSpec::named("avx2");
  REQUIRE(avx2.ok());
  CHECK(avx2->cpu == "x86-64-v3");
  CHECK(avx2->has_feature("avx2"));
  CHECK(avx2->has_feature("fma"));
  CHECK_FALSE(avx2->has_feature("avx512f"));
  CHECK(avx2->vector_bytes() == 32);
  CHECK(avx2->vector_registers() == 16);
  CHECK(avx2->triple == codegen::TargetSpec::host().triple);

  absl::StatusOr<codegen::TargetSpec> avx512 = codegen::TargetSpec::named("avx512");
  REQUIRE(avx512.ok());
  CHECK(avx512->cpu == "x86-64-v4");
  CHECK(avx512->has_feature("avx512f"));
  CHECK(avx512->vector_bytes() == 64);
  CHECK(avx512->vector_registers() == 32);

  absl::StatusOr<codegen::TargetSpec> haswell = codegen::TargetSpec::named("haswell");
  REQUIRE(haswell.ok());
  CHECK(haswell->vector_bytes() == 32);
  CHECK(codegen::TargetSpec::named("host")->cpu == codegen::TargetSpec::host().cpu);
  CHECK(codegen::TargetSpec::named("")->features == codegen::TargetSpec::host().features);

  absl::StatusOr<codegen::TargetSpec> bad = codegen::TargetSpec::named("pentium-9000");
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(bad.status().message()), Catch::Contains("pentium-9000"));
  // A 32-bit-only CPU is no x86-64 target.
  CHECK(codegen::TargetSpec::named("i686").status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("a target runs on a machine with every feature it enables", "[codegen][target]") {
  if (!codegen::TargetSpec::host().is_x86()) return;
  const codegen::TargetSpec avx2 = *codegen::TargetSpec::named("avx2");
  const codegen::TargetSpec avx512 = *codegen::TargetSpec::named("avx512");
  CHECK(avx2.runs_on(avx512).ok());
  CHECK(avx2.runs_on(avx2).ok());
  absl::Status s = avx512.runs_on(avx2);
  CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(s.message()), Catch::Contains("avx512f"));
  CHECK_THAT(std::string(s.message()), Catch::Contains("x86-64-v4"));
  CHECK(avx2.runs_on(codegen::TargetSpec::aarch64_linux()).code() ==
        absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("JIT code for a named target uses only that target's vector registers",
          "[codegen][target]") {
  const codegen::TargetSpec host = codegen::TargetSpec::host();
  if (!host.is_x86()) return;
  const codegen::TargetSpec avx2 = *codegen::TargetSpec::named("avx2");
  if (avx2.runs_on(host).ok()) {
    const std::string asm_avx2 = axpy_assembly(avx2);
    CHECK_THAT(asm_avx2, Catch::Contains("ymm"));
    CHECK_THAT(asm_avx2, !Catch::Contains("zmm"));
  } else {
    WARN("this machine runs no AVX2 code: the avx2 target is not checked");
  }
  const codegen::TargetSpec avx512 = *codegen::TargetSpec::named("avx512");
  if (avx512.runs_on(host).ok()) {
    CHECK_THAT(axpy_assembly(avx512), Catch::Contains("zmm"));
  } else {
    WARN("this machine runs no AVX-512 code: the avx512 target is not checked");
  }
}
