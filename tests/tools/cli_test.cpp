// Tests of the `collage` command line, run as a separate process on a tiny ONNX model.
#include <catch2/catch.hpp>
#include <fstream>

#include "collage/npz.h"
#include "tools/cli_test_util.h"

namespace collage {
namespace {

using Catch::Contains;
using testing::run_collage;
using testing::TempDir;

const Tensor* find(const NamedTensors& arrays, const std::string& name) {
  for (const auto& [n, t] : arrays)
    if (n == name) return &t;
  return nullptr;
}

// Inputs for the tiny model and the outputs it must give for them.
NamedTensors tiny_inputs() {
  const float x[] = {-3, -1, 0, 1, 2, 3}, y[] = {2, 2, 2, -1, -1, 0.5f};
  const int64_t n[] = {0, 5, -7, 100};
  return {{"x", Tensor::from_f32({2, 3}, x)},
          {"y", Tensor::from_f32({2, 3}, y)},
          {"n", Tensor::from_i64({4}, n)}};
}

TEST_CASE("cli: --version, help and usage errors", "[cli]") {
  TempDir dir;
  auto version = run_collage(dir, {"--version"});
  CHECK(version.exit_code == 0);
  CHECK(version.out == std::string("collage ") + "0.1.0\n");

  auto help = run_collage(dir, {"help"});
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Contains("usage: collage <command>"));
  CHECK_THAT(help.out, Contains("  info "));
  CHECK_THAT(help.out, Contains("  run "));

  auto run_help = run_collage(dir, {"help", "run"});
  CHECK(run_help.exit_code == 0);
  CHECK_THAT(run_help.out, Contains("--input-shape NAME=DIMS"));
  CHECK_THAT(run_help.out, Contains("uniform\nin [-1, 1), integer inputs uniform in [0, 10)"));

  auto none = run_collage(dir, {});
  CHECK(none.exit_code == 2);
  CHECK_THAT(none.err, Contains("usage: collage <command>"));

  auto unknown = run_collage(dir, {"frobnicate"});
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.err, Contains("unknown command 'frobnicate'"));
  CHECK_THAT(unknown.err, Contains("usage: collage <command>"));
}

TEST_CASE("cli: bad options are usage errors", "[cli]") {
  TempDir dir;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"info"}, "missing MODEL"},
      {{"run", "m.onnx", "--repeat", "0"}, "--repeat must be at least 1"},
      {{"run", "m.onnx", "--repeat=abc"}, "--repeat expects an integer"},
      {{"run", "m.onnx", "--warmup"}, "--warmup needs a value"},
      {{"run", "m.onnx", "--bogus"}, "unknown option '--bogus'"},
      {{"run", "m.onnx", "extra"}, "unexpected argument 'extra'"},
      {{"info", "m.onnx", "--input-shape", "x"}, "bad --input-shape 'x'"},
      {{"info", "m.onnx", "--input-shape", "x=2x-1"}, "'-1' is not a dimension"},
      {{"info", "m.onnx", "--input-shape", "x=2", "--input-shape", "x=3"}, "given twice"},
  };
  for (const auto& [args, message] : cases) {
    INFO(message);
    auto r = run_collage(dir, args);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains(message));
    CHECK_THAT(r.err, Contains("usage: collage " + args[0]));
  }
}

