// Helpers of the tree-ensemble tests: generated data, running graphs, comparing predictions.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "collage/graph.h"
#include "collage/npz.h"
#include "collage/placement.h"
#include "collage/trees.h"

namespace collage::testing {

const Context& tree_test_context();

// One line of the generated manifest: a model file and its inputs and reference outputs.
struct TreeCase {
  std::string name, format;
  std::filesystem::path model, arrays;
};
// The cases written by tests/trees/make_tree_models.py; FAILs the test (with how to make them)
// when the data is missing.
std::vector<TreeCase> tree_cases();
// The case called `name`; FAILs when there is none.
TreeCase find_tree_case(const std::vector<TreeCase>& cases, const std::string& name);
// Placement options a unit test can afford to measure for real: the trees and eigen backends (no
// generated code to compile per candidate), the reference backend running what they do not
// claim, one thread, and every cost-database record trusted.
PlacementOptions quick_tree_placement(const std::string& cost_db);
// The array `name` of an npz archive; FAILs when absent.
Tensor npz_array(const NamedTensors& arrays, const std::string& name);

// A copy of the first `rows` rows (first dimension) of `t`; FAILs when it has fewer.
Tensor first_rows(const Tensor& t, int64_t rows);

// Builds the model's graph with `strategy` for x's batch and runs it with the reference executor.
Tensor run_tree_graph(const TreeEnsemble& m, TreeStrategy strategy, const Tensor& x,
                      bool margin = false);

// Largest |a - b| (NaN only matching NaN); +inf on a shape or dtype mismatch.
double max_abs_error(const Tensor& a, const Tensor& b);

// An empty folder for one test's files, under the build tree.
std::filesystem::path fresh_tree_test_dir(const std::string& tag);
void write_file(const std::filesystem::path& p, const std::string& text);

// Checks that `s` failed with `code` and a message containing `part`.
void check_status(const absl::Status& s, absl::StatusCode code, const std::string& part);

constexpr TreeStrategy kAllStrategies[] = {TreeStrategy::gemm, TreeStrategy::tree_traversal,
                                           TreeStrategy::perfect_tree_traversal};

}  // namespace collage::testing
