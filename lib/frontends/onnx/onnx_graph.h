// GraphImporter: turns one ONNX GraphProto into a collage Graph, folding constants on the way.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <onnx/onnx_pb.h>

#include "absl/status/statusor.h"
#include "collage/graph.h"
#include "collage/onnx.h"
#include "frontends/onnx/onnx_tensor.h"

namespace collage::onnx_import {

// One ONNX tensor as the importer knows it: a value of the graph being built, or a constant known
// at import time that is added to the graph only when a node or graph output needs it (so
// constants consumed entirely by import-time folding leave nothing behind).
struct OpConversion;  // frontends/onnx/onnx_node.h

struct Ref {
  ValueId id = kNoValue;  // kNoValue: a constant not yet added to the graph
  Tensor constant;        // non-empty when the value is known at import time
  TensorType type;
  std::string name;       // ONNX name (the graph value name once added)
  bool is_constant() const { return !constant.empty(); }
};

class GraphImporter {
 public:
  // `graph` must outlive the importer; `opset` is the model's default-domain opset. The raw data
  // of initializers is released from `graph` as they are converted, to keep the peak memory of
  // large models near one copy of the weights. `parent`: the importer of the graph whose node
  // `graph` is a body of (If, Loop, Scan), null for the model's graph.
  GraphImporter(const Context& ctx, onnx::GraphProto& graph, int opset,
                const OnnxImportOptions& options, TensorSource source,
                GraphImporter* parent = nullptr);

  // Builds the graph. Errors are not yet suffixed with the model's name.
  absl::StatusOr<Graph> run();
  // Builds a body graph (of a parent's If, Loop or Scan node): its graph inputs are the body's
  // own, of types `formal`, then the parent's values named `captured` that are not constants
  // (constants are copied into the body).
  absl::StatusOr<Graph> run_body(const std::vector<TensorType>& formal,
                                 const std::vector<std::string>& captured);

  // Adds operator `op` applied to `inputs` (null: absent optional input) with attributes `attrs`,
  // or, when every input is a constant (or the operator only reads shapes), evaluates it now and
  // returns constants. `node_name` names the node in the graph and in messages; `output_names`
  // (may be shorter than the outputs) name constants produced by folding. `num_outputs` -1 lets
  // the operator decide.
  absl::StatusOr<std::vector<Ref>> emit(std::string_view op, const std::vector<Ref*>& inputs,
                                        const AttrMap& attrs, const std::string& node_name,
                                        const std::vector<std::string>& output_names,
                                        int num_outputs);

  // A node name that is unique and whose outputs' default names cannot take an ONNX tensor name
  // other than `own_outputs` (the names the outputs will be given).
  std::string pick_node_name(const std::string& base, const std::vector<std::string>& own_outputs,
                             int num_outputs);

  const TensorSource& source() const { return source_; }
  // The Ref of ONNX tensor `name` in this graph or, for a body, the graphs around it; null if
  // unknown.
  absl::StatusOr<Ref*> find(const std::string& name);
  // True when ONNX tensor `name` is read by a node or is a graph output.
  bool is_used(const std::string& name) const { return used_names_.count(name) > 0; }

 private:
  absl::Status collect_names();
  absl::Status add_inputs();
  absl::Status import_node(const onnx::NodeProto& node, int index);
  absl::Status add_outputs();
  // The Ref for ONNX tensor `name`, converting a pending initializer on first use; null if the
  // name is unknown.
  absl::StatusOr<Ref*> lookup(const std::string& name);
  // Adds a pending constant to the graph (once).
  ValueId materialize(Ref& r);
  // ai.onnx.ml TreeEnsemble, TreeEnsembleRegressor/Classifier and Scaler, converted by the tree frontend.
  absl::Status import_ml_node(const onnx::NodeProto& node, const std::string& shown);
  // Converts `node` (operator version `version`) with `conv` and binds its outputs.
  absl::Status import_converted(const onnx::NodeProto& node, const std::string& shown,
                                const OpConversion& conv, int version);
  // Evaluates `op` at import time; nullopt when the result would be too large to keep.
  absl::StatusOr<std::optional<std::vector<Ref>>> fold(const OpDef& op, const OpAttrs& attrs,
                                                       const std::vector<Ref*>& inputs,
                                                       const std::string& node_name,
                                                       const std::vector<std::string>& output_names,
                                                       int num_outputs);
  absl::Status bind_outputs(const onnx::NodeProto& node, const std::string& shown,
                            std::vector<Ref> results);

