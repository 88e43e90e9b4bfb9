// Helpers of the TE operator conformance tests: a graph built as one native kernel (at several
// thread counts, so that every parallel split and vector tail is exercised), run and compared
// with the reference executor.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/backend.h"
#include "collage/graph.h"

namespace collage::testing {

// Random inputs for every graph input: floats uniform in [lo, hi), integers in [0, 5), bools.
std::vector<Tensor> random_graph_inputs(const Graph& g, uint64_t seed, float lo = -1.f,
                                        float hi = 1.f);

// Builds `g` as one group of `backend` (with `threads` threads) and runs every task; returns the
// outputs (NaN-filled beforehand, so unwritten elements show).
absl::StatusOr<std::vector<Tensor>> run_native_group(const Backend& backend, const Graph& g,
                                                     const std::vector<Tensor>& inputs,
                                                     int threads);

struct NativeCheck {
  // Float outputs: relative error per element (floor 1e-3) when `elementwise`, else relative to
  // the output's largest magnitude (max_scaled_error). Integers and bools must be identical.
  double tolerance = 1e-5;
  float lo = -1.f, hi = 1.f;
  uint64_t seed = 3;
  bool elementwise = true;
};

// Checks that the native backend runs all of `g` as one kernel with 1, 3 and 8 threads and agrees
// with run_reference.
void check_native(const Graph& g, const NativeCheck& check = {});

// A graph of one operator node over inputs of the given types (constants where `constants` has
// a tensor for the position), named "op". Fails the test when the builder refuses it.
Graph single_op_graph(const Context& ctx, const std::string& op, const std::vector<TensorType>& inputs,
                      std::shared_ptr<const OpAttrs> attrs = nullptr,
                      const std::vector<Tensor>& constants = {}, int num_outputs = -1);

// The process-wide native backend of the tests.
const Backend& native_backend();

}  // namespace collage::testing