TEST_CASE("cli: info describes the model", "[cli]") {
  TempDir dir;
  testing::write_tiny_model(dir / "tiny.onnx");
  auto r = run_collage(dir, {"info", (dir / "tiny.onnx").string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("graph       tiny\n"));
  CHECK_THAT(r.out, Contains("inputs      3\n  x  f32  2x3\n  y  f32  2x3\n  n  i64  4\n"));
  CHECK_THAT(r.out, Contains("outputs     3\n  z  f32  2x3\n  p  f32  2x3\n  m  i64  4\n"));
  CHECK_THAT(r.out, Contains("nodes       4\n"));
  CHECK_THAT(r.out, Contains("parameters  6 (24 B)\n"));
  CHECK_THAT(r.out, Contains("FLOPs       0.000 GFLOPs (22)\n"));
  CHECK_THAT(r.out, Contains("operator  count  MFLOPs  share\n"
                             "Add           2   0.000  45.5%\n"
                             "Mul           1   0.000  27.3%\n"
                             "Relu          1   0.000  27.3%\n"));
}

TEST_CASE("cli: info on a bad file fails cleanly with the importer's message", "[cli]") {
  TempDir dir;
  auto missing = run_collage(dir, {"info", (dir / "missing.onnx").string()});
  CHECK(missing.exit_code == 1);
  CHECK_THAT(missing.err, Contains("collage info: error: "));
  CHECK_THAT(missing.err, Contains("missing.onnx"));

  std::ofstream(dir / "garbage.onnx") << "this is not a protobuf \x01\x02\xff\xfe";
  auto garbage = run_collage(dir, {"info", (dir / "garbage.onnx").string()});
  CHECK(garbage.exit_code == 1);
  CHECK_THAT(garbage.err, Contains("collage info: error: "));

  testing::write_tiny_model(dir / "tiny.onnx");
  auto bad_shape =
      run_collage(dir, {"info", (dir / "tiny.onnx").string(), "--input-shape", "x=5x3"});
  CHECK(bad_shape.exit_code == 1);
  CHECK_THAT(bad_shape.err, Contains("'x'"));
}

TEST_CASE("cli: run reads inputs by name and writes outputs by name", "[cli]") {
  TempDir dir;
  testing::write_tiny_model(dir / "tiny.onnx");
  NamedTensors inputs = tiny_inputs();
  std::swap(inputs[0], inputs[2]);  // archive order does not matter
  REQUIRE(write_npz(dir / "in.npz", inputs).ok());
  for (bool passes : {true, false}) {
    std::vector<std::string> args = {"run",       (dir / "tiny.onnx").string(),
                                     "--inputs",  (dir / "in.npz").string(),
                                     "--outputs", (dir / "out.npz").string()};
    if (!passes) args.push_back("--no-passes");
    auto r = run_collage(dir, args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("median"));
    CHECK_THAT(r.out, Contains("over 1 run "));
    CHECK_THAT(r.out, Contains("wrote " + (dir / "out.npz").string()));
    auto out = read_npz(dir / "out.npz");
    REQUIRE(out.ok());
    REQUIRE(out->size() == 3);
    CHECK((*out)[0].first == "z");
    CHECK((*out)[1].first == "p");
    CHECK((*out)[2].first == "m");
    const float z[] = {0, 0, 1, 2.5f, 4, 5.5f}, p[] = {-6, -2, 0, -1, -2, 1.5f};
    const int64_t m[] = {0, 10, -14, 200};
    CHECK(find(*out, "z")->identical(Tensor::from_f32({2, 3}, z)));
    CHECK(find(*out, "p")->identical(Tensor::from_f32({2, 3}, p)));
    CHECK(find(*out, "m")->identical(Tensor::from_i64({4}, m)));
  }
}

TEST_CASE("cli: run with random inputs is deterministic and in the documented ranges", "[cli]") {
  TempDir dir;
  testing::write_tiny_model(dir / "tiny.onnx");
  auto run = [&](const std::string& out, const std::string& seed) {
    auto r =
        run_collage(dir, {"run", (dir / "tiny.onnx").string(), "--outputs", (dir / out).string(),
                          "--seed", seed, "--repeat", "3", "--warmup", "1"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("over 3 runs"));
    CHECK_THAT(r.out, Contains("1 warmup"));
    auto arrays = read_npz(dir / out);
    REQUIRE(arrays.ok());
    return *std::move(arrays);
  };
  const NamedTensors a = run("a.npz", "0"), b = run("b.npz", "0"), c = run("c.npz", "7");
  for (const char* name : {"z", "p", "m"}) {
    INFO(name);
    CHECK(find(a, name)->identical(*find(b, name)));
    CHECK_FALSE(find(a, name)->identical(*find(c, name)));
  }
  const Tensor& p = *find(a, "p");  // x * y with x, y in [-1, 1)
  for (int64_t i = 0; i < p.numel(); ++i) CHECK(std::abs(p.data<float>()[i]) <= 1.0f);
  const Tensor& m = *find(a, "m");  // n + n with n in [0, 10)
  for (int64_t i = 0; i < m.numel(); ++i) {
    CHECK(m.data<int64_t>()[i] % 2 == 0);
    CHECK(m.data<int64_t>()[i] >= 0);
    CHECK(m.data<int64_t>()[i] <= 18);
  }
}

TEST_CASE("cli: run names the input array that is missing, extra or mis-shaped", "[cli]") {
  TempDir dir;
  testing::write_tiny_model(dir / "tiny.onnx");
  const NamedTensors good = tiny_inputs();
  const float wide[] = {1, 2, 3, 4};
  struct Case {
    NamedTensors arrays;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{good[0], good[2]}, "no array for graph input 'y' (f32[2x3])"},
      {{good[0], good[1], good[2], {"extra", Tensor::scalar_f32(1)}},
       "array 'extra' matches no graph input (inputs: x, y, n)"},
      {{good[0], {"y", Tensor::from_f32({2, 2}, wide)}, good[2]},
       "array 'y' is f32[2x2], but graph input 'y' is f32[2x3]"},
      {{good[0], good[1], {"n", Tensor(DType::i32, {4})}},
       "array 'n' is i32[4], but graph input 'n' is i64[4]"},
  };
  for (const Case& c : cases) {
    INFO(c.message);
    REQUIRE(write_npz(dir / "in.npz", c.arrays).ok());
    auto r = run_collage(
        dir, {"run", (dir / "tiny.onnx").string(), "--inputs", (dir / "in.npz").string()});
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Contains("collage run: error: "));
    CHECK_THAT(r.err, Contains(c.message));
    CHECK_THAT(r.err, Contains("in.npz"));
  }
  std::ofstream(dir / "bad.npz") << "not a zip";
  auto bad = run_collage(
      dir, {"run", (dir / "tiny.onnx").string(), "--inputs", (dir / "bad.npz").string()});
  CHECK(bad.exit_code == 1);
  CHECK_THAT(bad.err, Contains("bad.npz: invalid zip archive"));
}

TEST_CASE("cli: --input-shape gives symbolic dimensions their size", "[cli]") {
  TempDir dir;
  testing::write_tiny_model(dir / "dyn.onnx", /*symbolic_batch=*/true);
  auto without = run_collage(dir, {"run", (dir / "dyn.onnx").string()});
  CHECK(without.exit_code == 1);
  CHECK_THAT(without.err, Contains("collage run: error: "));

  auto with = run_collage(dir, {"run", (dir / "dyn.onnx").string(), "--input-shape", "x=2x3",
                                "--input-shape", "y=2x3", "--outputs", (dir / "out.npz").string()});
  INFO(with.err);
  REQUIRE(with.exit_code == 0);
  auto out = read_npz(dir / "out.npz");
  REQUIRE(out.ok());
  CHECK(find(*out, "z")->shape() == Shape{2, 3});
}

}  // namespace
}  // namespace collage
