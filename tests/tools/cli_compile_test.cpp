// Tests of `collage compile -o` and of placement in `collage run`, through the built binary: the
// artifact it writes runs through `collage run` with the placed model's outputs, and no group of an
// artifact is left to the reference backend (native takes its place, or the error names it).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "collage/npz.h"
#include "common/test_util.h"
#include "tools/cli_test_util.h"

namespace collage {
namespace {

using Catch::Contains;
using testing::run_collage;
using testing::TempDir;

NamedTensors float_inputs() {
  const float x[] = {-3, -1, 0, 1, 2, 3}, y[] = {2, 2, 2, -1, -1, 0.5f};
  return {{"x", Tensor::from_f32({2, 3}, x)}, {"y", Tensor::from_f32({2, 3}, y)}};
}

// z = Relu(x + W), p = x * y for float_inputs().
void check_outputs(const std::filesystem::path& npz) {
  auto out = read_npz(npz);
  REQUIRE(out.ok());
  REQUIRE(out->size() == 2);
  const float z[] = {0, 0, 1, 2.5f, 4, 5.5f}, p[] = {-6, -2, 0, -1, -2, 1.5f};
  CHECK((*out)[0].first == "z");
  CHECK((*out)[0].second.identical(Tensor::from_f32({2, 3}, z)));
  CHECK((*out)[1].first == "p");
  CHECK((*out)[1].second.identical(Tensor::from_f32({2, 3}, p)));
}

TEST_CASE("cli: run places the model by default, or runs the reference executor", "[cli]") {
  TempDir dir;
  testing::write_tiny_model(dir / "m.onnx", /*symbolic_batch=*/false, /*with_int=*/false);
  REQUIRE(write_npz(dir / "in.npz", float_inputs()).ok());
  for (const char* placement : {"", "reference", "greedy"}) {
    INFO("--placement " << placement);
    std::vector<std::string> args = {"run", (dir / "m.onnx").string(), "--inputs",
                                     (dir / "in.npz").string(), "--outputs",
                                     (dir / "out.npz").string()};
    if (*placement) args.insert(args.end(), {"--placement", placement});
    auto r = run_collage(dir, args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    if (!*placement) CHECK_THAT(r.out, Contains("groups placed two-level"));
    if (std::string(placement) == "reference") CHECK_THAT(r.out, Contains(": 3 nodes, median"));
    if (std::string(placement) == "greedy") CHECK_THAT(r.out, Contains("groups placed greedy"));
    check_outputs(dir / "out.npz");
  }
  // The default placement keeps its costs in the default cost database ($XDG_CACHE_HOME).
  CHECK(std::filesystem::file_size(dir / "cache" / "collage" / "cost-db.jsonl") > 0);
}

TEST_CASE("cli: compile -o writes an artifact that run loads", "[cli]") {
  TempDir dir;
  testing::write_tiny_model(dir / "m.onnx", /*symbolic_batch=*/false, /*with_int=*/false);
  REQUIRE(write_npz(dir / "in.npz", float_inputs()).ok());
  auto compiled = run_collage(dir, {"compile", (dir / "m.onnx").string(), "-o",
                                    (dir / "m.collage").string(), "--placement", "greedy"});
  INFO(compiled.err);
  REQUIRE(compiled.exit_code == 0);
  CHECK_THAT(compiled.out, Contains("wrote " + (dir / "m.collage").string() + ": "));
  CHECK_THAT(compiled.out, Contains("kernels on dnnl"));
  CHECK_THAT(compiled.out, Contains("arena "));
  // Told apart by content: the artifact runs under any file name. The later runs write the
  // first run's output buffers again: what they hold must not add to the results.
  std::filesystem::rename(dir / "m.collage", dir / "model.onnx");
  auto r = run_collage(dir, {"run", (dir / "model.onnx").string(), "--inputs",
                             (dir / "in.npz").string(), "--outputs", (dir / "out.npz").string(),
                             "--warmup", "1", "--repeat", "3"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("artifact, arena "));
  check_outputs(dir / "out.npz");

  // --profile: a Chrome trace of the timed runs (not the warm-up), one event per run and kernel.
  auto profiled = run_collage(dir, {"run", (dir / "model.onnx").string(), "--inputs",
                                    (dir / "in.npz").string(), "--warmup", "1", "--repeat", "3",
                                    "--profile", (dir / "trace.json").string()});
  INFO(profiled.err);
  REQUIRE(profiled.exit_code == 0);
  CHECK_THAT(profiled.out, Contains("wrote " + (dir / "trace.json").string()));
  std::ifstream f(dir / "trace.json");
  const std::string trace((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = trace.find(what); at != std::string::npos; at = trace.find(what, at + 1)) ++n;
    return n;
  };
  CHECK(count("\"cat\":\"run\"") == 3);
  CHECK(count("\"args\":{\"kernel\":") >= 3);
  CHECK(count("\"args\":{\"kernel\":") % 3 == 0);
  auto not_artifact = run_collage(dir, {"run", (dir / "m.onnx").string(), "--profile",
                                        (dir / "t.json").string()});
  CHECK(not_artifact.exit_code != 0);
  CHECK_THAT(not_artifact.err, Contains("--profile applies to artifacts"));
}

TEST_CASE("cli: compile -o keeps the reference backend out of artifacts", "[cli]") {
  TempDir dir;
  testing::write_tiny_model(dir / "m.onnx");  // m = n + n on i64: neither dnnl nor eigen runs it
  auto r = run_collage(dir, {"compile", (dir / "m.onnx").string(), "-o",
                             (dir / "m.collage").string(), "--placement", "greedy", "--backends",
                             "dnnl,eigen", "--no-compare"});
  INFO(r.out << r.err);
  if (r.out.find("fallback native runs") != std::string::npos) {
    // The generated-code backend is built in: it takes the reference's place.
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("fallback native runs 1 nodes"));
    CHECK(std::filesystem::exists(dir / "m.collage"));
  } else {
    // Without it the node stays on the reference, and the error names its group.
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Contains("collage compile: error: " + (dir / "m.collage").string()));
    CHECK_THAT(r.err, Contains("(m_node (Add)) is placed on the reference backend"));
    CHECK_THAT(r.err, Contains("which has no runtime module: an artifact needs every group on a "
                               "backend with one (taking part: dnnl, eigen)"));
    CHECK_FALSE(std::filesystem::exists(dir / "m.collage"));
  }
}

TEST_CASE("cli: greedy lets only the backends named by --backends claim", "[cli]") {
  TempDir dir;
  testing::write_tiny_model(dir / "m.onnx", /*symbolic_batch=*/false, /*with_int=*/false);
  for (const char* only : {"dnnl", "eigen"}) {
    INFO("--backends " << only);
    auto r = run_collage(dir, {"compile", (dir / "m.onnx").string(), "--placement", "greedy",
                               "--backends", only, "--no-compare"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const std::string other = std::string(only) == "dnnl" ? "eigen" : "dnnl";
    CHECK_THAT(r.out, Contains(std::string(only) + " claimed 3 of 3 nodes"));
    CHECK_THAT(r.out, !Contains(other + " claimed"));
  }
}

TEST_CASE("cli: a backend plugin given with --plugin takes part in compile and run", "[cli]") {
  TempDir dir;
  testing::write_matmul_model(dir / "m.onnx");
  auto compiled = run_collage(dir, {"compile", (dir / "m.onnx").string(), "--plugin",
                                    COLLAGE_GEMM_PLUGIN, "--placement", "single:cgemm",
                                    "--no-compare"});
  INFO(compiled.err);
  REQUIRE(compiled.exit_code == 0);
  CHECK_THAT(compiled.out, Contains("cgemm claimed 2 of 2 nodes"));

  std::vector<float> x(12);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 5.5f;
  REQUIRE(write_npz(dir / "in.npz", {{"x", Tensor::from_f32({4, 3}, x)}}).ok());
  NamedTensors outputs[2];
  const char* strategies[] = {"single:cgemm", "reference"};
  for (int i = 0; i < 2; ++i) {
    const std::string out = (dir / (std::string("out") + std::to_string(i) + ".npz")).string();
    auto r = run_collage(dir, {"run", (dir / "m.onnx").string(), "--plugin", COLLAGE_GEMM_PLUGIN,
                               "--placement", strategies[i], "--inputs",
                               (dir / "in.npz").string(), "--outputs", out});
    INFO(strategies[i] << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    auto read = read_npz(out);
    REQUIRE(read.ok());
    outputs[i] = *std::move(read);
  }
  REQUIRE(outputs[0].size() == 1);
  REQUIRE(outputs[1].size() == 1);
  CHECK(testing::max_relative_error(outputs[0][0].second, outputs[1][0].second) < 1e-6);

  auto missing = run_collage(dir, {"run", (dir / "m.onnx").string(), "--plugin",
                                   (dir / "nope.so").string()});
  CHECK(missing.exit_code != 0);
  CHECK_THAT(missing.err, Contains("nope.so"));
}

}  // namespace
}  // namespace collage
