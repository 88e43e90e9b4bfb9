// compile_and_run: the design in one program, from collage's public headers and libraries only.
//
//   1. An operator of our own, "MatMulT" (y = x @ w^T), declared to the graph IR: its shape
//      inference and a plain reference kernel that defines what it means.
//   2. Its tensor expression and its CPU schedule (rows split over threads, columns vectorized),
//      added to the generated-code backend's operator library.
//   3. A backend of our own, "addrelu", with a pattern: it claims Add followed by Relu and builds
//      the pair with collage's generated code.
//   4. A graph built in C++: x -> MatMulT(w1) -> Add(b1) -> Relu -> MatMulT(w2) -> Add(b2).
//   5. The placement optimizer over the built-in backends and ours, and the artifact.
//   6. The artifact run by libcollage_runtime, checked against the reference executor.
//
//   compile_and_run [OUT.collage]
#include <collage/backends/native.h>
#include <collage/compiler.h>
#include <collage/executor.h>
#include <collage/reference.h>
#include <collage/runtime.h>
#include <collage/schedule.h>
#include <collage/te_ops.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace collage;

namespace {

// 1. The operator: x [M, K] and w [N, K] (f32) give y [M, N], y[i, j] = sum_k x[i, k] w[j, k].
// An anchor: an elementwise chain after it may be fused into its kernel.
OpDef matmul_t_op() {
  return make_op<NoAttrs>(
      "MatMulT", FusionKind::out_elementwise_fusable, 2, 2,
      [](InferContext& ctx) {
        const TensorType& x = ctx.input(0);
        const TensorType& w = ctx.input(1);
        if (x.dtype != DType::f32 || w.dtype != DType::f32 || x.shape.size() != 2 ||
            w.shape.size() != 2 || x.shape[1] != w.shape[1])
          return ctx.error("expected f32 x [M, K] and w [N, K]");
        ctx.set_output(0, {DType::f32, {x.shape[0], w.shape[0]}});
        return absl::OkStatus();
      },
      [](const KernelArgs& args) {
        const Tensor &x = args.inputs[0], &w = args.inputs[1];
        const int64_t m = x.shape()[0], k = x.shape()[1], n = w.shape()[0];
        float* y = args.outputs[0].data<float>();
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double acc = 0;
            for (int64_t p = 0; p < k; ++p)
              acc += double(x.data<float>()[i * k + p]) * w.data<float>()[j * k + p];
            y[i * n + j] = static_cast<float>(acc);
          }
        return absl::OkStatus();
      });
}

// 2. Its tensor expression, and the schedule of a group it anchors (itself, or itself with the
// elementwise chain after it): the chain inlined into the output's loops, the output's rows split
// into blocks spread over threads, its columns vectorized; the dot product computed per output
// row block when a chain follows.
te_ops::TeOpDef matmul_t_te() {
  te_ops::TeOpDef def;
  def.compute = [](const Graph& g, const Node& node, std::span<const te::Tensor> in)
      -> absl::StatusOr<std::vector<te::Tensor>> {
    te::Tensor x = in[0], w = in[1];
    te::IterVar r = te::reduce_axis({0, x.shape()[1]}, "r");
    return std::vector<te::Tensor>{te::compute(
        g.value(node.outputs[0]).type.shape,
        [&](te::Var i, te::Var j) { return te::sum(x(i, r) * w(j, r), {r}); }, node.name)};
  };
  def.schedule = [](const te_ops::AnchorGroup& group) -> absl::StatusOr<te_ops::ScheduledGroup> {
    if (group.outputs.size() != 1) return absl::UnimplementedError("one output only");
    const te::Tensor& out = group.outputs[0];
    te::Schedule s = te::create_schedule({out});
    for (const te::Tensor& t : s.stage_tensors())
      if (t.op_kind() == te::OpKind::compute && !t.same_as(out) && !t.same_as(group.anchor_output))
        s[t].compute_inline();
    te::Stage so = s[out];
    auto [rows, row] = so.split(so.axis(0), 4);
    so.parallel(rows);
    const int64_t lanes = group.target.vector_bytes() / 4;
    if (out.shape()[1] % lanes == 0) {
      auto [cols, col] = so.split(so.axis(1), lanes);
      so.vectorize(col);
    }
    if (!out.same_as(group.anchor_output)) s[group.anchor_output].compute_at(so, row);
    if (!s.status().ok()) return s.status();
    return te_ops::ScheduledGroup{std::move(s), {}};
  };
  return def;
}

