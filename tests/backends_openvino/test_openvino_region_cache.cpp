// The region cache (backends/openvino/region_cache.h): a region built into an artifact stores its
// record under a key of what it depends on; a later build with the same code cache takes that
// record without compiling, and the artifact made from it runs as the reference does.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>

#include "artifact/artifact.h"
#include "backends/openvino/region_cache.h"
#include "collage/backends/openvino.h"
#include "collage/executor.h"
#include "collage/ops.h"
#include "collage/reference.h"
#include "collage/subgraph.h"
#include "common/runtime_c_util.h"
#include "common/test_util.h"
#include "openvino_test_graphs.h"
#include "ov_module.h"
#include "placement/baselines.h"

using namespace collage;
using namespace collage::testing;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> cache_files(const fs::path& dir) {
  std::vector<std::string> out;
  if (fs::exists(dir))
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  return out;
}

std::string bytes_of(const Tensor& t) {
  return std::string(static_cast<const char*>(t.raw()), t.bytes());
}

}  // namespace

TEST_CASE("openvino region cache: a record built once is read back, not compiled again",
          "[openvino][cache]") {
  Context ctx;
  const Graph g = conv_relu(ctx, 3);
  BackendRegistry backends;
  add_reference_and_openvino(backends);
  const Placement placement = one_openvino_region(g, backends);
  const fs::path dir = fs::temp_directory_path() / ("collage_ov_cache_" + std::to_string(getpid()));
  fs::remove_all(dir);
  BuildOptions build;
  build.num_threads = 2;
  build.code_cache = dir.string();

  // Building for an artifact makes the record, which goes to the cache: one file.
  auto first = build_artifact_kernels(ctx, backends, g, placement, build);
  INFO(first.status().ToString());
  REQUIRE(first.ok());
  const KernelRecord& made = (*first)[0].record;
  REQUIRE(made.constants.size() == 3);  // IR, weights, blob
  const std::vector<std::string> files = cache_files(dir);
  REQUIRE(files.size() == 1);
  CHECK(files[0].starts_with("ov-"));

  // The file holds that record, under the key of the group.
  auto group = extract_subgraph(ctx, g, placement.groups[0].nodes);
  REQUIRE(group.ok());
  const uint64_t key = openvino_backend::region_key(group->graph, 2, rt_openvino::library_build(),
                                                    backends.find(kOpenvinoBackend)->version());
  auto read = openvino_backend::read_cached_region(dir.string(), key);
  REQUIRE(read.has_value());
  CHECK(read->module == made.module);
  CHECK(read->entry == made.entry);
  CHECK(read->params == made.params);
  REQUIRE(read->constants.size() == made.constants.size());
  for (size_t i = 0; i < made.constants.size(); ++i)
    CHECK(bytes_of(read->constants[i]) == bytes_of(made.constants[i]));
  CHECK_FALSE(openvino_backend::read_cached_region(dir.string(), key + 1).has_value());

  // A second build takes the cached record (OpenVINO's export is not byte-stable from one
  // compile to the next, the cached record is): the same bytes, still one file.
  auto second = build_artifact_kernels(ctx, backends, g, placement, build);
  REQUIRE(second.ok());
  const KernelRecord& reused = (*second)[0].record;
  REQUIRE(reused.constants.size() == 3);
  for (size_t i = 0; i < 3; ++i) CHECK(bytes_of(reused.constants[i]) == bytes_of(made.constants[i]));
  CHECK(cache_files(dir).size() == 1);

  // Its artifact runs as the reference does; the kernel itself too (compiled when first run).
  const std::vector<Tensor> feed = {random_f32({1, 4, 6, 6}, 9)};
  auto expected = run_reference(g, feed);
  REQUIRE(expected.ok());
  auto bytes = serialize_artifact(g, *second);
  REQUIRE(bytes.ok());
  collage_module_t* m = nullptr;
  REQUIRE(take_message(collage_module_load_memory(bytes->data(), bytes->size(), nullptr, &m)) ==
          "");
  ModulePtr module(m);
  auto outs = run_module(module.get(), feed);
  REQUIRE(outs.size() == 1);
  CHECK(max_scaled_error(outs[0], (*expected)[0]) <= 1e-5);
  Tensor y(DType::f32, {1, 8, 6, 6});
  void* args[] = {const_cast<void*>(feed[0].raw()), y.raw()};
  REQUIRE((*second)[0].kernel->run_task(args, 0).ok());
  CHECK(max_scaled_error(y, (*expected)[0]) <= 1e-5);
  fs::remove_all(dir);
}

TEST_CASE("openvino region cache: the key covers the constants' contents and the threads",
          "[openvino][cache]") {
  Context ctx;
  const Graph a = conv_relu(ctx, 3), b = conv_relu(ctx, 4);
  REQUIRE(canonical_signature(a) == canonical_signature(b));  // only the weights differ
  const uint64_t ka = openvino_backend::region_key(a, 2, "lib", "v");
  CHECK(ka == openvino_backend::region_key(conv_relu(ctx, 3), 2, "lib", "v"));
  CHECK(ka != openvino_backend::region_key(b, 2, "lib", "v"));
  CHECK(ka != openvino_backend::region_key(a, 1, "lib", "v"));
  CHECK(ka != openvino_backend::region_key(a, 2, "other lib", "v"));
  CHECK(ka != openvino_backend::region_key(a, 2, "lib", "v2"));
}
