// The native backend's compiled-code cache and targets: a second backend loads the object the
// first compiled instead of running LLVM, the kernel record carries that object, a damaged cache
// file is compiled again, and a kernel built for the AVX2 target computes what the reference
// does (an AVX-512 machine runs it).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "collage/target.h"
#include "collage/backends/native.h"
#include "collage/ops.h"
#include "collage/reference.h"
#include "common/test_util.h"

using namespace collage;
using namespace collage::testing;

namespace {

// MatMul (B constant) + Relu on 20x24 x 24x40.
Graph matmul_relu_graph(const Context& ctx) {
  GraphBuilder b(ctx);
  ValueId x = b.add_input("x", {DType::f32, {20, 24}});
  ValueId w = b.add_constant("w", random_f32({24, 40}, 3));
  auto m = b.add("MatMul", {x, w});
  REQUIRE(m.ok());
  b.add_output(*b.add("Relu", {*m}));
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

// Builds `g` whole with a fresh native backend and runs it on x; returns the output and the
// kernel record's object code.
std::pair<Tensor, std::vector<uint8_t>> build_and_run(const Graph& g, Tensor x,
                                                      const BuildOptions& options) {
  auto backend = make_native_backend();
  auto kernel = backend->build(g, options);
  INFO(kernel.status().ToString());
  REQUIRE(kernel.ok());
  Tensor out(DType::f32, {20, 40});
  void* args[] = {x.raw(), out.raw()};
  for (int32_t t = 0; t < (*kernel)->task_count(); ++t)
    REQUIRE((*kernel)->run_task(args, t).ok());
  return {out, (*kernel)->record().params};
}

std::vector<std::filesystem::path> files_in(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  if (std::filesystem::exists(dir))
    for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path());
  return out;
}

}  // namespace

TEST_CASE("native code cache: a second build loads the object the first compiled", "[native]") {
  Context ctx;
  const Graph g = matmul_relu_graph(ctx);
  const Tensor x = random_f32({20, 24}, 8);
  auto expected = run_reference(g, {x});
  REQUIRE(expected.ok());
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("collage-code-cache-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  BuildOptions options;
  options.num_threads = 2;
  options.code_cache = dir.string();

  const auto [out1, object1] = build_and_run(g, x, options);
  CHECK(max_scaled_error(out1, (*expected)[0]) <= 1e-5);
  const std::vector<std::filesystem::path> files = files_in(dir);
  REQUIRE(files.size() == 1);
  CHECK(files[0].extension() == ".o");
  CHECK(std::filesystem::file_size(files[0]) == object1.size());
  const auto written = std::filesystem::last_write_time(files[0]);

  // Loaded, not compiled again: the file is not rewritten and the record holds its bytes.
  const auto [out2, object2] = build_and_run(g, x, options);
  CHECK(out2.identical(out1));
  CHECK(object2 == object1);
  CHECK(std::filesystem::last_write_time(files[0]) == written);

  // A damaged file is compiled again (and replaced).
  { std::ofstream(files[0], std::ios::binary | std::ios::trunc) << "not an object"; }
  const auto [out3, object3] = build_and_run(g, x, options);
  CHECK(out3.identical(out1));
  CHECK(std::filesystem::file_size(files[0]) == object3.size());
  std::filesystem::remove_all(dir);
}

TEST_CASE("native target: a kernel built for AVX2 computes what the reference does", "[native]") {
  Context ctx;
  const Graph g = matmul_relu_graph(ctx);
  const Tensor x = random_f32({20, 24}, 8);
  auto expected = run_reference(g, {x});
  REQUIRE(expected.ok());
  BuildOptions options;
  options.num_threads = 2;
  options.target = "no-such-cpu";
  auto bad = make_native_backend()->build(g, options);
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(bad.status().message()), Catch::Contains("no-such-cpu"));
  if (!codegen::TargetSpec::host().is_x86()) return;
  CHECK(resolve_native_target("avx2").value_or("") == "x86-64-v3");
  CHECK(resolve_native_target("host").value_or("?").empty());
  if (!codegen::TargetSpec::named("avx2")->runs_on(codegen::TargetSpec::host()).ok()) {
    WARN("this machine runs no AVX2 code: not checked");
    return;
  }
  options.target = "avx2";
  const auto [out, object] = build_and_run(g, x, options);
  CHECK(max_scaled_error(out, (*expected)[0]) <= 1e-5);
  CHECK_FALSE(object.empty());
}
