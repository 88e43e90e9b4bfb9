// Anchor schedules and pre-packed weights: a test operator library where Mul by a constant is an
// anchor whose schedule packs the constant (reversed) in a `pack` stage. The backend must run the
// pack kernel once at build time, keep the packed tensor (not the raw constant) as the record's
// constant, and pass it to the kernel in process and in an artifact.
#include <catch2/catch.hpp>

#include "artifact/artifact.h"
#include "collage/backends/native.h"
#include "collage/executor.h"
#include "collage/reference.h"
#include "collage/runtime.h"
#include "common/runtime_c_util.h"
#include "common/test_util.h"
#include "placement/baselines.h"
#include "te_ops/default_schedule.h"
#include "collage/te_ops.h"

using namespace collage;
using namespace collage::testing;

namespace {

// Mul(x, w) with a 1-D w read through wp[j] = w[n - 1 - j].
te_ops::TeOpDef packing_mul() {
  te_ops::TeOpDef def;
  def.compute = [](const Graph& g, const Node& node, std::span<const te::Tensor> in)
      -> absl::StatusOr<std::vector<te::Tensor>> {
    te::Tensor x = in[0], w = in[1];
    const int64_t n = w.shape()[0];
    te::Tensor wp = te::compute(
        {n}, [&](te::Var j) { return w(n - 1 - te::Expr(j)); }, node.name + ".packed", "pack");
    return std::vector<te::Tensor>{te::compute(
        g.value(node.outputs[0]).type.shape,
        [&](te::Var i, te::Var j) { return x(i, j) * wp(n - 1 - te::Expr(j)); }, node.name)};
  };
  def.schedule = [](const te_ops::AnchorGroup& group) -> absl::StatusOr<te_ops::ScheduledGroup> {
    te_ops::ScheduledGroup sg{te::create_schedule(group.outputs), {}};
    for (const te::Tensor& t : sg.schedule.stage_tensors()) {
      if (t.op_kind() != te::OpKind::compute) continue;
      if (t->tag == "pack") {
        sg.schedule[t].pack();
        sg.prepacked.push_back(t);
      } else if (!std::any_of(group.outputs.begin(), group.outputs.end(),
                              [&](const te::Tensor& o) { return o.same_as(t); })) {
        sg.schedule[t].compute_inline();
      }
    }
    return sg;
  };
  return def;
}

Graph mul_relu_graph(const Context& ctx) {
  GraphBuilder b(ctx);
  ValueId x = b.add_input("x", {DType::f32, {6, 37}});
  ValueId v = *b.add("Mul", {x, b.add_constant("w", random_f32({37}, 4))});
  b.add_output(*b.add("Relu", {v}));
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

std::unique_ptr<Backend> packing_backend() {
  auto ops = std::make_shared<te_ops::TeOpRegistry>(te_ops::default_te_ops());
  ops->add("Mul", packing_mul());
  NativeBackendOptions options;
  options.ops = ops;
  return make_native_backend(options);
}

}  // namespace

TEST_CASE("native anchor: pre-packed constants are computed once and passed to the kernel",
          "[native]") {
  Context ctx;
  Graph g = mul_relu_graph(ctx);
  auto backend = packing_backend();
  auto kernel = backend->build(g, {});
  INFO(kernel.status().ToString());
  REQUIRE(kernel.ok());
  const KernelRecord& r = (*kernel)->record();
  REQUIRE(r.constants.size() == 1);  // the packed weight only, not the raw one
  const Tensor& w = *g.constant_of(g.node(0).inputs[1]);
  for (int64_t j = 0; j < 37; ++j)
    CHECK(r.constants[0].data<float>()[j] == w.data<float>()[36 - j]);

  Tensor x = random_f32({6, 37}, 9);
  Tensor out(DType::f32, {6, 37});
  void* args[] = {x.raw(), out.raw()};
  for (int32_t t = 0; t < (*kernel)->task_count(); ++t) REQUIRE((*kernel)->run_task(args, t).ok());
  auto expected = run_reference(g, {x});
  REQUIRE(expected.ok());
  CHECK(out.identical((*expected)[0]));
}

TEST_CASE("native anchor: an artifact passes pre-packed constants to native kernels", "[native]") {
  Context ctx;
  Graph g = mul_relu_graph(ctx);
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(backends.add(packing_backend()).ok());
  auto placement = place_baseline("single:native", g, backends);
  REQUIRE(placement.ok());
  REQUIRE(placement->groups.size() == 1);
  auto bytes = compile_artifact(ctx, backends, g, *placement);
  INFO(bytes.status().ToString());
  REQUIRE(bytes.ok());
  collage_module_t* m = nullptr;
  collage_status_t* s = collage_module_load_memory(bytes->data(), bytes->size(), nullptr, &m);
  INFO((s ? collage_status_message(s) : ""));
  collage_status_free(s);
  REQUIRE(m);
  Tensor x = random_f32({6, 37}, 9);
  Tensor out(DType::f32, {6, 37});
  DLTensor in_dl = dl_view(x), out_dl = dl_view(out);
  s = collage_module_run(m, &in_dl, 1, &out_dl, 1);
  CHECK(s == nullptr);
  collage_status_free(s);
  collage_module_release(m);
  auto expected = run_reference(g, {x});
  REQUIRE(expected.ok());
  CHECK(out.identical((*expected)[0]));
}
