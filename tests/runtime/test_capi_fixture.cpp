// Not a test of its own: writes the data the C, C++ and Python API tests and the examples use
// (ctest runs it as the fixture capi/fixture). Hidden from the default test list.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "collage/npz.h"
#include "collage/passes.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "frontends/onnx_test_model.h"
#include "runtime/runtime_test_util.h"

using namespace collage;
using namespace collage::testing;
namespace fs = std::filesystem;

// In COLLAGE_BINARY_DIR/test-data/capi: mlp.onnx (x f32[1x16] -> MatMul, Add, Relu, MatMul, Add ->
// logits f32[1x10]), mlp.collage (placed with single:eigen), damaged.collage (a bit of its plan
// flipped), input.npy, expected.npy (the reference executor's logits) and expected_class.txt
// (their argmax); mlp_batch.onnx, the same with a symbolic batch ("batch" x 16), input3.npy
// (3 rows) and expected3.npy (the reference's logits at batch 3), for the dynamic-batch tests;
// strings.onnx (words str[2] -> StringConcat(words, words) -> twice), for the string tests.
TEST_CASE("capi fixture: test data for the C API tests and the examples", "[.capi-fixture]") {
  const fs::path dir = fs::path(COLLAGE_BINARY_DIR) / "test-data" / "capi";
  fs::create_directories(dir);
  OnnxModel model;
  model.input("x", onnx::TensorProto::FLOAT, {1, 16});
  model.initializer("w1", random_f32({16, 32}, 21));
  model.initializer("b1", random_f32({32}, 22));
  model.initializer("w2", random_f32({32, 10}, 23));
  model.initializer("b2", random_f32({10}, 24));
  model.node("MatMul", {"x", "w1"}, {"h0"});
  model.node("Add", {"h0", "b1"}, {"h1"});
  model.node("Relu", {"h1"}, {"h2"});
  model.node("MatMul", {"h2", "w2"}, {"h3"});
  model.node("Add", {"h3", "b2"}, {"logits"});
  model.output("logits");
  model.save(dir, "mlp.onnx");

  OnnxModel strings(20);
  strings.input("words", onnx::TensorProto::STRING, {2});
  strings.node("StringConcat", {"words", "words"}, {"twice"});
  strings.output("twice");
  strings.save(dir, "strings.onnx");

  Context ctx;
  auto imported = import_onnx_file(ctx, dir / "mlp.onnx");
  INFO(imported.status().ToString());
  REQUIRE(imported.ok());
  auto g = run_passes(ctx, *imported);
  REQUIRE(g.ok());
  const std::string artifact = backend_artifact(*g, "eigen");
  write_file((dir / "mlp.collage").string(), artifact);
  std::string damaged = artifact;  // one bit flipped in the plan section (the first section)
  damaged[split_sections(artifact).size() * 32 + 64 + 16] ^= 1;
  write_file((dir / "damaged.collage").string(), damaged);
  const Tensor x = random_f32({1, 16}, 25);
  REQUIRE(write_npy(dir / "input.npy", x).ok());
  auto expected = run_reference(*g, {x});
  REQUIRE(expected.ok());
  REQUIRE(write_npy(dir / "expected.npy", (*expected)[0]).ok());
  const float* logits = (*expected)[0].data<float>();
  int best = 0;
  for (int i = 1; i < 10; ++i)
    if (logits[i] > logits[best]) best = i;
  std::ofstream(dir / "expected_class.txt") << best << "\n";

  OnnxModel batched = model;
  batched.graph().mutable_input()->Clear();
  batched.input_dims("x", onnx::TensorProto::FLOAT, {"batch", "16"});
  batched.save(dir, "mlp_batch.onnx");
  OnnxImportOptions at3;
  at3.input_shapes["x"] = {3, 16};
  auto three = import_onnx_file(ctx, dir / "mlp_batch.onnx", at3);
  INFO(three.status().ToString());
  REQUIRE(three.ok());
  const Tensor x3 = random_f32({3, 16}, 26);
  REQUIRE(write_npy(dir / "input3.npy", x3).ok());
  auto expected3 = run_reference(*three, {x3});
  REQUIRE(expected3.ok());
  REQUIRE(write_npy(dir / "expected3.npy", (*expected3)[0]).ok());
}
