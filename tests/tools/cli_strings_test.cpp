// `collage run` and `collage compile` on a model with string tensors, through the built binary:
// string arrays in .npz inputs and outputs with the reference executor, placed in process, and
// compiled into an artifact that `collage run` runs through the runtime library.
#include <catch2/catch.hpp>

#include "collage/npz.h"
#include "frontends/onnx_test_model.h"
#include "tools/cli_test_util.h"

namespace collage {
namespace {

using Catch::Contains;
using testing::run_collage;
using testing::TempDir;
using TP = onnx::TensorProto;

// words str[3] -> StringConcat(words, "!") -> shout; -> LabelEncoder -> ids i64[3].
void write_string_model(const std::filesystem::path& path) {
  testing::OnnxModel m(20);
  onnx::OperatorSetIdProto* ml = m.proto().add_opset_import();
  ml->set_domain("ai.onnx.ml");
  ml->set_version(4);
  m.input("words", TP::STRING, {3});
  m.initializer("bang", Tensor::from_strings({1}, std::vector<std::string>{"!"}));
  m.node("StringConcat", {"words", "bang"}, {"shout"});
  auto& enc = m.node("LabelEncoder", {"words"}, {"ids"});
  enc.set_domain("ai.onnx.ml");
  testing::attr_strings(enc, "keys_strings", {"cat", "caf\xc3\xa9"});
  testing::attr_ints(enc, "values_int64s", {1, 2});
  m.output("shout");
  m.output("ids");
  m.save(path.parent_path(), path.filename().string());
}

TEST_CASE("cli: string inputs and outputs in .npz files", "[cli][strings]") {
  TempDir dir;
  write_string_model(dir / "s.onnx");
  const Tensor words =
      Tensor::from_strings({3}, std::vector<std::string>{"caf\xc3\xa9", "dog", "cat"});
  REQUIRE(write_npz(dir / "in.npz", {{"words", words}}).ok());
  auto run = run_collage(dir, {"run", (dir / "s.onnx").string(), "--inputs",
                               (dir / "in.npz").string(), "--outputs",
                               (dir / "out.npz").string(), "--placement", "reference"});
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  auto out = read_npz(dir / "out.npz");
  REQUIRE(out.ok());
  REQUIRE(out->size() == 2);
  CHECK((*out)[0].second.identical(Tensor::from_strings(
      {3}, std::vector<std::string>{"caf\xc3\xa9!", "dog!", "cat!"})));
  CHECK((*out)[1].second.to_int64_vector() == std::vector<int64_t>{2, -1, 1});

  // Placed in process, and compiled into an artifact: the same outputs, the string operators
  // on the strings backend.
  auto expect_same = [&](const std::filesystem::path& model, const char* name) {
    auto r = run_collage(dir, {"run", model.string(), "--inputs", (dir / "in.npz").string(),
                               "--outputs", (dir / name).string(), "--budget", "2"});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    auto got = read_npz(dir / name);
    REQUIRE(got.ok());
    REQUIRE(got->size() == 2);
    CHECK((*got)[0].second.identical((*out)[0].second));
    CHECK((*got)[1].second.identical((*out)[1].second));
  };
  expect_same(dir / "s.onnx", "placed.npz");
  auto compiled = run_collage(dir, {"compile", (dir / "s.onnx").string(), "--no-compare",
                                    "--budget", "2", "-o", (dir / "s.collage").string()});
  INFO(compiled.out << compiled.err);
  REQUIRE(compiled.exit_code == 0);
  CHECK_THAT(compiled.out, Contains("strings"));
  expect_same(dir / "s.collage", "artifact.npz");
}

}  // namespace
}  // namespace collage
