// Dynamic-batch artifacts: plans compiled for a few batch sizes in one file, loaded through the C
// API, run at every batch of the range (a batch without a plan padded to the next larger one)
// and compared with the reference executor at that batch; the range and axes in the tensor info;
// the errors of a batch outside the range and of a plan list the loader must refuse.
#include <catch2/catch.hpp>

#include "collage/backends/eigen.h"
#include "collage/executor.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "placement/baselines.h"
#include "runtime/runtime_test_util.h"

namespace collage::testing {
namespace {

// x f32[B,16] -> MatMul(w 16x10) -> Add(b) -> Relu; the same weights at every B.
Graph mlp_at(const Context& ctx, int64_t batch) {
  GraphBuilder b(ctx, "mlp");
  ValueId x = b.add_input("x", {DType::f32, {batch, 16}});
  ValueId w = b.add_constant("w", random_f32({16, 10}, 1));
  ValueId bias = b.add_constant("b", random_f32({10}, 2));
  ValueId h = *b.add("MatMul", {x, w});
  h = *b.add("Add", {h, bias});
  ValueId y = *b.add("Relu", {h});
  b.set_value_name(y, "y");
  b.add_output(y);
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

struct Compiled {
  std::vector<Graph> graphs;
  std::string bytes;
};

// The MLP at each of `batches` placed with single:eigen, as one artifact for min..max.
Compiled batch_artifact(const std::vector<int64_t>& batches, int64_t min, bool padded) {
  Context ctx;
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(register_eigen_backend(backends).ok());
  Compiled c;
  std::vector<Placement> placements;
  for (int64_t b : batches) {
    c.graphs.push_back(mlp_at(ctx, b));
    auto p = place_single(c.graphs.back(), backends, "eigen", BaselineOptions{});
    REQUIRE(p.ok());
    placements.push_back(*p);
  }
  std::vector<PlacedBatch> placed;
  for (size_t i = 0; i < batches.size(); ++i)
    placed.push_back({batches[i], &c.graphs[i], &placements[i]});
  DynamicBatchInfo info{min, batches.back(), {0}, {0}, padded};
  auto bytes = compile_batch_artifact(ctx, backends, placed, info);
  INFO(bytes.status().ToString());
  REQUIRE(bytes.ok());
  c.bytes = std::move(*bytes);
  return c;
}

// Runs `m` on x of batch x.shape()[0] with an output of the same batch.
Tensor run_at(const collage_module_t* m, const Tensor& x, int32_t* code, std::string* message) {
  Tensor y(DType::f32, {x.shape()[0], 10});
  DLTensor in = dl_view(x), out = dl_view(y);
  collage_status_t* s = collage_module_run(m, &in, 1, &out, 1);
  *code = collage_status_code(s);
  *message = take_message(s);
  return y;
}

TEST_CASE("a dynamic-batch artifact runs every batch of its range", "[runtime][dynamic-batch]") {
  const Compiled c = batch_artifact({2, 4, 6}, 1, /*padded=*/true);
  auto m = load_bytes(c.bytes, nullptr, nullptr, nullptr);
  REQUIRE(m);
  Context ctx;
  for (int64_t b = 1; b <= 6; ++b) {
    INFO("batch " << b);
    const Tensor x = random_f32({b, 16}, 10 + static_cast<uint64_t>(b));
    int32_t code;
    std::string message;
    const Tensor y = run_at(m.get(), x, &code, &message);
    INFO(message);
    REQUIRE(code == COLLAGE_STATUS_OK);
    auto want = run_reference(mlp_at(ctx, b), {x});
    REQUIRE(want.ok());
    CHECK(max_relative_error(y, (*want)[0]) < 1e-5);
  }
}

TEST_CASE("a dynamic-batch artifact reports its range and refuses batches outside it",
          "[runtime][dynamic-batch]") {
  const Compiled c = batch_artifact({1, 3}, 1, /*padded=*/false);
  auto m = load_bytes(c.bytes, nullptr, nullptr, nullptr);
  REQUIRE_FALSE(m);  // batch 2 has no plan and the artifact does not allow padding
  const Compiled d = batch_artifact({2, 4}, 2, /*padded=*/true);
  m = load_bytes(d.bytes, nullptr, nullptr, nullptr);
  REQUIRE(m);
  collage_tensor_info_t info{};
  info.struct_size = sizeof info;
  REQUIRE(take_message(collage_module_input_info(m.get(), 0, &info)).empty());
  CHECK(info.batch_axis == 0);
  CHECK(info.batch_min == 2);
  CHECK(info.batch_max == 4);
  CHECK(info.shape[0] == 4);
  REQUIRE(take_message(collage_module_output_info(m.get(), 0, &info)).empty());
  CHECK(info.batch_axis == 0);
  int32_t code;
  std::string message;
  run_at(m.get(), random_f32({5, 16}, 1), &code, &message);
  CHECK(code == COLLAGE_STATUS_INVALID_ARGUMENT);
  CHECK_THAT(message, Catch::Contains("batch of 5") && Catch::Contains("batches 2 to 4"));
  run_at(m.get(), random_f32({1, 16}, 1), &code, &message);
  CHECK(code == COLLAGE_STATUS_INVALID_ARGUMENT);
  // An output of another batch than the input's.
  const Tensor x = random_f32({3, 16}, 1);
  Tensor y(DType::f32, {4, 10});
  DLTensor in = dl_view(x), out = dl_view(y);
  message = take_message(collage_module_run(m.get(), &in, 1, &out, 1));
  CHECK_THAT(message, Catch::Contains("output 0 'y'") && Catch::Contains("f32[3x10]"));
}

TEST_CASE("an artifact of a fixed batch reports no batch range", "[runtime][dynamic-batch]") {
  Context ctx;
  const std::string bytes = backend_artifact(mlp_graph(ctx), "eigen");
  auto m = load_bytes(bytes, nullptr, nullptr, nullptr);
  REQUIRE(m);
  collage_tensor_info_t info{};
  info.struct_size = sizeof info;
  info.batch_axis = 7;
  REQUIRE(take_message(collage_module_input_info(m.get(), 0, &info)).empty());
  CHECK(info.batch_axis == -1);
  CHECK(info.batch_max == 0);
}

TEST_CASE("equal constants of the plans are stored once", "[runtime][dynamic-batch]") {
  const Compiled one = batch_artifact({4}, 3, /*padded=*/true);
  const Compiled three = batch_artifact({1, 2, 4}, 1, /*padded=*/true);
  // Each import makes its own weight buffers; the writer keeps one copy of equal contents.
  const auto sections = [](const std::string& file) {
    size_t constants = 0;
    for (const auto& s : split_sections(file))
      if (s.kind == static_cast<uint32_t>(artifact::SectionKind::constants))
        constants = s.bytes.size();
    return constants;
  };
  CHECK(sections(three.bytes) == sections(one.bytes));
}

}  // namespace
}  // namespace collage::testing
