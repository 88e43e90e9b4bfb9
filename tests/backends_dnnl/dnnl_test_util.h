// Helpers of the dnnl backend tests: small graphs built node by node, and the conformance check
// that runs a whole graph as one dnnl group and compares it with the reference executor.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/common/module_kernel.h"
#include "collage/backend.h"
#include "collage/graph.h"
#include "collage/runtime_module.h"

namespace collage::testing {

// A graph under construction with random inputs and constants (fixed seeds).
class TestGraph {
 public:
  TestGraph();
  // Inputs are fed uniform random values in [lo, hi) (integers: rounded).
  ValueId input(Shape shape, DType dtype = DType::f32, float lo = -1.f, float hi = 1.f);
  ValueId constant(Shape shape, float lo = -1.f, float hi = 1.f);
  ValueId constant(Tensor t);
  // Adds a node; fails the test when the graph builder refuses it.
  ValueId op(std::string_view name, std::vector<ValueId> inputs,
             std::shared_ptr<const OpAttrs> attrs = nullptr);
  const Shape& shape(ValueId v) const;
  // Finishes the graph with `out` as its only output.
  Graph finish(ValueId out);
  const Context& context() const { return *ctx_; }
  // One random tensor per graph input, in order.
  std::vector<Tensor> feed(const Graph& g) const;

 private:
  struct Range {
    float lo, hi;
  };
  std::vector<Range> ranges_;
  std::unique_ptr<Context> ctx_;
  std::unique_ptr<GraphBuilder> b_;
  uint64_t seed_ = 1;
};

struct DnnlCheck {
  double error = 0;                          // max_relative_error against run_reference
  std::vector<std::string> implementations;  // oneDNN implementation of each step
  std::string origin;                        // the pattern that claimed the whole graph
};

// Checks that the dnnl backend offers every node of `g` as one candidate, builds it, runs it on
// random inputs and compares with run_reference (REQUIREs inside). Also checks that the record's
// constants need no further packing.
DnnlCheck check_dnnl_graph(const TestGraph& t, const Graph& g, double tolerance = 1e-4);

// The status of building every node of `g` as one dnnl group, and whether the backend's
// patterns offer that group as a candidate.
struct DnnlRejection {
  bool offered = false;
  absl::Status build;
};
DnnlRejection try_dnnl_graph(const TestGraph& t, const Graph& g);

}  // namespace collage::testing
