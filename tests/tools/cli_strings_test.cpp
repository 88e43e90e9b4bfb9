// `collage run` and `collage compile` on a model with string tensors, through the built binary:
// string arrays in .npz inputs and outputs with the reference executor, and the compile refusal
// that names the string tensor.
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

  // Placed in process (no --placement reference): refused naming the tensor, as compile is.
  auto placed = run_collage(dir, {"run", (dir / "s.onnx").string(), "--inputs",
                                  (dir / "in.npz").string(), "--budget", "2"});
  CHECK(placed.exit_code == 1);
  CHECK_THAT(placed.err, Contains("tensor 'words' is a string tensor (str[3])") &&
                             Contains("--placement reference"));
  auto compiled = run_collage(dir, {"compile", (dir / "s.onnx").string(), "--no-compare",
                                    "--budget", "2", "-o", (dir / "s.collage").string()});
  CHECK(compiled.exit_code != 0);
  CHECK_THAT(compiled.err, Contains("tensor 'words' is a string tensor (str[3])"));
}

}  // namespace
}  // namespace collage
