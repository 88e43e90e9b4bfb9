// Compiled artifacts and the two ONNX features of issue 16 that meet the runtime: TopK whose k
// the graph computes runs on the dynamic module as the reference executor runs it; a model with
// string tensors runs its string operators on the strings module, as the reference executor does.
#include <catch2/catch.hpp>
#include <cstring>

#include "collage/compiler.h"
#include "collage/ops.h"
#include "collage/reference.h"
#include "common/runtime_c_util.h"
#include "common/test_util.h"

namespace collage {
namespace {

// x f32[4x6], n i64[1] -> k = n + 1 -> TopK(x, k, axis 1, largest or smallest) -> values, indices.
Graph topk_graph(const Context& ctx, bool largest) {
  GraphBuilder b(ctx, "topk");
  const ValueId x = b.add_input("x", {DType::f32, {4, 6}});
  const ValueId n = b.add_input("n", {DType::i64, {1}});
  auto k = b.add("Add", {n, b.add_constant("one", Tensor::from_i64({1}, std::vector<int64_t>{1}))});
  REQUIRE(k.ok());
  auto top = b.add_node("TopK", {x, *k}, make_attrs<TopKAttrs>([&](auto& a) {
                          a.axis = 1;
                          a.largest = largest;
                        }),
                        "top");
  INFO(top.status().ToString());
  REQUIRE(top.ok());
  b.add_output((*top)[0]);
  b.add_output((*top)[1]);
  auto g = b.finish();
  REQUIRE(g.ok());
  return *std::move(g);
}

// Runs `m` with outputs sized by the run (collage_module_run_outputs); f32 or i64 outputs.
std::vector<Tensor> run_outputs(const collage_module_t* m, const std::vector<Tensor>& inputs,
                                std::string* message) {
  std::vector<DLTensor> in;
  for (const Tensor& t : inputs) in.push_back(testing::dl_view(t));
  collage_outputs_t* outs = nullptr;
  *message = testing::take_message(
      collage_module_run_outputs(m, in.data(), static_cast<int32_t>(in.size()), &outs));
  std::vector<Tensor> result;
  for (int32_t i = 0; i < collage_outputs_count(outs); ++i) {
    DLTensor t{};
    REQUIRE(testing::take_message(collage_outputs_get(outs, i, &t)).empty());
    Tensor copy(t.dtype.code == kDLFloat ? DType::f32 : DType::i64,
                Shape(t.shape, t.shape + t.ndim));
    if (copy.bytes()) std::memcpy(copy.raw(), t.data, copy.bytes());
    result.push_back(std::move(copy));
  }
  collage_outputs_release(outs);
  return result;
}

CompileOptions greedy() {
  CompileOptions o;
  o.placement.strategy = "greedy";
  o.placement.num_threads = 1;
  o.placement.executor = PlacementExecutor::sequential;
  return o;
}

TEST_CASE("compiler: TopK with a k the graph computes runs in an artifact", "[driver][topk]") {
  auto compiler = Compiler::create();
  REQUIRE(compiler.ok());
  for (bool largest : {true, false}) {
    const Graph g = topk_graph(compiler->context(), largest);
    auto r = compiler->compile(ModelSource::graph(g), greedy());
    INFO(r.status().ToString());
    REQUIRE(r.ok());
    bool on_dynamic = false;
    for (const PlacedGroup& group : r->optimized.placement.groups)
      on_dynamic = on_dynamic || group.backend == "dynamic";
    CHECK(on_dynamic);
    collage_module_t* m = nullptr;
    REQUIRE(testing::take_message(collage_module_load_memory(
                r->artifact.data(), r->artifact.size(), nullptr, &m)) == "");
    // Ties (the repeated 0.5) keep index order; k from 0 to the whole axis.
    Tensor x = testing::random_f32({4, 6}, 9);
    x.data<float>()[1] = x.data<float>()[4] = 0.5f;
    for (int64_t n : {-1, 0, 2, 5}) {
      INFO("largest " << largest << ", k " << n + 1);
      const std::vector<Tensor> in = {x, Tensor::from_i64({1}, std::vector<int64_t>{n})};
      std::string message;
      const std::vector<Tensor> got = run_outputs(m, in, &message);
      INFO(message);
      REQUIRE(got.size() == 2);
      auto want = run_reference(g, in);
      REQUIRE(want.ok());
      CHECK(got[0].shape() == Shape{4, n + 1});
      CHECK(got[0].identical((*want)[0]));
      CHECK(got[1].identical((*want)[1]));
    }
    // A k beyond the axis is an error of the run naming the operator.
    std::string message;
    run_outputs(m, {x, Tensor::from_i64({1}, std::vector<int64_t>{6})}, &message);
    CHECK_THAT(message, Catch::Contains("TopK") && Catch::Contains("k = 7 is outside [0, 6]"));
    collage_module_release(m);
  }
}

TEST_CASE("compiler: string tensors in an artifact", "[driver][strings]") {
  auto compiler = Compiler::create();
  REQUIRE(compiler.ok());
  GraphBuilder b(compiler->context(), "labels");
  const ValueId x = b.add_input("words", {DType::str, {3}});
  auto joined = b.add("StringConcat", {x, x});
  REQUIRE(joined.ok());
  auto same = b.add("StringEqual", {*joined, x});
  REQUIRE(same.ok());
  b.set_value_name(*joined, "joined");
  b.add_output(*joined);
  b.add_output(*same);
  auto g = b.finish();
  REQUIRE(g.ok());
  auto r = compiler->compile(ModelSource::graph(*g), greedy());
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  for (const PlacedGroup& group : r->optimized.placement.groups) CHECK(group.backend == "strings");
  collage_module_t* raw = nullptr;
  REQUIRE(testing::take_message(
              collage_module_load_memory(r->artifact.data(), r->artifact.size(), nullptr, &raw)) ==
          "");
  testing::ModulePtr m(raw);
  const std::vector<Tensor> in = {
      Tensor::from_strings({3}, std::vector<std::string>{"a", "caf\xc3\xa9", ""})};
  std::string message;
  const std::vector<Tensor> got = testing::run_module_outputs(m.get(), in, &message);
  INFO(message);
  REQUIRE(got.size() == 2);
  auto want = run_reference(*g, in);
  REQUIRE(want.ok());
  CHECK(got[0].identical((*want)[0]));
  CHECK(got[1].identical((*want)[1]));
  CHECK(got[0].data<std::string>()[1] == "caf\xc3\xa9" "caf\xc3\xa9");
  // A string output cannot go to a caller's buffer: its bytes are the library's.
  int32_t code = 0;
  testing::run_module(m.get(), in, &code, &message);
  CHECK(code == COLLAGE_STATUS_INVALID_ARGUMENT);
  CHECK_THAT(message, Catch::Contains("output 0 'joined' (str[3]) is a string tensor") &&
                          Catch::Contains("collage_module_run_outputs"));
}

}  // namespace
}  // namespace collage
