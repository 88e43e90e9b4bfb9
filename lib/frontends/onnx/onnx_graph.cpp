// GraphImporter: graph inputs, initializers, node conversion with import-time folding, outputs.
#include "frontends/onnx/onnx_graph.h"

#include <cstdlib>
#include <cstring>

#include "collage/reference.h"
#include "collage/trees.h"
#include "core/shape_limit.h"
#include "core/str_cat.h"
#include "frontends/onnx/onnx_attrs.h"
#include "frontends/onnx/onnx_node.h"
#include "frontends/onnx/onnx_op_history.h"
#include "frontends/trees/onnx_ml_models.h"

namespace collage::onnx_import {
namespace {

// Results of import-time folding larger than this stay nodes (their inputs become constants).

// A dimension the model states: dim_value set and not negative. An explicit 0 is a real (empty)
// size; a missing or negative value is unknown.
bool is_static(const onnx::TensorShapeProto::Dimension& d) {
  return d.has_dim_value() && d.dim_value() >= 0;
}

// "1x3x224x224" with 1 standing for each unknown dimension, for hints.
std::string example_shape(const onnx::TensorShapeProto& s) {
  std::string out;
  for (int i = 0; i < s.dim_size(); ++i) {
    if (i) out += 'x';
    const auto& d = s.dim(i);
    out += std::to_string(is_static(d) ? d.dim_value() : 1);
  }
  return out.empty() ? "scalar" : out;
}

// The type of a graph input: the model's, or the one the caller gives for it.
absl::StatusOr<TensorType> input_type(const onnx::ValueInfoProto& vi,
                                      const OnnxImportOptions& options) {
  const std::string& name = vi.name();
  if (!vi.type().has_tensor_type())
    return absl::UnimplementedError(
        str_cat("input '", name, "' is not a tensor (sequence, map and optional inputs are not "
                                 "supported)"));
  const auto& tt = vi.type().tensor_type();
  auto dtype = dtype_from_onnx(tt.elem_type(), str_cat("input '", name, "'"));
  if (!dtype.ok()) return dtype.status();
  auto given = options.input_shapes.find(name);
  if (given == options.input_shapes.end()) {
    if (!tt.has_shape())
      return absl::InvalidArgumentError(str_cat("input '", name,
                                                "' has no shape in the model; give its shape, "
                                                "e.g. --input-shape ",
                                                name, "=1x3x224x224"));
    Shape shape;
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
      const auto& d = tt.shape().dim(i);
      if (is_static(d)) {
        shape.push_back(d.dim_value());
        continue;
      }
      std::string what = d.has_dim_param() && !d.dim_param().empty()
                             ? str_cat("symbolic dimension '", d.dim_param(), "'")
                             : std::string("an unknown dimension");
      return absl::InvalidArgumentError(str_cat("input '", name, "' has ", what, " (dim ", i,
                                                "); give its shape, e.g. --input-shape ", name,
                                                "=", example_shape(tt.shape())));
    }
    return TensorType{*dtype, shape};
  }
  const Shape& shape = given->second;
  for (int64_t d : shape) {
    if (d < 0)
      return absl::InvalidArgumentError(str_cat("the shape given for input '", name, "' (",
                                                shape_to_string(shape),
                                                ") has a negative dimension"));
  }
  if (tt.has_shape()) {
    const auto& ms = tt.shape();
    bool agrees = ms.dim_size() == static_cast<int>(shape.size());
    for (int i = 0; agrees && i < ms.dim_size(); ++i) {
      const auto& d = ms.dim(i);
      // A stated 0 may be overridden: some exporters write 0 for a dimension they do not know.
      if (is_static(d) && d.dim_value() > 0 && d.dim_value() != shape[i]) agrees = false;
    }
    if (!agrees)
      return absl::InvalidArgumentError(str_cat("the shape given for input '", name, "' (",
                                                shape_to_string(shape),
                                                ") does not fit the model's (",
                                                example_shape(ms), " with 1 for unknown dims)"));
  }
  return TensorType{*dtype, shape};
}

}  // namespace

