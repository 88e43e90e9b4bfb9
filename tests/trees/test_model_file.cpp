// import_model_file: ONNX, XGBoost JSON and LightGBM text told apart by content, tree models
// built for the batch given as an input shape, and the errors of each step.
#include <onnx/onnx_pb.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "trees/tree_test_util.h"

namespace collage::testing {
namespace {

using absl::StatusCode;

// x (f32 [2,3]) -> Relu -> y
void write_relu_onnx(const std::filesystem::path& p) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  *g->mutable_name() = std::string("relu");
  const std::string x = "x", y = "y", relu = "Relu";
  onnx::NodeProto* n = g->add_node();
  *n->mutable_op_type() = relu;
  n->add_input(x);
  n->add_output(y);
  for (const std::string* name : {&x, &y}) {
    onnx::ValueInfoProto* v = name == &x ? g->add_input() : g->add_output();
    *v->mutable_name() = *name;
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(2);
    t->mutable_shape()->add_dim()->set_dim_value(3);
  }
  std::ofstream out(p, std::ios::binary);
  REQUIRE(m.SerializeToOstream(&out));
}

TEST_CASE("model formats are detected by content", "[trees][model-file]") {
  const auto dir = fresh_tree_test_dir("detect");
  const auto cases = tree_cases();
  for (const TreeCase& c : cases) {
    auto f = detect_model_format(c.model);
    INFO(c.name << ": " << f.status().ToString());
    REQUIRE(f.ok());
    CHECK(model_format_name(*f) == (c.format == "onnx-graph" ? "onnx" : c.format));
  }
  // The extension does not matter.
  std::filesystem::copy_file(cases[0].model, dir / "model.bin");
  CHECK(*detect_model_format(dir / "model.bin") == ModelFormat::xgboost);
  write_file(dir / "other.json", "{\"hello\": 1}");
  check_status(detect_model_format(dir / "other.json").status(), StatusCode::kInvalidArgument,
               "starts like JSON but has no \"learner\"");
  check_status(detect_model_format(dir / "absent.json").status(), StatusCode::kNotFound,
               "absent.json");
  CHECK(*parse_model_format("lightgbm") == ModelFormat::lightgbm);
  check_status(parse_model_format("pmml").status(), StatusCode::kInvalidArgument,
               "unknown model format 'pmml'");
}

TEST_CASE("import_model_file builds tree graphs and imports ONNX", "[trees][model-file]") {
  const Context& ctx = tree_test_context();
  const auto dir = fresh_tree_test_dir("import");
  for (const TreeCase& c : tree_cases()) {
    if (c.format == "onnx" || c.format == "onnx-graph") continue;
    INFO(c.name);
    auto g = import_model_file(ctx, c.model);
    INFO(g.status().ToString());
    REQUIRE(g.ok());
    REQUIRE(g->inputs().size() == 1);
    CHECK(g->value(g->inputs()[0]).name == "input");
    CHECK(g->value(g->inputs()[0]).type.shape[0] == 1);
    CHECK(g->value(g->outputs()[0]).name == "predictions");

    ModelImportOptions options;
    const int64_t features = g->value(g->inputs()[0]).type.shape[1];
    options.onnx.input_shapes["input"] = {7, features};
    options.trees.strategy = TreeStrategy::tree_traversal;
    auto g7 = import_model_file(ctx, c.model, options);
    REQUIRE(g7.ok());
    CHECK(g7->value(g7->inputs()[0]).type.shape == Shape{7, features});

    options.onnx.input_shapes["input"] = {7, features + 1};
    check_status(import_model_file(ctx, c.model, options).status(), StatusCode::kInvalidArgument,
                 "expected batchx");
    options.onnx.input_shapes.clear();
    options.onnx.input_shapes["x"] = {7, features};
    check_status(import_model_file(ctx, c.model, options).status(), StatusCode::kInvalidArgument,
                 "has one input, 'input'");
  }
  write_relu_onnx(dir / "relu.onnx");
  auto relu = import_model_file(ctx, dir / "relu.onnx");
  INFO(relu.status().ToString());
  REQUIRE(relu.ok());
  CHECK(relu->nodes().size() == 1);
  // A forced format reads the file as that format.
  ModelImportOptions as_lightgbm;
  as_lightgbm.format = ModelFormat::lightgbm;
  check_status(import_model_file(ctx, dir / "relu.onnx", as_lightgbm).status(),
               StatusCode::kInvalidArgument, "does not start with a 'tree' line");
}

}  // namespace
}  // namespace collage::testing
