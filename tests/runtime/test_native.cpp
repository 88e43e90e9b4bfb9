// Embedded native code: a shared object inside the artifact, loaded from memory, its functions
// run as kernels with the task count of the plan; damaged or incomplete code is refused.
#include <catch2/catch.hpp>

#include "common/test_util.h"
#include "runtime/runtime_test_util.h"

using namespace collage;
using namespace collage::testing;

namespace {

// x f32[1000] -> relu (native, 4 tasks) -> r -> add_one (native, 3 tasks) -> y.
struct NativeModel {
  Graph graph;
  std::vector<ArtifactKernel> kernels;
};

NativeModel native_model(const Context& ctx, const std::string& second_entry) {
  GraphBuilder b(ctx, "native");
  ValueId x = b.add_input("x", {DType::f32, {1000}});
  ValueId r = *b.add("Relu", {x});
  ValueId y = *b.add("Relu", {r});
  b.set_value_name(y, "y");
  b.add_output(y);
  auto g = b.finish();
  REQUIRE(g.ok());
  NativeModel m{std::move(*g), {}};
  m.kernels.push_back({"relu", "native", {"native", "collage_test_relu", {}, {}}, 4, {x, r}, 1, nullptr});
  m.kernels.push_back({"add_one", "native", {"native", second_entry, {}, {}}, 3, {r, y}, 1, nullptr});
  return m;
}

std::string native_artifact(const std::string& second_entry = "collage_test_add_one") {
  Context ctx;
  NativeModel m = native_model(ctx, second_entry);
  ArtifactOptions options;
  options.native_library = read_file(COLLAGE_TEST_NATIVE_LIB);
  REQUIRE(!options.native_library.empty());
  auto bytes = serialize_artifact(m.graph, m.kernels, options);
  INFO(bytes.status().ToString());
  REQUIRE(bytes.ok());
  return *bytes;
}

}  // namespace

TEST_CASE("native code: embedded functions run as kernels", "[runtime][native]") {
  std::string message;
  ModulePtr m = load_bytes(native_artifact(), nullptr, nullptr, &message);
  INFO(message);
  REQUIRE(m);
  const Tensor x = random_f32({1000}, 2);
  std::vector<Tensor> out = run_module(m.get(), {x});
  REQUIRE(out.size() == 1);
  for (int64_t i = 0; i < 1000; ++i) {
    const float v = x.data<float>()[i];
    REQUIRE(out[0].data<float>()[i] == (v > 0 ? v : 0) + 1);
  }
  // Two modules with different native code loaded side by side keep their own functions.
  ModulePtr second = load_bytes(native_artifact(), nullptr, nullptr, &message);
  REQUIRE(second);
  CHECK(run_module(second.get(), {x})[0].identical(out[0]));
  m.reset();
  CHECK(run_module(second.get(), {x})[0].identical(out[0]));
}

TEST_CASE("native code: a missing function or damaged code is refused", "[runtime][native]") {
  int32_t code = -1;
  std::string message;
  ModulePtr m = load_bytes(native_artifact("collage_test_nope"), nullptr, &code, &message);
  CHECK(code == COLLAGE_STATUS_CORRUPT);
  CHECK(message ==
        "artifact in memory: kernel 1 (native: add_one): the native code has no function "
        "'collage_test_nope'");

  // One flipped bit in the code: the checksum fails before anything is loaded.
  std::string bytes = native_artifact();
  auto sections = split_sections(bytes);
  REQUIRE(sections.size() == 2);
  REQUIRE(sections[1].kind == 3);
  const size_t code_at = bytes.find(sections[1].bytes);
  bytes[code_at + 100] = static_cast<char>(bytes[code_at + 100] ^ 4);
  m = load_bytes(bytes, nullptr, &code, &message);
  CHECK(code == COLLAGE_STATUS_CORRUPT);
  CHECK(message ==
        "artifact in memory: corrupt artifact: section 1 (native code) checksum mismatch");

  // Code that is not a shared object (checksums fixed): dlopen refuses it, no crash.
  sections[1].bytes = std::string(4096, 'x');
  m = load_bytes(artifact::assemble_artifact(sections), nullptr, &code, &message);
  CHECK(code == COLLAGE_STATUS_IO);
  CHECK(message.find("cannot load the artifact's native code") != std::string::npos);
}

TEST_CASE("native code: the writer needs the library for native kernels", "[runtime][native]") {
  Context ctx;
  NativeModel m = native_model(ctx, "collage_test_add_one");
  auto bytes = serialize_artifact(m.graph, m.kernels, {});
  CHECK(bytes.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(bytes.status().message() ==
        "the plan has native kernels, but no native library (ArtifactOptions::native_library) "
        "was given");
}
