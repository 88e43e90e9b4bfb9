// XGBoost JSON and LightGBM text import: small hand-written models read as intended, and every
// malformed file gives an error naming the file, tree and field, never a crash.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "trees/tree_test_util.h"

namespace collage::testing {
namespace {

using absl::StatusCode;

// base_score, objective, tree fields and learner params are substituted per test.
std::string xgboost_json(const std::string& tree_fields = "",
                         const std::string& objective = "binary:logistic",
                         const std::string& base_score = "\"[2.5E-1]\"",
                         const std::string& num_class = "0") {
  const std::string fields = tree_fields.empty()
                                 ? R"("left_children": [1, -1, -1], "right_children": [2, -1, -1],
               "split_indices": [1, 0, 0], "split_conditions": [0.5, -1.0, 2.0],
               "default_left": [1, 0, 0], "split_type": [0, 0, 0])"
                                 : tree_fields;
  return R"({"learner": {
    "learner_model_param": {"base_score": )" +
         base_score + R"(, "num_class": ")" + num_class +
         R"(", "num_feature": "2", "num_target": "1"},
    "objective": {"name": ")" +
         objective + R"("},
    "gradient_booster": {"name": "gbtree", "model": {
      "tree_info": [0],
      "trees": [{"tree_param": {"num_nodes": "3", "size_leaf_vector": "1"}, )" +
         fields + R"(}]
    }}}, "version": [3, 2, 0]})";
}

TEST_CASE("XGBoost JSON import", "[trees][import]") {
  auto m = parse_xgboost_json(xgboost_json(), "m.json");
  INFO(m.status().ToString());
  REQUIRE(m.ok());
  CHECK(m->source == "xgboost");
  CHECK(m->num_features == 2);
  CHECK(m->num_outputs == 1);
  CHECK(m->post_transform == TreePostTransform::sigmoid);
  // base_score 0.25 as a margin: logit(0.25).
  CHECK(m->base_score[0] == Approx(std::log(0.25 / 0.75)));
  REQUIRE(m->trees.size() == 1);
  const TreeNode& root = m->trees[0].nodes[0];
  CHECK(root.feature == 1);
  CHECK(root.threshold == 0.5);
  CHECK(root.compare == TreeCompare::less_f32);
  CHECK(root.default_left);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = Tensor::from_f32({3, 2}, std::vector<float>{9, 0.5f, 9, 0.25f, 9, nan});
  auto margin = m->base_score[0];
  auto y = evaluate_tree_ensemble(*m, x);
  REQUIRE(y.ok());
  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  CHECK(y->data<float>()[0] == Approx(sigmoid(margin + 2.0)));  // 0.5 < 0.5 fails: right
  CHECK(y->data<float>()[1] == Approx(sigmoid(margin - 1.0)));  // left
  CHECK(y->data<float>()[2] == Approx(sigmoid(margin - 1.0)));  // NaN: default left

  SECTION("older files: scalar base_score, boolean default_left, no split_type") {
    auto old = parse_xgboost_json(
        xgboost_json(R"("left_children": [1, -1, -1], "right_children": [2, -1, -1],
                        "split_indices": [0, 0, 0], "split_conditions": [0.5, 1, 2],
                        "default_left": [false, false, false])",
                     "reg:squarederror", "\"5E-1\""),
        "old.json");
    INFO(old.status().ToString());
    REQUIRE(old.ok());
    CHECK(old->base_score[0] == 0.5);
    CHECK_FALSE(old->trees[0].nodes[0].default_left);
  }
  SECTION("multi-class base scores are margins already") {
    auto mc = parse_xgboost_json(xgboost_json("", "multi:softprob", "\"[1E-1,2E-1,3E-1]\"", "3"),
                                 "mc.json");
    INFO(mc.status().ToString());
    REQUIRE(mc.ok());
    CHECK(mc->num_outputs == 3);
    CHECK(mc->base_score == std::vector<double>{0.1, 0.2, 0.3});
    CHECK(mc->post_transform == TreePostTransform::softmax);
  }
}

