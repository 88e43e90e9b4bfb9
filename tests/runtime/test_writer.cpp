// The compiler side: what cannot go into an artifact is refused with a message naming the group
// or value; constants are stored once per buffer; the file is written atomically.
#include <catch2/catch.hpp>
#include <filesystem>

#include "collage/backends/eigen.h"
#include "collage/executor.h"
#include "common/test_util.h"
#include "placement/baselines.h"
#include "runtime/runtime_test_util.h"

using namespace collage;
using namespace collage::testing;
namespace fs = std::filesystem;

TEST_CASE("writer: groups on the reference backend are refused", "[runtime][writer]") {
  Context ctx;
  Graph g = mlp_graph(ctx);
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  auto placement = place_baseline("single:reference", g, backends);
  REQUIRE(placement.ok());
  auto bytes = compile_artifact(ctx, backends, g, *placement);
  CHECK(bytes.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(bytes.status().message().find(
            "group 0 (reference: MatMul_0) is placed on the reference backend, which has no "
            "runtime module") == 0);
}

TEST_CASE("writer: kernels must write what later kernels read", "[runtime][writer]") {
  Context ctx;
  GraphBuilder b(ctx, "g");
  ValueId x = b.add_input("x", {DType::f32, {8}});
  ValueId r = *b.add("Relu", {x});
  ValueId y = *b.add("Relu", {r});
  b.add_output(y);
  Graph g = *b.finish();
  std::vector<ArtifactKernel> kernels = {{"second", "eigen", {"eigen", "e", {}, {}}, 1, {r, y}, 1, nullptr},
                                         {"first", "eigen", {"eigen", "e", {}, {}}, 1, {x, r}, 1, nullptr}};
  auto bytes = serialize_artifact(g, kernels);
  CHECK(bytes.status().message() ==
        "kernel 0 (eigen: second) reads 'Relu_0' before any earlier kernel writes it");
  kernels = {{"first", "eigen", {"eigen", "e", {}, {}}, 1, {x, r}, 1, nullptr}};
  bytes = serialize_artifact(g, kernels);
  CHECK(bytes.status().message() == "graph output 'Relu_1' is written by no kernel");
  kernels = {{"first", "reference", {"reference", "run_reference", {}, {}}, 1, {x, r}, 1, nullptr}};
  bytes = serialize_artifact(g, kernels);
  CHECK(bytes.status().message() ==
        "kernel 0 (reference: first): module 'reference' has no runtime part");
}

TEST_CASE("writer: a constant shared by two kernels is stored once", "[runtime][writer]") {
  Context ctx;
  GraphBuilder b(ctx, "g");
  ValueId x = b.add_input("x", {DType::f32, {8}});
  ValueId y = *b.add("Relu", {x});
  ValueId z = *b.add("Relu", {y});
  b.add_output(z);
  Graph g = *b.finish();
  Tensor w = random_f32({256}, 1);
  std::vector<ArtifactKernel> kernels = {
      {"a", "eigen", {"eigen", "e", {}, {w}}, 1, {x, y}, 1, nullptr},
      {"b", "eigen", {"eigen", "e", {}, {w, w.clone()}}, 1, {y, z}, 1, nullptr}};
  ArtifactSummary summary;
  auto bytes = serialize_artifact(g, kernels, {}, &summary);
  REQUIRE(bytes.ok());
  CHECK(summary.constant_bytes == 2 * 1024);  // w once, its clone once
  CHECK(summary.arena_bytes == 64);           // y only
}

TEST_CASE("writer: write_artifact_for writes the file", "[runtime][writer]") {
  Context ctx;
  Graph g = mlp_graph(ctx);
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(register_eigen_backend(backends).ok());
  auto placement = place_baseline("single:eigen", g, backends);
  REQUIRE(placement.ok());
  const fs::path path = fs::temp_directory_path() / "collage_writer_test.collage";
  auto summary = write_artifact_for(ctx, backends, g, *placement, path);
  INFO(summary.status().ToString());
  REQUIRE(summary.ok());
  CHECK(fs::file_size(path) == summary->file_bytes);
  collage_module_t* m = nullptr;
  CHECK(take_message(collage_module_load_file(path.c_str(), nullptr, &m)).empty());
  collage_module_release(m);
  fs::remove(path);
}

TEST_CASE("writer: a file laid out in pieces writes the bytes of the whole sections",
          "[runtime][writer]") {
  using namespace artifact;
  const std::string plan = "the plan", a(100, 'a'), b(70, 'b');
  // A constants-like section: two pieces at aligned offsets, zeros between and after them.
  std::string whole(256, '\0');
  whole.replace(0, a.size(), a);
  whole.replace(128, b.size(), b);
  const FileLayout layout({{1, 0, plan.size(), {{0, plan}}}, {2, 0, 256, {{0, a}, {128, b}}}});
  const std::string expected = assemble_artifact({{1, 0, plan}, {2, 0, whole}});
  CHECK(layout.size() == expected.size());
  CHECK(layout.bytes() == expected);
  std::string streamed;
  size_t calls = 0;
  REQUIRE(layout.write([&](std::string_view s) {
    streamed += s;
    ++calls;
    return absl::OkStatus();
  }).ok());
  CHECK(streamed == expected);
  CHECK(split_sections(streamed)[1].bytes == whole);
  // The first error stops the write.
  calls = 0;
  const absl::Status failed = layout.write([&](std::string_view) {
    ++calls;
    return absl::UnavailableError("disk full");
  });
  CHECK(failed.message() == "disk full");
  CHECK(calls == 1);
}

TEST_CASE("writer: an artifact image streamed to a file is its bytes", "[runtime][writer]") {
  Context ctx;
  Graph g = mlp_graph(ctx);
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(register_eigen_backend(backends).ok());
  auto placement = place_baseline("single:eigen", g, backends);
  REQUIRE(placement.ok());
  ArtifactSummary summary;
  auto image = compile_artifact_image(ctx, backends, g, *placement, {}, &summary);
  REQUIRE(image.ok());
  CHECK(summary.constant_bytes > 0);
  CHECK(image->size() == summary.file_bytes);
  const fs::path path = fs::temp_directory_path() / "collage_writer_image_test.collage";
  REQUIRE(image->write_file(path).ok());
  const std::string bytes = image->bytes();
  CHECK(read_file(path.string()) == bytes);
  collage_module_t* m = nullptr;
  CHECK(take_message(collage_module_load_memory(bytes.data(), bytes.size(), nullptr, &m)).empty());
  collage_module_release(m);
  fs::remove(path);
}