GraphImporter::GraphImporter(const Context& ctx, onnx::GraphProto& graph, int opset,
                             const OnnxImportOptions& options, TensorSource source,
                             GraphImporter* parent)
    : ctx_(ctx), parent_(parent), graph_(graph), opset_(opset), options_(options),
      source_(std::move(source)), builder_(ctx, graph.name().empty() ? "graph" : graph.name()) {}

absl::StatusOr<Graph> GraphImporter::run() {
  if (absl::Status s = collect_names(); !s.ok()) return s;
  if (absl::Status s = add_inputs(); !s.ok()) return s;
  for (int i = 0; i < graph_.node_size(); ++i) {
    if (absl::Status s = import_node(graph_.node(i), i); !s.ok()) return s;
  }
  if (absl::Status s = add_outputs(); !s.ok()) return s;
  auto g = builder_.finish();
  if (!g.ok()) return absl::InternalError(str_cat("imported graph is inconsistent: ",
                                                  g.status().message()));
  return g;
}

absl::StatusOr<Graph> GraphImporter::run_body(const std::vector<TensorType>& formal,
                                               const std::vector<std::string>& captured) {
  if (absl::Status s = collect_names(); !s.ok()) return s;
  if (graph_.input_size() != static_cast<int>(formal.size()))
    return absl::InvalidArgumentError(str_cat("it has ", graph_.input_size(),
                                              " graph inputs, the operator gives it ",
                                              formal.size()));
  for (int k = 0; k < graph_.input_size(); ++k) {
    const std::string& name = graph_.input(k).name();
    if (refs_.count(name))
      return absl::InvalidArgumentError(str_cat("input '", name, "' is listed twice"));
    const ValueId id = builder_.add_input(name, formal[k]);
    named_values_.insert(id);
    refs_[name] = Ref{id, Tensor(), formal[k], name};
  }
  for (const std::string& name : captured) {
    auto outer = parent_->find(name);
    if (!outer.ok()) return outer.status();
    if (!*outer)
      return absl::InvalidArgumentError(
          str_cat("it reads '", name, "', which is defined neither in it nor before its node"));
    Ref r = **outer;
    if (!r.is_constant()) {
      r.id = builder_.add_input(name, r.type);
      named_values_.insert(r.id);
    } else {
      r.id = kNoValue;
    }
    r.name = name;
    refs_[name] = std::move(r);
  }
  for (int i = 0; i < graph_.node_size(); ++i) {
    if (absl::Status s = import_node(graph_.node(i), i); !s.ok()) return s;
  }
  if (absl::Status s = add_outputs(); !s.ok()) return s;
  auto g = builder_.finish();
  if (!g.ok())
    return absl::InternalError(str_cat("imported body is inconsistent: ", g.status().message()));
  return g;
}

absl::StatusOr<Ref*> GraphImporter::find(const std::string& name) { return lookup(name); }

absl::Status GraphImporter::collect_names() {
  if (graph_.sparse_initializer_size() > 0)
    return absl::UnimplementedError(str_cat("sparse initializer '",
                                            graph_.sparse_initializer(0).values().name(),
                                            "' is not supported"));
  for (onnx::TensorProto& t : *graph_.mutable_initializer()) {
    if (t.name().empty()) return absl::InvalidArgumentError("an initializer has no name");
    if (!initializers_.emplace(t.name(), &t).second)
      return absl::InvalidArgumentError(str_cat("initializer '", t.name(), "' is defined twice"));
    onnx_names_.insert(t.name());
  }
  for (const auto& vi : graph_.input()) onnx_names_.insert(vi.name());
  for (const auto& n : graph_.node()) {
    for (const auto& in : n.input())
      if (!in.empty()) used_names_.insert(in);
    for (const auto& out : n.output())
      if (!out.empty()) onnx_names_.insert(out);
  }
  if (graph_.output_size() == 0) return absl::InvalidArgumentError("the model has no outputs");
  for (const auto& vi : graph_.output()) {
    used_names_.insert(vi.name());
    onnx_names_.insert(vi.name());
  }
  return absl::OkStatus();
}

