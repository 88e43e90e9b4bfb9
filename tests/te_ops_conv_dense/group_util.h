// Test harness for anchor groups: builds a one-anchor graph (plus an elementwise chain) run by the
// reference executor, and the same group in TE through the registry, scheduled and JIT-compiled.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/graph.h"
#include "collage/te_ops.h"
#include "tune/template.h"

namespace collage::testing {

// The elementwise chain after the anchor.
enum class Chain { none, relu, add_relu };

struct GroupCase {
  std::string op;
  std::shared_ptr<const OpAttrs> attrs;
  std::vector<Tensor> inputs;  // anchor inputs (an empty Tensor for an absent optional one)
  std::vector<bool> constant;  // per anchor input: a graph constant (else a graph input)
  Chain chain = Chain::none;
};

// A built case: the graph, the reference outputs and the TE group.
struct BuiltGroup {
  std::shared_ptr<Graph> graph;
  std::vector<Tensor> expected;  // reference outputs
  std::vector<Tensor> values;    // one per group input
  te_ops::AnchorGroup group;
  std::shared_ptr<const te_ops::TeOpRegistry> registry;  // conv and dense for the group's target
  const te_ops::TeOpDef* def = nullptr;
};

// The conv and dense operators for code compiled for `target`.
std::shared_ptr<const te_ops::TeOpRegistry> conv_dense_registry(
    const codegen::TargetSpec& target = codegen::TargetSpec::host());

// The x86-64 targets the kernels are checked on: the host, and each of "avx2" (x86-64-v3, 16
// vector registers) and "avx512" (x86-64-v4, 32) whose code this machine runs (an AVX-512 machine
// runs both); named in test output by TargetSpec::to_string.
std::vector<codegen::TargetSpec> runnable_targets();

// Builds the case for `target`; FAILs the test (REQUIRE) when anything is refused.
BuiltGroup build_group(const GroupCase& c, int num_threads = 2,
                       const codegen::TargetSpec& target = codegen::TargetSpec::host());

// Compiles `scheduled`, runs it as `tasks` tasks on this thread and returns the scaled error
// (max |a-b| / max |b|) against the reference.
double run_and_compare(const BuiltGroup& b, const te_ops::ScheduledGroup& scheduled,
                       int tasks = 3);

}  // namespace collage::testing
