// Helpers of the tree-ensemble tests.
#include "trees/tree_test_util.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "collage/reference.h"
#include "common/test_util.h"

namespace collage::testing {

const Context& tree_test_context() {
  static const Context c;
  return c;
}

std::vector<TreeCase> tree_cases() {
  const auto dir = test_data_dir() / "trees";
  std::ifstream in(dir / "manifest.txt");
  if (!in)
    FAIL("no tree-model test data in "
         << dir.string()
         << ": run scripts/test, or .venv/bin/python tests/trees/make_tree_models.py "
         << dir.string());
  std::vector<TreeCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream words(line);
    TreeCase c;
    std::string model, arrays;
    words >> c.name >> c.format >> model >> arrays;
    c.model = dir / model;
    c.arrays = dir / arrays;
    cases.push_back(std::move(c));
  }
  REQUIRE(cases.size() >= 30);
  return cases;
}

Tensor npz_array(const NamedTensors& arrays, const std::string& name) {
  for (const auto& [n, t] : arrays)
    if (n == name) return t;
  FAIL("npz has no array '" << name << "'");
  return {};
}

Tensor run_tree_graph(const TreeEnsemble& m, TreeStrategy strategy, const Tensor& x, bool margin) {
  TreeGraphOptions options;
  options.output_margin = margin;
  auto g = build_tree_graph(tree_test_context(), m, strategy, x.shape()[0], options);
  INFO(tree_strategy_name(strategy) << ": " << g.status().ToString());
  REQUIRE(g.ok());
  auto out = run_reference(*g, {x});
  INFO(tree_strategy_name(strategy) << ": " << out.status().ToString());
  REQUIRE(out.ok());
  REQUIRE(out->size() == 1);
  return (*out)[0];
}

double max_abs_error(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return INFINITY;
  double worst = 0.0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.get_as_double(i), y = b.get_as_double(i);
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) != std::isnan(y)) return INFINITY;
      continue;
    }
    worst = std::max(worst, std::fabs(x - y));
  }
  return worst;
}

Tensor first_rows(const Tensor& t, int64_t rows) {
  REQUIRE(t.rank() >= 1);
  REQUIRE(t.shape()[0] >= rows);
  Shape shape = t.shape();
  shape[0] = rows;
  Tensor out(t.dtype(), shape);
  std::memcpy(out.raw(), t.raw(), out.bytes());
  return out;
}

TreeCase find_tree_case(const std::vector<TreeCase>& cases, const std::string& name) {
  for (const TreeCase& c : cases)
    if (c.name == name) return c;
  FAIL("no tree test case " << name);
  return {};
}

PlacementOptions quick_tree_placement(const std::string& cost_db) {
  PlacementOptions o;
  o.backends = {"trees", "eigen"};
  o.fallback = "reference";
  o.cost_db_path = cost_db;
  o.num_threads = 1;
  // Records measured on a busy machine would be measured once more; here every one is trusted.
  o.trusted_spread = 1e9;
  return o;
}

std::filesystem::path fresh_tree_test_dir(const std::string& tag) {
  auto dir = std::filesystem::path(COLLAGE_BINARY_DIR) / "test-tmp" / "trees" / tag;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

void check_status(const absl::Status& s, absl::StatusCode code, const std::string& part) {
  INFO("status: " << s.ToString());
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == code);
  CHECK_THAT(std::string(s.message()), Catch::Contains(part));
}

}  // namespace collage::testing
