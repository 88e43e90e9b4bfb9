// NodeContext: what an operator conversion sees of one ONNX node, and the conversion table.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "absl/status/statusor.h"
#include "collage/attrs.h"
#include "frontends/onnx/onnx_graph.h"

namespace collage::onnx_import {

class NodeContext {
 public:
  // `inputs` has one entry per ONNX input (null for an absent optional one); `name` is how the
  // node is shown (its ONNX name, or its first output's when it has none).
  NodeContext(GraphImporter& importer, const onnx::NodeProto& node, std::string name, int opset,
              int version, std::vector<Ref*> inputs, AttrMap attrs);

  const std::string& op_type() const { return node_.op_type(); }
  // The node as the model has it (for attributes AttrMap flattens, such as lists of strings).
  const onnx::NodeProto& proto() const { return node_; }
  const std::string& name() const { return name_; }
  int opset() const { return opset_; }
  // The version of the operator the model's opset means (its ONNX schema's since_version).
  int version() const { return version_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  // Input i, or null when absent or not given at all.
  Ref* input(int i) const { return i < num_inputs() ? inputs_[i] : nullptr; }
  const std::vector<Ref*>& inputs() const { return inputs_; }
  // Declared outputs, trailing unnamed ones dropped.
  int num_outputs() const;
  // True when output i is named and read by a node or the graph.
  bool output_used(int i) const;
  AttrMap& attrs() { return attrs_; }

  // "<Op> '<name>': message" as InvalidArgument (bad model) or Unimplemented (valid ONNX that
  // collage does not handle).
  absl::Status error(std::string_view message) const;
  absl::Status unsupported(std::string_view message) const;

  // Fails unless the number of given inputs is in [min, max].
  absl::Status check_inputs(int min, int max) const;
  // The value of input i, which must be a compile-time constant; `role` ("shape") names it in
  // the error.
  absl::StatusOr<Tensor> constant_input(int i, std::string_view role) const;
  // Input i when it is given and computed at run time (the IR operator then takes it as an
  // attribute input, OpDef::attr_inputs), else null.
  Ref* runtime_input(int i) const;
  // When input i is given, stores its constant value as integer-list attribute `attr`.
  absl::Status input_to_ints(int i, std::string_view role, const std::string& attr);
  // When input i is given, stores its single constant value as float attribute `attr`.
  absl::Status input_to_float(int i, std::string_view role, const std::string& attr);
  // Removes attribute `attr` and returns it (nullopt when absent).
  std::optional<AttrValue> take_attr(const std::string& attr);
  // Fails unless no output from index `first` on is used; `what` says what they are.
  absl::Status refuse_outputs_from(int first, std::string_view what) const;

  // Emits `op` on `inputs` with attrs(); the node takes the ONNX node's name and outputs.
  absl::StatusOr<std::vector<Ref>> emit(std::string_view op, std::vector<Ref*> inputs,
                                        int num_outputs = -1);
  // Emits a helper node "<name>/<suffix>" with its own attributes (multi-node conversions).
  absl::StatusOr<std::vector<Ref>> emit_helper(std::string_view op, std::vector<Ref*> inputs,
                                               const AttrMap& attrs, std::string_view suffix);

 private:
  GraphImporter& importer_;
  const onnx::NodeProto& node_;
  std::string name_;
  int opset_;
  int version_;
  std::vector<Ref*> inputs_;
  AttrMap attrs_;
};

// Converts one node: returns a Ref per ONNX output (at least those that are used).
using ConvertFn = absl::StatusOr<std::vector<Ref>> (*)(NodeContext&);

struct OpConversion {
  ConvertFn convert;
  // The oldest version of the operator the conversion handles; it handles every newer one up to
  // the newest opset the version table knows (a conversion refuses what a version adds that it
  // cannot express, naming the attribute or input).
  int first_version;
  bool needs_ir_op;     // false for ONNX operators with no IR counterpart (Constant)
};

// The conversion of ONNX operator `op_type`, or null when collage does not import it.
const OpConversion* find_conversion(std::string_view op_type);
// The parts of the table in onnx_ops_elementwise.cpp, onnx_ops_indexing.cpp and
// onnx_ops_misc.cpp (find_conversion looks there too).
const OpConversion* find_elementwise_conversion(std::string_view op_type);
const OpConversion* find_indexing_conversion(std::string_view op_type);
const OpConversion* find_misc_conversion(std::string_view op_type);
// The ai.onnx.ml operators converted to default-domain ones (onnx_ops_ml.cpp).
const OpConversion* find_ml_conversion(std::string_view op_type);
// The string operators, Equal (which takes strings too) and TopK (onnx_ops_text.cpp), and
// LabelEncoder of ai.onnx.ml.
const OpConversion* find_text_conversion(std::string_view op_type);
const OpConversion* find_ml_text_conversion(std::string_view op_type);

}  // namespace collage::onnx_import