// 3. A backend of our own: a name, a pattern, and a build step (here collage's generated code for
// the groups the pattern claims, so its kernels go into artifacts like native ones).
class AddReluBackend : public Backend {
 public:
  AddReluBackend() : Backend("addrelu", DeviceKind::cpu, "1"), codegen_(make_native_backend()) {
    add_pattern("add_relu", is_op("Relu")(is_op("Add")(wildcard(), wildcard())));
  }
  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& group,
                                                const BuildOptions& options) const override {
    return codegen_->build(group, options);
  }

 private:
  std::unique_ptr<Backend> codegen_;
};

Tensor uniform(Shape shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(static_cast<size_t>(TensorType{DType::f32, shape}.numel()));
  for (float& f : v) f = dist(rng);
  return Tensor::from_f32(std::move(shape), v);
}

int fail(const absl::Status& s) {
  std::fprintf(stderr, "error: %s\n", std::string(s.message()).c_str());
  return 1;
}

int fail(collage_status_t* s) {
  std::fprintf(stderr, "error: %s\n", collage_status_message(s));
  collage_status_free(s);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string artifact_path = argc > 1 ? argv[1] : "compile_and_run.collage";
  // 1-3. The compiler: its operators (ours added), the native backend with our TE operator, and
  // our backend after the built-in ones.
  auto ops = std::make_shared<te_ops::TeOpRegistry>(te_ops::default_te_ops());
  ops->add("MatMulT", matmul_t_te());
  CompilerOptions compiler_options;
  compiler_options.native.ops = ops;
  auto compiler = Compiler::create(std::move(compiler_options));
  if (!compiler.ok()) return fail(compiler.status());
  if (absl::Status s = compiler->context().ops().add(matmul_t_op()); !s.ok()) return fail(s);
  if (absl::Status s = compiler->backends().add(std::make_unique<AddReluBackend>()); !s.ok())
    return fail(s);

  // 4. The graph, built on the compiler's context.
  const int64_t batch = 6, features = 24, hidden = 32, classes = 8;
  GraphBuilder b(compiler->context(), "mlp_t");
  ValueId x = b.add_input("x", {DType::f32, {batch, features}});
  auto h = b.add("MatMulT", {x, b.add_constant("w1", uniform({hidden, features}, 1))});
  if (h.ok()) h = b.add("Add", {*h, b.add_constant("b1", uniform({hidden}, 2))});
  if (h.ok()) h = b.add("Relu", {*h});
  if (h.ok()) h = b.add("MatMulT", {*h, b.add_constant("w2", uniform({classes, hidden}, 3))});
  if (h.ok()) h = b.add("Add", {*h, b.add_constant("b2", uniform({classes}, 4))});
  if (!h.ok()) return fail(h.status());
  b.set_value_name(*h, "logits");
  b.add_output(*h);
  auto graph = b.finish();
  if (!graph.ok()) return fail(graph.status());

  // 5. Placement (the op-level search over measured candidates) and the artifact.
  CompileOptions options;
  options.placement.strategy = "op-level";
  auto compiled = compiler->compile_to_file(ModelSource::graph(*graph), options, artifact_path);
  if (!compiled.ok()) return fail(compiled.status());
  for (const PlacedGroup& group : compiled->optimized.placement.groups) {
    std::string nodes;
    for (NodeId n : group.nodes.to_vector())
      nodes += (nodes.empty() ? "" : " + ") + compiled->graph.node(n).op_name();
    std::printf("%-8s %s\n", group.backend.c_str(), nodes.c_str());
  }
  std::printf("wrote %s: %zu kernels, %llu bytes\n", artifact_path.c_str(),
              compiled->summary.kernels,
              static_cast<unsigned long long>(compiled->summary.file_bytes));

  // 6. The runtime runs the artifact; the reference executor says what it must compute.
  collage_module_t* module = nullptr;
  if (collage_status_t* s = collage_module_load_file(artifact_path.c_str(), nullptr, &module))
    return fail(s);
  const Tensor input = uniform({batch, features}, 5);
  Tensor output(DType::f32, {batch, classes});
  int64_t in_shape[] = {batch, features}, out_shape[] = {batch, classes};
  DLTensor in{const_cast<void*>(input.raw()), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, in_shape,
              nullptr, 0};
  DLTensor out{output.raw(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, out_shape, nullptr, 0};
  collage_status_t* run = collage_module_run(module, &in, 1, &out, 1);
  collage_module_release(module);
  if (run) return fail(run);
  auto expected = run_reference(*graph, {input});
  if (!expected.ok()) return fail(expected.status());
  double worst = 0;
  for (int64_t i = 0; i < output.numel(); ++i)
    worst = std::max(worst, std::fabs(double(output.data<float>()[i]) -
                                      (*expected)[0].data<float>()[i]));
  std::printf("artifact vs reference: max |difference| %.2e\n", worst);
  return worst < 1e-4 ? 0 : 1;
}