TEST_CASE("XGBoost JSON errors", "[trees][import][errors]") {
  const std::string valid_fields =
      R"("left_children": [1, -1, -1], "right_children": [2, -1, -1], "split_indices": [1, 0, 0],
         "split_conditions": [0.5, -1.0, 2.0], "default_left": [1, 0, 0], "split_type": [0, 0, 0])";
  auto fields = [&](const std::string& from, const std::string& to) {
    std::string f = valid_fields;
    const size_t at = f.find(from);
    REQUIRE(at != std::string::npos);
    return f.replace(at, from.size(), to);
  };
  auto err = [](const std::string& json) { return parse_xgboost_json(json, "bad.json").status(); };
  check_status(err("{\"learner\": "), StatusCode::kInvalidArgument,
               "xgboost model 'bad.json': cannot parse the JSON");
  check_status(err("{\"version\": [1]}"), StatusCode::kInvalidArgument,
               "document has no field 'learner'");
  check_status(err(xgboost_json(fields("[0.5, -1.0, 2.0]", "[0.5, -1.0]"))),
               StatusCode::kInvalidArgument,
               "tree 0 field 'split_conditions' has 2 entries, expected 3");
  check_status(err(xgboost_json(fields("[0.5, -1.0, 2.0]", "[\"a\", -1.0, 2.0]"))),
               StatusCode::kInvalidArgument, "field 'split_conditions' entry 0 is not a number");
  check_status(err(xgboost_json(fields("\"left_children\": [1,", "\"left_children\": [9,"))),
               StatusCode::kInvalidArgument,
               "tree 0 node 0 field 'left_children' is 9, expected a node index below 3");
  check_status(err(xgboost_json(fields("\"right_children\": [2,", "\"right_children\": [1,"))),
               StatusCode::kInvalidArgument,
               "node 0 field 'right_children' is 1, a node that "
               "already has a parent");
  check_status(err(xgboost_json(fields("\"right_children\": [2,", "\"right_children\": [0,"))),
               StatusCode::kInvalidArgument, "already has a parent");
  check_status(err(xgboost_json(fields("\"split_indices\": [1,", "\"split_indices\": [2,"))),
               StatusCode::kInvalidArgument,
               "tree 0 node 0 field 'split_indices' is 2, expected a feature index below 2");
  check_status(err(xgboost_json(fields("\"split_type\": [0,", "\"split_type\": [1,"))),
               StatusCode::kUnimplemented, "tree 0 node 0 is a categorical split");
  check_status(err(xgboost_json("", "rank:pairwise")), StatusCode::kUnimplemented,
               "objective 'rank:pairwise' is not supported");
  check_status(err(xgboost_json("", "binary:logistic", "\"1.5\"")), StatusCode::kInvalidArgument,
               "field 'base_score' is 1.5, expected a probability in (0, 1)");
  check_status(err(xgboost_json("", "binary:logistic", "\"x\"")), StatusCode::kInvalidArgument,
               "field 'base_score' is not a number or list of numbers: x");
  check_status(err(xgboost_json("", "binary:logistic", "\"[0.5]\"", "bad")),
               StatusCode::kInvalidArgument, "field 'num_class' is not an integer");
  check_status(err(xgboost_json(fields("\"left_children\"", "\"left_kids\""))),
               StatusCode::kInvalidArgument, "tree 0 has no field 'left_children'");
  check_status(import_xgboost_json("/nonexistent/m.json").status(), StatusCode::kNotFound,
               "m.json");

  // Every prefix of a valid model fails cleanly.
  const std::string full = xgboost_json();
  for (size_t n = 0; n < full.size(); n += 7)
    CHECK_FALSE(parse_xgboost_json(full.substr(0, n), "t").ok());
}

const char* kLightGbm = R"(tree
version=v4
num_class=1
num_tree_per_iteration=1
label_index=0
max_feature_idx=2
objective=binary sigmoid:2
feature_names=a b c
feature_infos=[-1:1] [-1:1] [-1:1]
tree_sizes=1 1

Tree=0
num_leaves=3
num_cat=0
split_feature=0 2
split_gain=1 1
threshold=0.10000000000000001 -1.0000000180025095e-35
decision_type=2 8
left_child=-1 -2
right_child=1 -3
leaf_value=1 2 3
leaf_weight=1 1 1
leaf_count=1 1 1
internal_value=0 0
internal_weight=0 0
internal_count=3 2
is_linear=0
shrinkage=1


Tree=1
num_leaves=1
num_cat=0
split_feature=
split_gain=
threshold=
decision_type=
left_child=
right_child=
leaf_value=0.5
leaf_weight=
leaf_count=
internal_value=
internal_weight=
internal_count=
is_linear=0
shrinkage=1


end of trees

feature_importances:
a=1

parameters:
[boosting: gbdt]
end of parameters
)";