  // Control flow (onnx_control_flow.cpp): If with a constant condition inlined, Loop and Scan of
  // a known, small number of iterations unrolled, the rest as If/Loop/Scan nodes with bodies.
  absl::Status import_control_flow(const onnx::NodeProto& node, const std::string& shown,
                                   const std::vector<Ref*>& inputs);
  // The nodes of `body` imported into this graph, its local names prefixed with `prefix` and its
  // graph inputs bound to `formal`; its outputs' Refs go to `outputs`.
  absl::Status inline_body(const onnx::GraphProto& body, const std::vector<Ref>& formal,
                           const std::string& prefix, std::vector<Ref>* outputs);
  absl::Status import_if(const onnx::NodeProto& node, const std::string& shown,
                         const std::vector<Ref*>& inputs);
  absl::Status import_loop(const onnx::NodeProto& node, const std::string& shown,
                           const std::vector<Ref*>& inputs);
  absl::Status import_scan(const onnx::NodeProto& node, const std::string& shown,
                           const std::vector<Ref*>& inputs);
  // Scan version 8 (onnx_scan8.cpp): lowered onto import_scan one batch row at a time.
  absl::Status import_scan8(const onnx::NodeProto& node, const std::string& shown,
                            const std::vector<Ref*>& inputs);
  // Appends to `ins` the run-time values of the enclosing graph that a body reads (`captured`;
  // constants are folded into the body instead); returns how many.
  absl::StatusOr<int64_t> append_captured(const std::vector<std::string>& captured,
                                          std::vector<Ref*>& ins);
  // Emits the control-flow node `op` for `node` with ready attributes and binds its outputs.
  absl::Status emit_control_flow(const onnx::NodeProto& node, const std::string& shown,
                                 std::string_view op, const std::vector<Ref*>& ins,
                                 std::shared_ptr<OpAttrs> attrs);
  // Ref of `value` stacked along a new axis `axis` (Unsqueeze each, then Concat), for unrolled
  // loops' scan outputs; `name` names the nodes.
  absl::StatusOr<Ref> stack_refs(std::vector<Ref>& values, int64_t axis, const std::string& name);
  // emit() with ready attributes (a control-flow node's bodies cannot go through an AttrMap).
  absl::StatusOr<std::vector<Ref>> emit_with(std::string_view op, const std::vector<Ref*>& inputs,
                                             std::shared_ptr<OpAttrs> attrs,
                                             const std::string& node_name,
                                             const std::vector<std::string>& output_names,
                                             int num_outputs);
  // `body` as a graph of its own (run_body in a child importer), with `captured` the outer names
  // it reads.
  absl::StatusOr<Graph> import_body(const onnx::GraphProto& body,
                                    const std::vector<TensorType>& formal,
                                    const std::vector<std::string>& captured,
                                    const std::string& label);

  const Context& ctx_;
  GraphImporter* parent_ = nullptr;
  onnx::GraphProto& graph_;
  int opset_;
  const OnnxImportOptions& options_;
  TensorSource source_;
  GraphBuilder builder_;

  std::unordered_map<std::string, Ref> refs_;
  std::unordered_map<std::string, onnx::TensorProto*> initializers_;  // not yet converted
  std::set<std::string> onnx_names_;  // every tensor name of the ONNX graph
  std::set<std::string> used_names_;  // tensors read by a node or listed as graph outputs
  std::set<std::string> node_names_;  // node names given to the builder
  std::set<ValueId> named_values_;    // graph values already given their ONNX name
};

}  // namespace collage::onnx_import
