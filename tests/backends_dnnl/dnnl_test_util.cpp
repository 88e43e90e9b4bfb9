// dnnl test helpers: graph construction with random data and the whole-graph conformance check.
#include "dnnl_test_util.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "collage/backends/dnnl.h"
#include "collage/reference.h"
#include "collage/subgraph.h"
#include "common/test_util.h"
#include "core/str_cat.h"
#include "dnnl_module.h"

namespace collage::testing {

TestGraph::TestGraph()
    : ctx_(std::make_unique<Context>()), b_(std::make_unique<GraphBuilder>(*ctx_, "test")) {}

ValueId TestGraph::input(Shape shape, DType dtype, float lo, float hi) {
  ranges_.push_back({lo, hi});
  return b_->add_input(str_cat("x", ranges_.size()), {dtype, std::move(shape)});
}

ValueId TestGraph::constant(Shape shape, float lo, float hi) {
  return constant(random_f32(shape, 1000 + seed_++, lo, hi));
}

ValueId TestGraph::constant(Tensor t) {
  return b_->add_constant("c", std::move(t));
}

ValueId TestGraph::op(std::string_view name, std::vector<ValueId> inputs,
                      std::shared_ptr<const OpAttrs> attrs) {
  auto v = b_->add(name, std::move(inputs), std::move(attrs));
  INFO(v.status().ToString());
  REQUIRE(v.ok());
  return *v;
}

const Shape& TestGraph::shape(ValueId v) const {
  return b_->value(v).type.shape;
}

Graph TestGraph::finish(ValueId out) {
  b_->add_output(out);
  auto g = b_->finish();
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return *std::move(g);
}

std::vector<Tensor> TestGraph::feed(const Graph& g) const {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const TensorType& t = g.value(g.inputs()[i]).type;
    Tensor x = random_f32(t.shape, 7 + i, ranges_[i].lo, ranges_[i].hi);
    if (t.dtype != DType::f32) {
      for (int64_t k = 0; k < x.numel(); ++k) x.data<float>()[k] = std::round(x.data<float>()[k]);
      x = x.cast(t.dtype);
    }
    inputs.push_back(x);
  }
  return inputs;
}

namespace {

// Values below 1% of the output's largest magnitude are compared against that floor instead of
// themselves: oneDNN sums in another order than the reference (blocked layouts, vector lanes),
// which moves every result by a few ulps of the magnitudes summed, so results that cancel to
// nearly zero carry a large error relative to themselves and none relative to the computation.
double error_floor(const Tensor& expected) {
  double scale = 0;
  if (expected.dtype() != DType::f32) return 1e-3;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    const double v = std::fabs(expected.data<float>()[i]);
    if (std::isfinite(v)) scale = std::max(scale, v);
  }
  return std::max(1e-6, 0.01 * scale);
}

NodeSet all_nodes(const Graph& g) {
  NodeSet s(g.nodes().size());
  for (size_t n = 0; n < g.nodes().size(); ++n) s.insert(static_cast<NodeId>(n));
  return s;
}

const Candidate* whole_candidate(const std::vector<Candidate>& cands, const NodeSet& all) {
  for (const Candidate& c : cands)
    if (c.nodes == all) return &c;
  return nullptr;
}

rt_dnnl::ProbeResult probe_record(const KernelRecord& record, const Graph& group) {
  KernelDesc d(record, group);
  return rt_dnnl::probe_kernel(d.desc());
}

}  // namespace

DnnlCheck check_dnnl_graph(const TestGraph& t, const Graph& g, double tolerance) {
  auto backend = make_dnnl_backend();
  GraphReachability reach(g);
  const NodeSet all = all_nodes(g);
  const auto cands = backend->candidates(g, reach);
  const Candidate* whole = whole_candidate(cands, all);
  INFO(print_graph(g));
  REQUIRE(whole != nullptr);
  DnnlCheck result;
  result.origin = whole->origin;
  auto sub = extract_subgraph(t.context(), g, all);
  REQUIRE(sub.ok());
  auto kernel = backend->build(sub->graph, {});
  INFO(kernel.status().ToString());
  REQUIRE(kernel.ok());

  const std::vector<Tensor> inputs = t.feed(g);
  auto expected = run_reference(g, inputs);
  REQUIRE(expected.ok());
  std::vector<void*> args;
  for (ValueId v : sub->parent_inputs) {
    const auto& in = g.inputs();
    const size_t i = std::find(in.begin(), in.end(), v) - in.begin();
    REQUIRE(i < in.size());
    args.push_back(const_cast<void*>(inputs[i].raw()));
  }
  REQUIRE(sub->parent_outputs == g.outputs());
  Tensor out(g.value(g.outputs()[0]).type.dtype, g.value(g.outputs()[0]).type.shape);
  args.push_back(out.raw());
  absl::Status run = (*kernel)->run_task(args.data(), 0);
  INFO(run.ToString());
  REQUIRE(run.ok());
  const double floor = error_floor((*expected)[0]);
  result.error = max_relative_error(out, (*expected)[0], floor);
  INFO("origin " << whole->origin << ", floor " << floor << ", "
                 << describe_mismatch(out, (*expected)[0], floor));
  CHECK(result.error <= tolerance);

  // The record is fully packed: loading it reorders no constant.
  const rt_dnnl::ProbeResult probe = probe_record((*kernel)->record(), sub->graph);
  INFO(probe.error);
  REQUIRE(probe.error.empty());
  CHECK(probe.packed.empty());
  result.implementations = probe.implementations;
  return result;
}

DnnlRejection try_dnnl_graph(const TestGraph& t, const Graph& g) {
  auto backend = make_dnnl_backend();
  GraphReachability reach(g);
  const NodeSet all = all_nodes(g);
  DnnlRejection r;
  r.offered = whole_candidate(backend->candidates(g, reach), all) != nullptr;
  auto sub = extract_subgraph(t.context(), g, all);
  REQUIRE(sub.ok());
  auto kernel = backend->build(sub->graph, {});
  r.build = kernel.status();
  return r;
}

}  // namespace collage::testing
