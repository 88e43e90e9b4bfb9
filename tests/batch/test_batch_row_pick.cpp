// A model that computes from one row of its batch (an exported `image[0]`, as the detector test
// model does) cannot take a batch range: `collage compile` refuses it naming the input and the
// node, unless some output follows the batch.
#include <catch2/catch.hpp>

#include "collage/tensor.h"
#include "frontends/onnx_test_model.h"
#include "tools/cli_test_util.h"

namespace collage {
namespace {

using TP = onnx::TensorProto;

// image f32[batch,3,8] -> Gather(0, axis 0) 'first' -> ReduceMax(axis 0) -> Greater(0.5) ->
// NonZero -> "hits"; with `batched_output`, also Relu(image) -> "all".
void write_first_image_model(const std::filesystem::path& path, bool batched_output) {
  testing::OnnxModel m(17);
  m.input_dims("image", TP::FLOAT, {"batch", "3", "8"});
  m.initializer("zero", Tensor::scalar_i64(0));
  m.initializer("half", Tensor::scalar_f32(0.5f));
  auto& first = m.node("Gather", {"image", "zero"}, {"picked"}, "first");
  testing::attr_int(first, "axis", 0);
  auto& max = m.node("ReduceMax", {"picked"}, {"peak"}, "peak");
  testing::attr_ints(max, "axes", {0});
  testing::attr_int(max, "keepdims", 0);
  m.node("Greater", {"peak", "half"}, {"hit"}, "hit");
  m.node("NonZero", {"hit"}, {"hits"}, "hits");
  m.output("hits");
  if (batched_output) {
    m.node("Relu", {"image"}, {"all"}, "all");
    m.output("all");
  }
  m.save(path.parent_path(), path.filename().string());
}

TEST_CASE("a model computing from one row of its batch refuses a batch range",
          "[batch][cli]") {
  testing::TempDir dir;
  write_first_image_model(dir / "first.onnx", /*batched_output=*/false);
  auto r = testing::run_collage(dir, {"compile", (dir / "first.onnx").string(), "--input-shape",
                                      "image=1..4x3x8", "--placement", "greedy", "-o",
                                      (dir / "first.collage").string()});
  INFO(r.out << r.err);
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Catch::Contains("Gather 'first' keeps one row of the batch of input 'image'") &&
                        Catch::Contains("cannot take a batch range"));

  // With an output that follows the batch, the range means something: compiled.
  write_first_image_model(dir / "both.onnx", /*batched_output=*/true);
  r = testing::run_collage(dir, {"compile", (dir / "both.onnx").string(), "--input-shape",
                                 "image=1..4x3x8", "--placement", "greedy", "-o",
                                 (dir / "both.collage").string()});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
}

}  // namespace
}  // namespace collage
