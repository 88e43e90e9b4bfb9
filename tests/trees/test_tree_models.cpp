// Trained XGBoost and LightGBM models (tests/trees/make_tree_models.py): every strategy's program,
// run by the reference executor, matches the library's own predictions and margins.
#include <catch2/catch.hpp>

#include "trees/tree_test_util.h"

namespace collage::testing {
namespace {

constexpr double kTolerance = 1e-5;

absl::StatusOr<TreeEnsemble> import(const TreeCase& c) {
  if (c.format == "xgboost") return import_xgboost_json(c.model);
  return import_lightgbm_text(c.model);
}

TEST_CASE("trained models: all strategies match the library", "[trees][models]") {
  int checked = 0;
  for (const TreeCase& c : tree_cases()) {
    if (c.format != "xgboost" && c.format != "lightgbm") continue;
    INFO("case " << c.name);
    auto model = import(c);
    INFO(model.status().ToString());
    REQUIRE(model.ok());
    auto arrays = read_npz(c.arrays);
    REQUIRE(arrays.ok());
    const Tensor x = npz_array(*arrays, "x");
    const Tensor predictions = npz_array(*arrays, "predictions");
    const Tensor margins = npz_array(*arrays, "margins");

    auto direct = evaluate_tree_ensemble(*model, x);
    REQUIRE(direct.ok());
    INFO("evaluator: " << max_abs_error(*direct, predictions));
    CHECK(max_abs_error(*direct, predictions) <= kTolerance);
    for (TreeStrategy s : kAllStrategies) {
      INFO("strategy " << tree_strategy_name(s));
      const Tensor y = run_tree_graph(*model, s, x);
      CHECK(max_abs_error(y, predictions) <= kTolerance);
      const Tensor m = run_tree_graph(*model, s, x, /*margin=*/true);
      CHECK(max_abs_error(m, margins) <= kTolerance);
    }
    ++checked;
  }
  CHECK(checked == 18);
}

}  // namespace
}  // namespace collage::testing
