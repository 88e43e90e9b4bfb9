// The dynamic module on f16 and bf16: a model whose shapes are known only at run time (reductions
// over axes given as an input, then elementwise arithmetic, more reductions and Casts), every
// node on the dynamic module, equal bit for bit to the reference executor (each step computed in
// float and rounded to the type); and a node the module does not run on 16-bit floats (ArgMax)
// is not offered, where it used to be claimed and fail when the model ran.
#include <catch2/catch.hpp>

#include "collage/backends/dynamic.h"
#include "collage/executor.h"
#include "collage/ops.h"
#include "collage/ops/elementwise.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "runtime/runtime_test_util.h"

namespace collage::testing {
namespace {

// x t[3x5x64], axes i64[1] -> d = ReduceMean(x, axes) - ReduceMax(x, axes) -> q = exp(-sqrt|d|)
// * d / (|d| + 1) -> ReduceMin(q, axes) as f32, ReduceSumSquare(q, axes), ReduceSum(x, axes) as
// i64 and q cast to the other 16-bit type: every shape after the first reductions is known only
// when the axes are.
Graph half_graph(const Context& ctx, DType t) {
  GraphBuilder b(ctx, "half");
  const ValueId x = b.add_input("x", {t, {3, 5, 64}});
  const ValueId axes = b.add_input("axes", {DType::i64, {1}});
  const ValueId one = b.add_constant("one", Tensor::scalar_f32(1).cast(t));
  auto op = [&](const char* name, std::vector<ValueId> in,
                std::shared_ptr<const OpAttrs> attrs = nullptr) {
    auto v = b.add(name, in, attrs);
    INFO(name << ": " << v.status().ToString());
    REQUIRE(v.ok());
    return *v;
  };
  auto cast = [&](ValueId v, DType to) {
    return op("Cast", {v}, make_attrs<CastAttrs>([&](auto& a) { a.to = dtype_name(to); }));
  };
  const ValueId d = op("Sub", {op("ReduceMean", {x, axes}), op("ReduceMax", {x, axes})});
  const ValueId a = op("Abs", {d});
  const ValueId q = op("Div", {op("Mul", {op("Exp", {op("Neg", {op("Sqrt", {a})})}), d}),
                               op("Add", {a, one})});
  b.add_output(cast(op("ReduceMin", {q, axes}), DType::f32));
  b.add_output(op("ReduceSumSquare", {q, axes}));
  b.add_output(cast(op("ReduceSum", {x, axes}), DType::i64));
  b.add_output(cast(q, t == DType::f16 ? DType::bf16 : DType::f16));
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

TEST_CASE("the dynamic module runs f16 and bf16 with run-time shapes as the reference does",
          "[runtime][dynamic-shapes]") {
  Context ctx;
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(register_dynamic_backend(backends).ok());
  for (DType t : {DType::f16, DType::bf16})
    for (int64_t axis : {0, 2, -2}) {
      INFO(dtype_name(t) << " axis " << axis);
      const Graph g = half_graph(ctx, t);
      auto model = compile_placement(ctx, backends, g, one_group_per_node(g, "dynamic"));
      INFO(model.status().ToString());
      REQUIRE(model.ok());
      const std::vector<Tensor> in = {random_f32({3, 5, 64}, 7, -3.f, 3.f).cast(t),
                                      Tensor::from_i64({1}, std::vector<int64_t>{axis})};
      auto got = model->run(in);
      INFO(got.status().ToString());
      REQUIRE(got.ok());
      auto want = run_reference(g, in);
      REQUIRE(want.ok());
      REQUIRE(got->size() == want->size());
      for (size_t i = 0; i < got->size(); ++i) {
        INFO("output " << i << ": " << type_to_string((*got)[i].type()));
        CHECK((*got)[i].identical((*want)[i]));
      }
    }
}

TEST_CASE("the dynamic module offers no ArgMax of a 16-bit float", "[runtime][dynamic-shapes]") {
  Context ctx;
  BackendRegistry backends;
  REQUIRE(register_dynamic_backend(backends).ok());
  const Backend& dynamic = *backends.find("dynamic");
  for (DType t : {DType::f32, DType::f16, DType::bf16}) {
    INFO(dtype_name(t));
    GraphBuilder b(ctx, "argmax");
    const ValueId x = b.add_input("x", {t, {3, 5, 64}});
    const ValueId axes = b.add_input("axes", {DType::i64, {1}});
    auto s = b.add("ReduceSum", {x, axes});
    REQUIRE(s.ok());
    auto m = b.add("ArgMax", {*s});
    REQUIRE(m.ok());
    b.add_output(*m);
    auto g = b.finish();
    REQUIRE(g.ok());
    GraphReachability reach(*g);
    bool sum = false, arg_max = false;
    for (const Candidate& c : dynamic.candidates(*g, reach, RuleOptions{})) {
      sum = sum || g->node(c.nodes.first()).op_name() == "ReduceSum";
      arg_max = arg_max || g->node(c.nodes.first()).op_name() == "ArgMax";
    }
    CHECK(sum);
    CHECK(arg_max == (t == DType::f32));
  }
}

}  // namespace
}  // namespace collage::testing
