// JIT modules compiled through a relocatable object (keep_object) and loaded from one
// (load_object): the same results as the in-JIT compilation, the object kept, errors for a
// damaged object or a missing kernel.
#include "jit_test_util.h"

using namespace collage;
using collage::testing::random_floats;
namespace te = collage::te;

namespace {

te::PrimFunc scale_kernel() {
  te::Tensor X = te::placeholder({37}, DType::f32, "X");
  te::Tensor Y = te::compute(
      {37}, [&](te::Var i) { return X(i) * 2.0f + 1.0f; }, "Y");
  te::Schedule s = te::create_schedule({Y});
  auto [o, i] = s[Y].split(Y.axis(0), 8);
  s[Y].vectorize(i);
  s[Y].parallel(o);
  absl::StatusOr<te::PrimFunc> f = te::lower(s, {X, Y}, "scale");
  REQUIRE(f.ok());
  return *f;
}

std::vector<float> run(const codegen::JitModule& m) {
  absl::StatusOr<codegen::KernelFn> fn = m.lookup("scale");
  REQUIRE(fn.ok());
  std::vector<float> x = random_floats(37, 4), y(37);
  std::vector<void*> args = {x.data(), y.data()};
  for (int t = 0; t < 3; ++t) (*fn)(args.data(), t, 3);
  return y;
}

}  // namespace

TEST_CASE("JIT through an object: kept, loaded again, same results", "[codegen][jit]") {
  const te::PrimFunc f = scale_kernel();
  auto direct = codegen::JitModule::compile({f});
  REQUIRE(direct.ok());
  CHECK((*direct)->object().empty());
  codegen::JitOptions options;
  options.keep_object = true;
  auto kept = codegen::JitModule::compile({f}, options);
  INFO(kept.status().ToString());
  REQUIRE(kept.ok());
  REQUIRE_FALSE((*kept)->object().empty());
  CHECK((*kept)->object().compare(0, 4, "\x7f" "ELF") == 0);
  const std::vector<float> want = run(**direct);
  CHECK(run(**kept) == want);

  auto loaded = codegen::JitModule::load_object((*kept)->object(), {"scale"},
                                                codegen::TargetSpec::host());
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  CHECK((*loaded)->object() == (*kept)->object());
  CHECK(run(**loaded) == want);

  CHECK(codegen::JitModule::load_object("garbage", {"scale"}, codegen::TargetSpec::host())
            .status()
            .code() == absl::StatusCode::kInternal);
  auto missing =
      codegen::JitModule::load_object((*kept)->object(), {"other"}, codegen::TargetSpec::host());
  CHECK(missing.status().code() == absl::StatusCode::kInternal);
  CHECK_THAT(std::string(missing.status().message()), Catch::Contains("other"));
}
