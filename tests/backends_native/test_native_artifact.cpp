// Native kernels in artifacts: a graph placed on the native backend, compiled into an artifact
// whose embedded shared object holds the generated code, loaded and run through the C API.
#include <catch2/catch.hpp>
#include <cstring>

#include "artifact/artifact.h"
#include "collage/backends/native.h"
#include "collage/executor.h"
#include "collage/ops/elementwise.h"
#include "collage/reference.h"
#include "collage/runtime.h"
#include "common/runtime_c_util.h"
#include "common/test_util.h"
#include "placement/baselines.h"

using namespace collage;
using namespace collage::testing;

namespace {

// x -> Add(bias) -> Relu -> Softmax -> Mul(scale) -> "y", and the same again on y -> "z" (two
// groups with identical code).
Graph two_block_graph(const Context& ctx) {
  GraphBuilder b(ctx);
  ValueId v = b.add_input("x", {DType::f32, {6, 37}});
  for (int block = 0; block < 2; ++block) {
    v = *b.add("Add", {v, b.add_constant("bias", random_f32({37}, 11 + block))});
    v = *b.add("Relu", {v});
    v = *b.add("Softmax", {v});
    v = *b.add("Mul", {v, b.add_constant("scale", random_f32({6, 1}, 21 + block))});
    b.add_output(v);
  }
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

}  // namespace

TEST_CASE("native artifact: generated code is embedded and runs in the runtime", "[native]") {
  Context ctx;
  Graph g = two_block_graph(ctx);
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(register_native_backend(backends).ok());
  auto placement = place_baseline("single:native", g, backends);
  INFO(placement.status().ToString());
  REQUIRE(placement.ok());
  for (const PlacedGroup& group : placement->groups) CHECK(group.backend == kNativeBackend);

  ArtifactSummary summary;
  auto bytes = compile_artifact(ctx, backends, g, *placement, {}, &summary);
  INFO(bytes.status().ToString());
  REQUIRE(bytes.ok());
  CHECK(summary.native_code_bytes > 0);
  CHECK(summary.modules == std::vector<std::string>{"native"});

  collage_module_t* m = nullptr;
  std::string err = take_message(collage_module_load_memory(bytes->data(), bytes->size(), nullptr, &m));
  INFO(err);
  REQUIRE(m);
  Tensor x = random_f32({6, 37}, 1);
  auto expected = run_reference(g, {x});
  REQUIRE(expected.ok());
  std::vector<Tensor> outputs;
  for (const Tensor& e : *expected) outputs.emplace_back(e.dtype(), e.shape());
  std::vector<DLTensor> in = {dl_view(x)}, out;
  for (const Tensor& t : outputs) out.push_back(dl_view(t));
  err = take_message(collage_module_run(m, in.data(), 1, out.data(), static_cast<int32_t>(out.size())));
  INFO(err);
  CHECK(err.empty());
  for (size_t o = 0; o < outputs.size(); ++o) {
    INFO("output " << o << ": " << describe_mismatch(outputs[o], (*expected)[o]));
    CHECK(max_relative_error(outputs[o], (*expected)[o]) < 1e-5);
  }
  collage_module_release(m);
}

TEST_CASE("native artifact: kernel records carry their object code and constants", "[native]") {
  Context ctx;
  Graph g = two_block_graph(ctx);
  auto backend = make_native_backend();
  auto kernel = backend->build(g, {});
  INFO(kernel.status().ToString());
  REQUIRE(kernel.ok());
  const KernelRecord& r = (*kernel)->record();
  CHECK(r.module == "native");
  CHECK(r.entry.rfind("collage_native_", 0) == 0);
  CHECK(r.params.size() > 4);
  CHECK(std::memcmp(r.params.data(), "\x7f" "ELF", 4) == 0);
  CHECK(r.constants.size() == 4);  // both biases and scales, in argument order
}

TEST_CASE("native artifact: kernels built on two threads make the same artifact", "[native]") {
  // Every node its own group, so that the two threads compile different kernels at once; a fresh
  // backend per compile, so that neither takes the other's code from memory.
  Context ctx;
  Graph g = two_block_graph(ctx);
  Placement p;
  for (NodeId n = 0; n < static_cast<NodeId>(g.nodes().size()); ++n)
    p.groups.push_back({NodeSet::of(g.nodes().size(), {n}), std::string(kNativeBackend), "", -1, {}});
  const auto compile_with = [&](int threads) {
    BackendRegistry backends;
    REQUIRE(register_native_backend(backends).ok());
    ArtifactOptions options;
    options.build.measure_choices = false;  // builds that time nothing may run side by side
    options.build_threads = threads;
    auto bytes = compile_artifact(ctx, backends, g, p, options);
    INFO(bytes.status().ToString());
    REQUIRE(bytes.ok());
    return *bytes;
  };
  const std::string one = compile_with(1);
  CHECK(compile_with(2) == one);
  CHECK(compile_with(3) == one);
}