std::string lightgbm_with(const std::string& from, const std::string& to) {
  std::string s = kLightGbm;
  const size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

TEST_CASE("LightGBM text import", "[trees][import]") {
  auto m = parse_lightgbm_text(kLightGbm, "model.txt");
  INFO(m.status().ToString());
  REQUIRE(m.ok());
  CHECK(m->source == "lightgbm");
  CHECK(m->num_features == 3);
  CHECK(m->post_transform == TreePostTransform::sigmoid);
  CHECK(m->sigmoid_scale == 2.0);
  REQUIRE(m->trees.size() == 2);
  const Tree& t = m->trees[0];
  REQUIRE(t.nodes.size() == 5);
  CHECK(t.nodes[0].threshold == 0.1);
  CHECK(t.nodes[0].compare == TreeCompare::less_equal_f64);
  CHECK(t.nodes[0].missing == TreeMissing::nan_is_zero);
  CHECK(t.nodes[0].default_left);
  CHECK(t.nodes[1].missing == TreeMissing::nan);
  CHECK(t.nodes[2].value == 1.0);  // leaf 0
  CHECK(m->trees[1].nodes.size() == 1);
  CHECK(m->trees[1].nodes[0].value == 0.5);
  // 0.1f lies above the double 0.1: right; then x2 = NaN goes right (default right).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = Tensor::from_f32({2, 3}, std::vector<float>{0.1f, 0, nan, 0.09f, 0, 0});
  auto margin = run_tree_graph(*m, TreeStrategy::tree_traversal, x, /*margin=*/true);
  CHECK(margin.data<float>()[0] == 3.5f);
  CHECK(margin.data<float>()[1] == 1.5f);

  SECTION("multiclass and averaged forests") {
    auto mc = parse_lightgbm_text(
        lightgbm_with("num_tree_per_iteration=1", "num_tree_per_iteration=2\naverage_output"),
        "rf.txt");
    INFO(mc.status().ToString());
    REQUIRE(mc.ok());
    CHECK(mc->num_outputs == 2);
    CHECK(mc->trees[1].output == 1);
    CHECK(mc->tree_scale == 1.0);
  }
}

TEST_CASE("LightGBM text errors", "[trees][import][errors]") {
  auto err = [](const std::string& text) { return parse_lightgbm_text(text, "bad.txt").status(); };
  check_status(err("hello"), StatusCode::kInvalidArgument,
               "lightgbm model 'bad.txt': does not start with a 'tree' line");
  check_status(err(lightgbm_with("max_feature_idx=2\n", "")), StatusCode::kInvalidArgument,
               "the header has no 'max_feature_idx' line");
  check_status(err(lightgbm_with("decision_type=2 8", "decision_type=3 8")),
               StatusCode::kUnimplemented, "tree 0 node 0 is a categorical split");
  check_status(err(lightgbm_with("threshold=0.10000000000000001 ", "threshold=")),
               StatusCode::kInvalidArgument, "tree 0 field 'threshold' has 1 entries, expected 2");
  check_status(err(lightgbm_with("threshold=0.10000000000000001", "threshold=abc")),
               StatusCode::kInvalidArgument,
               "tree 0 field 'threshold' entry 0 is not a number: 'abc'");
  check_status(err(lightgbm_with("right_child=1 -3", "right_child=1 -9")),
               StatusCode::kInvalidArgument, "tree 0 field 'right_child' entry 1 is -9");
  check_status(err(lightgbm_with("right_child=1 -3", "right_child=0 -3")),
               StatusCode::kInvalidArgument, "tree 0 field 'right_child' entry 0 is 0");
  check_status(err(lightgbm_with("left_child=-1 -2", "left_child=1 -2")),
               StatusCode::kInvalidArgument, "already the root or another node's child");
  check_status(err(lightgbm_with("split_feature=0 2", "split_feature=0 3")),
               StatusCode::kInvalidArgument,
               "tree 0 field 'split_feature' entry 1 is 3, expected a feature index below 3");
  check_status(err(lightgbm_with("Tree=1", "Tree=7")), StatusCode::kInvalidArgument,
               "'Tree=7', expected Tree=1");
  check_status(err(lightgbm_with("num_leaves=3", "num_leaves=x")), StatusCode::kInvalidArgument,
               "tree 0 field 'num_leaves' is 'x'");
  check_status(err(lightgbm_with("objective=binary sigmoid:2", "objective=lambdax")),
               StatusCode::kUnimplemented, "objective 'lambdax' is not supported");
  check_status(err(lightgbm_with("is_linear=0", "is_linear=1")), StatusCode::kUnimplemented,
               "tree 0 is a linear tree");
  const std::string header_only =
      std::string(kLightGbm).substr(0, std::string(kLightGbm).find("Tree=0"));
  check_status(err(header_only), StatusCode::kInvalidArgument, "has no trees");
  check_status(import_lightgbm_text("/nonexistent/model.txt").status(), StatusCode::kNotFound,
               "model.txt");

  // No prefix of a valid model crashes; the ones that stop inside a tree fail.
  const std::string full = kLightGbm;
  for (size_t n = 0; n < full.size(); n += 5) (void)parse_lightgbm_text(full.substr(0, n), "t");
}

}  // namespace
}  // namespace collage::testing
