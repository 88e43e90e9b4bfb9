// `collage compile` with a batch range and with data-dependent shapes, through the built binary:
// the artifact takes every batch of the range through `collage run`; a model with NonZero runs in
// process and as an artifact with outputs of run-time size; ranges are refused where they mean
// nothing.
#include <catch2/catch.hpp>

#include "collage/npz.h"
#include "common/test_util.h"
#include "frontends/onnx_test_model.h"
#include "tools/cli_test_util.h"

namespace collage {
namespace {

using Catch::Contains;
using testing::run_collage;
using testing::TempDir;
using TP = onnx::TensorProto;

// x f32[batch, 4] -> MatMul(w 4x3) -> Relu -> Softmax(last axis) -> y; the batch is symbolic.
void write_batch_model(const std::filesystem::path& path) {
  testing::OnnxModel m(17);
  m.input_dims("x", TP::FLOAT, {"batch", "4"});
  m.initializer("w", testing::random_f32({4, 3}, 3));
  m.node("MatMul", {"x", "w"}, {"h"});
  m.node("Relu", {"h"}, {"r"});
  m.node("Softmax", {"r"}, {"y"});
  m.output("y");
  m.save(path.parent_path(), path.filename().string());
}

// x f32[6] -> NonZero -> Squeeze(0) -> Gather(table f32[6,2]) -> rows f32[?, 2].
void write_nonzero_model(const std::filesystem::path& path) {
  testing::OnnxModel m(17);
  m.input("x", TP::FLOAT, {6});
  m.initializer("table", testing::random_f32({6, 2}, 4));
  m.initializer("zero", Tensor::from_i64({1}, std::vector<int64_t>{0}));
  m.node("NonZero", {"x"}, {"nz"});
  m.node("Squeeze", {"nz", "zero"}, {"idx"});
  m.node("Gather", {"table", "idx"}, {"rows"});
  m.output("rows");
  m.save(path.parent_path(), path.filename().string());
}

TEST_CASE("cli: compile with a batch range runs every batch of it", "[cli][dynamic-batch]") {
  TempDir dir;
  write_batch_model(dir / "m.onnx");
  auto r = run_collage(dir, {"compile", (dir / "m.onnx").string(), "--input-shape",
                             "x=1..6x4", "--placement", "greedy", "--no-compare", "-o",
                             (dir / "m.collage").string()});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("batches 1..6, 4 plans") && Contains("padded with zero rows"));
  for (int64_t batch : {1, 3, 6}) {
    INFO("batch " << batch);
    const Tensor x = testing::random_f32({batch, 4}, 7);
    REQUIRE(write_npz(dir / "in.npz", {{"x", x}}).ok());
    auto a = run_collage(dir, {"run", (dir / "m.collage").string(), "--inputs",
                               (dir / "in.npz").string(), "--outputs",
                               (dir / "a.npz").string()});
    INFO(a.err);
    REQUIRE(a.exit_code == 0);
    auto ref = run_collage(dir, {"run", (dir / "m.onnx").string(), "--input-shape",
                                 "x=" + std::to_string(batch) + "x4", "--placement",
                                 "reference", "--inputs", (dir / "in.npz").string(),
                                 "--outputs", (dir / "ref.npz").string()});
    INFO(ref.err);
    REQUIRE(ref.exit_code == 0);
    auto got = read_npz(dir / "a.npz");
    auto want = read_npz(dir / "ref.npz");
    REQUIRE(got.ok());
    REQUIRE(want.ok());
    CHECK((*got)[0].second.shape() == Shape{batch, 3});
    CHECK(testing::max_relative_error((*got)[0].second, (*want)[0].second) < 1e-5);
  }
  // Explicit batch sizes; a range where it means nothing.
  r = run_collage(dir, {"compile", (dir / "m.onnx").string(), "--input-shape", "x=2..6x4",
                        "--batch-sizes", "3,5", "--placement", "greedy", "--no-compare", "-o",
                        (dir / "m2.collage").string()});
  INFO(r.err);
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Contains("ascends and ends with 6"));
  r = run_collage(dir, {"run", (dir / "m.onnx").string(), "--input-shape", "x=1..6x4"});
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Contains("is for `collage compile -o`"));
}

TEST_CASE("cli: outputs of run-time size in process and from an artifact",
          "[cli][dynamic-shapes]") {
  TempDir dir;
  write_nonzero_model(dir / "nz.onnx");
  const Tensor x = Tensor::from_f32({6}, std::vector<float>{0, 1, 0, 2, 3, 0});
  REQUIRE(write_npz(dir / "in.npz", {{"x", x}}).ok());
  auto info = run_collage(dir, {"info", (dir / "nz.onnx").string()});
  INFO(info.err);
  REQUIRE(info.exit_code == 0);
  CHECK_THAT(info.out, Contains("?x2"));
  auto placed = run_collage(dir, {"run", (dir / "nz.onnx").string(), "--inputs",
                                  (dir / "in.npz").string(), "--outputs",
                                  (dir / "placed.npz").string(), "--budget", "2"});
  INFO(placed.err);
  REQUIRE(placed.exit_code == 0);
  auto compiled = run_collage(dir, {"compile", (dir / "nz.onnx").string(), "--no-compare",
                                    "--budget", "2", "-o", (dir / "nz.collage").string()});
  INFO(compiled.out << compiled.err);
  REQUIRE(compiled.exit_code == 0);
  CHECK_THAT(compiled.out, Contains("dynamic"));
  auto run = run_collage(dir, {"run", (dir / "nz.collage").string(), "--inputs",
                               (dir / "in.npz").string(), "--outputs",
                               (dir / "artifact.npz").string()});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  auto a = read_npz(dir / "placed.npz");
  auto b = read_npz(dir / "artifact.npz");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK((*a)[0].second.shape() == Shape{3, 2});
  CHECK((*b)[0].second.identical((*a)[0].second));
}

}  // namespace
}  // namespace collage
