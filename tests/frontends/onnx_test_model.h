// Test helper: builds small ONNX models with the protobuf API, and checks import errors.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "absl/status/statusor.h"
#include "collage/graph.h"
#include "collage/onnx.h"

namespace collage::testing {

// A model under construction. Inputs, outputs, nodes and initializers are appended in order.
class OnnxModel {
 public:
  explicit OnnxModel(int opset = 17);

  onnx::ModelProto& proto() { return model_; }
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }

  // An input with static dims.
  OnnxModel& input(const std::string& name, int32_t elem_type, const std::vector<int64_t>& dims);
  // An input whose dims are written as text: "3" is a value, "batch" a symbolic dim, "?" unknown.
  OnnxModel& input_dims(const std::string& name, int32_t elem_type,
                        const std::vector<std::string>& dims);
  // An output without type (as exporters often write them).
  OnnxModel& output(const std::string& name);
  // An initializer holding `t` as raw_data.
  onnx::TensorProto& initializer(const std::string& name, const Tensor& t);
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "");

  std::string bytes() const;
  // Writes the model as `dir/file` (creating dir) and returns the path.
  std::filesystem::path save(const std::filesystem::path& dir, const std::string& file) const;
  // Imports the serialised model from memory.
  absl::StatusOr<Graph> import(const Context& ctx, const OnnxImportOptions& options = {},
                               const std::filesystem::path& base_dir = {}) const;

 private:
  onnx::ModelProto model_;
};

// A TensorProto holding `t` as raw_data (a str tensor as string_data).
onnx::TensorProto tensor_proto(const std::string& name, const Tensor& t);

// Node attributes.
void attr_int(onnx::NodeProto& n, const std::string& name, int64_t v);
void attr_float(onnx::NodeProto& n, const std::string& name, float v);
void attr_string(onnx::NodeProto& n, const std::string& name, const std::string& v);
void attr_ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v);
void attr_floats(onnx::NodeProto& n, const std::string& name, const std::vector<float>& v);
void attr_tensor(onnx::NodeProto& n, const std::string& name, const Tensor& t);
void attr_strings(onnx::NodeProto& n, const std::string& name, const std::vector<std::string>& v);

// An empty folder for one test's files, under the build tree.
std::filesystem::path fresh_test_dir(const std::string& tag);

// Checks that `s` failed with `code` and a message containing `part`.
void check_error(const absl::Status& s, absl::StatusCode code, const std::string& part);

}  // namespace collage::testing