absl::Status GraphImporter::add_inputs() {
  std::set<std::string> inputs;
  for (const auto& vi : graph_.input()) {
    const std::string& name = vi.name();
    if (initializers_.count(name)) {
      // Old exporters list every weight as an input too; those are constants.
      if (options_.input_shapes.count(name))
        return absl::InvalidArgumentError(str_cat("a shape is given for input '", name,
                                                  "', but it is an initializer (a constant)"));
      continue;
    }
    if (!inputs.insert(name).second)
      return absl::InvalidArgumentError(str_cat("input '", name, "' is listed twice"));
    auto type = input_type(vi, options_);
    if (!type.ok()) return type.status();
    // Converters read input types before any inference does (Size folds the element count).
    if (!shape_within_element_limit(type->shape))
      return absl::InvalidArgumentError(
          str_cat("input '", name, "' (", type_to_string(*type), ") ", kBeyondElementLimit));
    ValueId id = builder_.add_input(name, *type);
    named_values_.insert(id);
    refs_[name] = Ref{id, Tensor(), *type, name};
  }
  for (const auto& [name, shape] : options_.input_shapes) {
    if (inputs.count(name) || initializers_.count(name)) continue;
    std::string list;
    for (const auto& n : inputs) list += (list.empty() ? "" : ", ") + n;
    return absl::InvalidArgumentError(str_cat("a shape is given for '", name,
                                              "', which is not an input of the model (inputs: ",
                                              list, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Ref*> GraphImporter::lookup(const std::string& name) {
  if (auto it = refs_.find(name); it != refs_.end()) return &it->second;
  auto init = initializers_.find(name);
  if (init == initializers_.end()) return nullptr;
  auto t = tensor_from_proto(*init->second, source_);
  if (!t.ok()) return t.status();
  // The tensor now holds its own copy; drop the protobuf's.
  std::string().swap(*init->second->mutable_raw_data());
  initializers_.erase(init);
  Ref& r = refs_[name];
  r = Ref{kNoValue, *t, t->type(), name};
  return &r;
}

ValueId GraphImporter::materialize(Ref& r) {
  if (r.id == kNoValue) {
    r.id = builder_.add_constant(r.name, r.constant);
    named_values_.insert(r.id);
  }
  return r.id;
}

std::string GraphImporter::pick_node_name(const std::string& base,
                                          const std::vector<std::string>& own_outputs,
                                          int num_outputs) {
  // The builder names a node's outputs "<node>" or "<node>:<i>"; none of those may take an ONNX
  // tensor name that another value will need later.
  auto takes_other = [&](const std::string& auto_name, int slot) {
    if (!onnx_names_.count(auto_name)) return false;
    return !(slot < static_cast<int>(own_outputs.size()) && own_outputs[slot] == auto_name);
  };
  for (int k = 0;; ++k) {
    std::string cand = k == 0 ? base : str_cat(base, "_", k);
    if (node_names_.count(cand) || takes_other(cand, 0)) continue;
    bool clash = false;
    for (int i = 0; i < std::max(num_outputs, 1) && !clash; ++i)
      clash = takes_other(str_cat(cand, ":", i), i);
    if (clash) continue;
    node_names_.insert(cand);
    return cand;
  }
}

absl::Status GraphImporter::import_node(const onnx::NodeProto& node, int index) {
  std::string shown = node.name();
  for (int i = 0; shown.empty() && i < node.output_size(); ++i) shown = node.output(i);
  if (shown.empty()) shown = str_cat(node.op_type(), "_", index);
  const std::string& domain = node.domain();
  if (!domain.empty() && domain != "ai.onnx") {
    if (domain == "ai.onnx.ml") {
      if (node.op_type() == "TreeEnsembleRegressor" ||
          node.op_type() == "TreeEnsembleClassifier" || node.op_type() == "TreeEnsemble" ||
          node.op_type() == "Scaler" || is_onnx_ml_model_op(node.op_type()))
        return import_ml_node(node, shown);
      // The others collage imports have a single version.
      if (const OpConversion* ml = find_ml_conversion(node.op_type()))
        return import_converted(node, shown, *ml, 1);
      return absl::UnimplementedError(str_cat("unsupported operator 'ai.onnx.ml.", node.op_type(),
                                              "' (node '", shown, "'): of the ai.onnx.ml domain "
                                              "collage imports TreeEnsemble, TreeEnsembleRegressor, "
                                              "TreeEnsembleClassifier, LinearClassifier, "
                                              "LinearRegressor, SVMClassifier, SVMRegressor, "
                                              "Normalizer, ZipMap, Scaler, Binarizer, "
                                              "ArrayFeatureExtractor and LabelEncoder"));
    }
    return absl::UnimplementedError(str_cat("unsupported operator '", domain, ".", node.op_type(),
                                            "' (node '", shown, "', domain '", domain,
                                            "'): collage imports only the default ONNX domain"));
  }
  const std::string unsupported =
      str_cat("unsupported operator '", node.op_type(), "' (node '", shown, "', opset ", opset_, ")");
  auto version = op_version("", node.op_type(), opset_);
  if (!version.ok())
    return absl::UnimplementedError(str_cat(unsupported, ": ", version.status().message()));
  if (node.op_type() == "If" || node.op_type() == "Loop" || node.op_type() == "Scan") {
    std::vector<Ref*> inputs;
    for (int i = 0; i < node.input_size(); ++i) {
      if (node.input(i).empty()) {
        inputs.push_back(nullptr);
        continue;
      }
      auto r = lookup(node.input(i));
      if (!r.ok()) return r.status();
      if (!*r)
        return absl::InvalidArgumentError(
            str_cat(node.op_type(), " '", shown, "': input ", i, " '", node.input(i),
                    "' is not a graph input, an initializer or the output of an earlier node"));
      inputs.push_back(*r);
    }
    // Scan 8 had a batch axis and sequence lengths that later versions dropped.
    if (node.op_type() == "Scan" && *version < 9) return import_scan8(node, shown, inputs);
    return import_control_flow(node, shown, inputs);
  }
  const OpConversion* conv = find_conversion(node.op_type());
  if (!conv || (conv->needs_ir_op && !ctx_.ops().find(node.op_type())))
    return absl::UnimplementedError(unsupported);
  if (*version < conv->first_version)
    return absl::UnimplementedError(
        str_cat("unsupported operator '", node.op_type(), "' version ", *version, " (node '", shown,
                "', opset ", opset_, "): collage imports versions ", conv->first_version,
                " and newer"));
  return import_converted(node, shown, *conv, *version);
}

absl::Status GraphImporter::import_converted(const onnx::NodeProto& node, const std::string& shown,
                                             const OpConversion& conv, int version) {
  std::vector<Ref*> inputs;
  for (int i = 0; i < node.input_size(); ++i) {
    const std::string& name = node.input(i);
    if (name.empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    auto r = lookup(name);
    if (!r.ok()) return r.status();
    if (!*r)
      return absl::InvalidArgumentError(
          str_cat(node.op_type(), " '", shown, "': input ", i, " '", name,
                  "' is not a graph input, an initializer or the output of an earlier node"));
    inputs.push_back(*r);
  }
  auto attrs = convert_attributes(node, source_, str_cat(node.op_type(), " '", shown, "'"));
  if (!attrs.ok()) return attrs.status();
  NodeContext nc(*this, node, shown, opset_, version, std::move(inputs), std::move(*attrs));
  auto results = conv.convert(nc);
  if (!results.ok()) return results.status();
  return bind_outputs(node, shown, std::move(*results));
}

absl::Status GraphImporter::import_ml_node(const onnx::NodeProto& node, const std::string& shown) {
  if (node.input_size() != 1)
    return absl::InvalidArgumentError(
        str_cat(node.op_type(), " '", shown, "': expected 1 input, got ", node.input_size()));
  auto r = lookup(node.input(0));
  if (!r.ok()) return r.status();
  if (!*r)
    return absl::InvalidArgumentError(str_cat(node.op_type(), " '", shown, "': input '",
                                              node.input(0), "' is not defined before the node"));
  ValueId x = materialize(**r);
  std::vector<ValueId> outs;
  absl::Status s =
      node.op_type() == "Scaler" ? convert_onnx_scaler(node, builder_, x, outs)
      : is_onnx_ml_model_op(node.op_type())
          ? convert_onnx_ml_model(node, builder_, x, outs, options_.zipmap)
          : convert_onnx_tree_ensemble(node, builder_, x, outs, {}, options_.tree_strategy);
  if (!s.ok()) return s;
  std::vector<Ref> results;
  for (ValueId v : outs) results.push_back(Ref{v, {}, builder_.value(v).type, ""});
  return bind_outputs(node, shown, std::move(results));
}

absl::Status GraphImporter::bind_outputs(const onnx::NodeProto& node, const std::string& shown,
                                         std::vector<Ref> results) {
  for (int i = 0; i < node.output_size(); ++i) {
    const std::string& name = node.output(i);
    if (name.empty()) continue;
    if (refs_.count(name) || initializers_.count(name))
      return absl::InvalidArgumentError(str_cat(node.op_type(), " '", shown, "': output '", name,
                                                "' is already defined; tensor names must be "
                                                "unique"));
    if (i >= static_cast<int>(results.size())) {
      if (is_used(name))
        return absl::UnimplementedError(str_cat(node.op_type(), " '", shown, "': output ", i,
                                                " ('", name, "') is not supported"));
      continue;
    }
    Ref r = std::move(results[i]);
    if (r.id != kNoValue && named_values_.insert(r.id).second)
      builder_.set_value_name(r.id, name);
    r.name = name;
    refs_[name] = std::move(r);
  }
  return absl::OkStatus();
}

absl::Status GraphImporter::add_outputs() {
  for (const auto& vi : graph_.output()) {
    auto r = lookup(vi.name());
    if (!r.ok()) return r.status();
    if (!*r)
      return absl::InvalidArgumentError(str_cat("graph output '", vi.name(),
                                                "' is not produced by any node, input or "
                                                "initializer"));
    builder_.add_output(materialize(**r));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Ref>> GraphImporter::emit(std::string_view op,
                                                     const std::vector<Ref*>& inputs,
                                                     const AttrMap& attrs,
                                                     const std::string& node_name,
                                                     const std::vector<std::string>& output_names,
                                                     int num_outputs) {
  const OpDef* def = ctx_.ops().find(op);
  if (!def)
    return absl::UnimplementedError(str_cat("operator '", op, "', needed for node '", node_name,
                                            "', is not available"));
  std::shared_ptr<OpAttrs> a(def->make_attrs());
  if (absl::Status s = fill_attrs(*a, attrs); !s.ok())
    return absl::Status(s.code(), str_cat(op, " '", node_name, "': ", s.message()));
  return emit_with(op, inputs, std::move(a), node_name, output_names, num_outputs);
}

absl::StatusOr<std::vector<Ref>> GraphImporter::emit_with(
    std::string_view op, const std::vector<Ref*>& inputs, std::shared_ptr<OpAttrs> a,
    const std::string& node_name, const std::vector<std::string>& output_names,
    int num_outputs) {
  const OpDef* def = ctx_.ops().find(op);
  if (!def)
    return absl::UnimplementedError(str_cat("operator '", op, "', needed for node '", node_name,
                                            "', is not available"));
  // The builder checks the input count too, but folding never reaches it.
  int n = static_cast<int>(inputs.size());
  while (n > def->min_inputs && !inputs[n - 1]) --n;
  if (n < def->min_inputs || (def->max_inputs >= 0 && n > def->max_inputs))
    return absl::InvalidArgumentError(
        str_cat(op, " '", node_name, "': ", n, " inputs given, expected ", def->min_inputs,
                def->max_inputs < 0 ? " or more"
                : def->max_inputs == def->min_inputs ? ""
                                                     : str_cat("..", def->max_inputs)));
  for (int i = 0; i < def->min_inputs; ++i) {
    if (!inputs[i])
      return absl::InvalidArgumentError(
          str_cat(op, " '", node_name, "': required input ", i, " is missing"));
  }
  std::vector<Ref*> ins(inputs.begin(), inputs.begin() + n);

  bool all_constant = true, all_static = true;
  for (const Ref* r : ins) {
    all_constant = all_constant && (!r || r->is_constant());
    all_static = all_static && (!r || !r->type.is_dynamic());
  }
  // A shape-only operator folds when the shapes it reads are known now.
  if (all_constant || (def->shape_only && all_static)) {
    auto folded = fold(*def, *a, ins, node_name, output_names, num_outputs);
    if (!folded.ok()) return folded.status();
    if (folded->has_value()) return std::move(**folded);
  }
  std::vector<ValueId> ids;
  for (Ref* r : ins) ids.push_back(r ? materialize(*r) : kNoValue);
  auto outs = builder_.add_node(op, std::move(ids), std::move(a), node_name, num_outputs);
  if (!outs.ok()) return outs.status();
  std::vector<Ref> results;
  for (ValueId id : *outs)
    results.push_back(Ref{id, Tensor(), builder_.value(id).type, builder_.value(id).name});
  return results;
}

absl::StatusOr<std::optional<std::vector<Ref>>> GraphImporter::fold(
    const OpDef& op, const OpAttrs& attrs, const std::vector<Ref*>& inputs,
    const std::string& node_name, const std::vector<std::string>& output_names, int num_outputs) {
  // A shape-only operator never reads its input data (OpDef contract), so a run-time input is
  // passed as a placeholder of the right type over a token buffer.
  std::shared_ptr<void> token(std::calloc(1, 64), std::free);
  std::vector<Tensor> values;
  std::vector<const TensorType*> types;
  std::vector<const Tensor*> constants;
  for (const Ref* r : inputs) {
    if (!r) {
      values.emplace_back();
    } else if (r->is_constant()) {
      values.push_back(r->constant);
    } else {
      values.push_back(Tensor::wrap(r->type.dtype, r->type.shape, token.get(), token));
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    types.push_back(inputs[i] ? &inputs[i]->type : nullptr);
    constants.push_back(inputs[i] && inputs[i]->is_constant() ? &values[i] : nullptr);
  }
  InferContext ictx(op.name, node_name, attrs, std::move(types), std::move(constants),
                    num_outputs);
  if (absl::Status s = op.infer(ictx); !s.ok()) return s;
  // Counted with overflow checks: a shape computed from the model's constants can be huge
  // (ConstantOfShape of [2^63 - 1, 768]), and no tensor holds more bytes than size_t counts.
  size_t bytes = 0;
  for (const TensorType& t : ictx.outputs()) {
    if (t.is_dynamic()) continue;
    const std::optional<int64_t> n = checked_shape_numel(t.shape);
    size_t b = 0;
    if (!n || __builtin_mul_overflow(static_cast<size_t>(*n), dtype_size(t.dtype), &b) ||
        __builtin_add_overflow(bytes, b, &bytes))
      return absl::InvalidArgumentError(str_cat(op.name, " '", node_name, "': an output of shape ",
                                                shape_to_string(t.shape),
                                                " has more bytes than memory can address"));
  }
  if (bytes > options_.max_folded_bytes) return std::optional<std::vector<Ref>>();

  auto outs = evaluate_op(op, attrs, values, node_name, num_outputs);
  if (!outs.ok())
    return absl::Status(outs.status().code(), str_cat(op.name, " '", node_name,
                                                      "' (evaluated at import time): ",
                                                      outs.status().message()));
  std::vector<Ref> results;
  for (size_t i = 0; i < outs->size(); ++i) {
    std::string name = i < output_names.size() && !output_names[i].empty()
                           ? output_names[i]
                           : str_cat(node_name, ":", i);
    Tensor t = std::move((*outs)[i]);
    TensorType type = t.type();
    results.push_back(Ref{kNoValue, std::move(t), std::move(type), std::move(name)});
  }
  return std::optional<std::vector<Ref>>(std::move(results));
}

}  // namespace collage::onnx_import
