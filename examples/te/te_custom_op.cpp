// te_custom_op: a user-defined operator written in tensor expressions and used inside a model.
// "UserSoftsign" (y = x / (1 + |x|)) is registered on the Context like a built-in operator (shape
// inference, a reference kernel), its TE compute is added to the native backend's operator
// library, and a small graph x -> UserSoftsign -> Add(bias) -> Softmax is placed on the native
// backend, compiled (the custom operator fuses with the Add after it) and checked against a plain
// loop.
//
//   te_custom_op
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "collage/backends/native.h"
#include "collage/executor.h"
#include "collage/graph.h"
#include "collage/placement.h"
#include "collage/te_ops.h"

using namespace collage;
namespace te = collage::te;

namespace {

// 1. The operator's definition in the graph IR: one input, same output type, elementwise.
OpDef softsign_op() {
  return make_op<NoAttrs>(
      "UserSoftsign", FusionKind::elementwise, 1, 1,
      [](InferContext& ctx) {
        if (ctx.input(0).dtype != DType::f32) return ctx.error("input must be f32");
        ctx.set_output(0, ctx.input(0));
        return absl::OkStatus();
      },
      [](const KernelArgs& args) {
        const float* x = args.inputs[0].data<float>();
        float* y = args.outputs[0].data<float>();
        for (int64_t i = 0; i < args.inputs[0].numel(); ++i) y[i] = x[i] / (1.f + std::fabs(x[i]));
        return absl::OkStatus();
      });
}

// 2. Its tensor expression: one compute, elementwise over the input's shape.
te_ops::TeOpDef softsign_te() {
  return {[](const Graph& g, const Node& node, std::span<const te::Tensor> in)
              -> absl::StatusOr<std::vector<te::Tensor>> {
            te::Tensor x = in[0];
            return std::vector<te::Tensor>{te::compute(
                g.value(node.outputs[0]).type.shape,
                [&](const std::vector<te::Var>& i) {
                  te::Expr v = x(std::vector<te::Expr>(i.begin(), i.end()));
                  return v / (te::Expr(1.0f) + te::fabs(v));
                },
                node.name)};
          },
          nullptr};
}

}  // namespace

int main() {
  Context ctx;
  if (absl::Status s = ctx.ops().add(softsign_op()); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  auto ops = std::make_shared<te_ops::TeOpRegistry>(te_ops::default_te_ops());
  ops->add("UserSoftsign", softsign_te());

  // 3. A model using it.
  const int64_t rows = 8, cols = 37;
  std::vector<float> bias(cols);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  for (float& b : bias) b = dist(rng);
  GraphBuilder b(ctx, "custom");
  ValueId x = b.add_input("x", {DType::f32, {rows, cols}});
  auto y = b.add("UserSoftsign", {x});
  if (y.ok()) y = b.add("Add", {*y, b.add_constant("bias", Tensor::from_f32({cols}, bias))});
  if (y.ok()) y = b.add("Softmax", {*y});
  if (!y.ok()) {
    std::fprintf(stderr, "%s\n", y.status().ToString().c_str());
    return 1;
  }
  b.add_output(*y);
  auto graph = b.finish();
  if (!graph.ok()) {
    std::fprintf(stderr, "%s\n", graph.status().ToString().c_str());
    return 1;
  }

  // 4. Placed on the native backend (with this operator library) and compiled.
  BackendRegistry backends;
  NativeBackendOptions options;
  options.ops = ops;
  absl::Status s = backends.add(make_reference_backend());
  if (s.ok()) s = backends.add(make_native_backend(options));
  PlacementOptions placement_options;
  placement_options.strategy = "single:native";
  auto placement = s.ok() ? optimize(ctx, backends, *graph, placement_options)
                          : absl::StatusOr<Placement>(s);
  if (!placement.ok()) {
    std::fprintf(stderr, "%s\n", placement.status().ToString().c_str());
    return 1;
  }
  for (const PlacedGroup& group : placement->groups)
    std::printf("group of %zu nodes on %s\n", group.nodes.count(), group.backend.c_str());
  auto model = compile_placement(ctx, backends, *graph, *placement);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
    return 1;
  }

  // 5. Run and check against a plain loop.
  std::vector<float> in(rows * cols);
  for (float& v : in) v = dist(rng);
  auto out = model->run({Tensor::from_f32({rows, cols}, in)});
  if (!out.ok()) {
    std::fprintf(stderr, "%s\n", out.status().ToString().c_str());
    return 1;
  }
  double max_err = 0;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> e(cols);
    double sum = 0, mx = -1e30;
    for (int64_t c = 0; c < cols; ++c) {
      const double v = in[r * cols + c];
      e[c] = v / (1 + std::fabs(v)) + bias[c];
      mx = std::max(mx, e[c]);
    }
    for (double& v : e) sum += (v = std::exp(v - mx));
    for (int64_t c = 0; c < cols; ++c)
      max_err = std::max(max_err, std::fabs(e[c] / sum - (*out)[0].data<float>()[r * cols + c]));
  }
  bool all_native = true;
  for (const PlacedGroup& group : placement->groups)
    all_native = all_native && group.backend == kNativeBackend;
  std::printf("UserSoftsign -> Add -> Softmax on native: max |error| %.2e\n", max_err);
  return max_err < 1e-5 && all_native ? 0 : 1;
}
