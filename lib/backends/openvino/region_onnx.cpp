// Graph -> ONNX ModelProto (opset 20) for the openvino backend: attributes through the
// operators' own attribute visitors, per-operator moves of attributes back to constant inputs.
#include "backends/openvino/region_onnx.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "collage/attrs.h"
#include "core/str_cat.h"
#include "frontends/onnx/onnx_tensor.h"

namespace collage::openvino_backend {
namespace {

// Operators whose IR form is their ONNX form, up to the attributes the writer moves to inputs.
const std::set<std::string_view>& onnx_ops() {
  static const std::set<std::string_view> ops = {
      "Conv", "ConvTranspose", "MaxPool", "AveragePool", "GlobalAveragePool",
      "BatchNormalization", "InstanceNormalization", "LayerNormalization", "Softmax",
      "LogSoftmax", "MatMul", "Gemm", "Add", "Sub", "Mul", "Div", "Pow", "Relu", "Sigmoid",
      "Tanh", "Erf", "Exp", "Log", "Sqrt", "Reciprocal", "Neg", "Abs", "LeakyRelu", "PRelu",
      "HardSigmoid", "HardSwish", "Gelu", "Clip", "Where", "Equal", "Less", "Greater", "Cast",
      "Identity", "Dropout", "ReduceMean", "ReduceSum", "ReduceMax", "Concat", "Split", "Slice",
      "Gather", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Pad", "Shape",
      "ConstantOfShape", "Expand", "Tile", "Range", "Resize"};
  return ops;
}

// The fields of an attribute struct, in its own order.
class FieldCollector : public AttrVisitor {
 public:
  std::vector<std::pair<std::string, AttrValue>> fields;
  void field(const char* name, int64_t& v) override { fields.emplace_back(name, v); }
  void field(const char* name, float& v) override { fields.emplace_back(name, v); }
  void field(const char* name, std::string& v) override { fields.emplace_back(name, v); }
  void field(const char* name, std::vector<int64_t>& v) override { fields.emplace_back(name, v); }
  void field(const char* name, std::vector<float>& v) override { fields.emplace_back(name, v); }
  void field(const char* name, Tensor& v) override { fields.emplace_back(name, v); }
};

void fill_tensor(const Tensor& t, const std::string& name, onnx::TensorProto* p) {
  p->set_name(name);
  p->set_data_type(onnx_import::onnx_type_of(t.dtype()));
  for (int64_t d : t.shape()) p->add_dims(d);
  if (t.bytes()) p->set_raw_data(t.raw(), t.bytes());
}

void fill_type(const TensorType& type, onnx::ValueInfoProto* info) {
  auto* tt = info->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx_import::onnx_type_of(type.dtype));
  auto* shape = tt->mutable_shape();
  for (int64_t d : type.shape) shape->add_dim()->set_dim_value(d);
}

class Writer {
 public:
  explicit Writer(const Graph& g) : g_(g) {
    model_.set_ir_version(9);
    model_.set_producer_name("collage");
    auto* opset = model_.add_opset_import();
    opset->set_domain("");
    opset->set_version(kRegionOpset);
    graph_ = model_.mutable_graph();
    graph_->set_name(g.name().empty() ? "region" : g.name());
  }

  absl::StatusOr<std::string> write() {
    for (ValueId v : g_.inputs()) fill_type(g_.value(v).type, add_info(graph_->add_input(), v));
    for (const Node& n : g_.nodes())
      if (absl::Status s = node(n); !s.ok()) return s;
    std::set<std::string> named;
    for (ValueId v : g_.outputs()) {
      std::string name = value(v);
      // ONNX names each graph output once, and never after an input: such outputs get a copy.
      const bool is_input = std::find(g_.inputs().begin(), g_.inputs().end(), v) !=
                            g_.inputs().end();
      if (is_input || !named.insert(name).second) {
        onnx::NodeProto* copy = graph_->add_node();
        copy->set_op_type("Identity");
        copy->add_input(name);
        name = str_cat("out", named.size());
        copy->add_output(name);
        named.insert(name);
      }
      onnx::ValueInfoProto* info = graph_->add_output();
      info->set_name(name);
      fill_type(g_.value(v).type, info);
    }
    std::string bytes;
    if (!model_.SerializeToString(&bytes))
      return absl::InternalError("openvino: the region's ONNX model does not serialize");
    return bytes;
  }

 private:
  onnx::ValueInfoProto* add_info(onnx::ValueInfoProto* info, ValueId v) {
    info->set_name(value(v));
    return info;
  }

  // The ONNX name of value v; a constant becomes an initializer the first time it is named.
  std::string value(ValueId v) {
    std::string name = str_cat("v", v);
    if (const Tensor* t = g_.constant_of(v); t && initialized_.insert(v).second)
      fill_tensor(*t, name, graph_->add_initializer());
    return name;
  }

  // A new initializer holding `t`.
  std::string constant(const Tensor& t) {
    std::string name = str_cat("c", extra_++);
    fill_tensor(t, name, graph_->add_initializer());
    return name;
  }
  std::string ints(const std::vector<int64_t>& v) {
    return constant(Tensor::from_i64({static_cast<int64_t>(v.size())}, v));
  }
  std::string floats(const std::vector<float>& v) {
    return constant(Tensor::from_f32({static_cast<int64_t>(v.size())}, v));
  }
  // A scalar of dtype `dtype` with value `v`.
  std::string scalar(float v, DType dtype) { return constant(Tensor::scalar_f32(v).cast(dtype)); }

  absl::Status node(const Node& n) {
    const std::string& op = n.op_name();
    if (!has_onnx_form(op))
      return absl::UnimplementedError(
          str_cat("openvino: ", op, " '", n.name, "' has no ONNX form"));
    // visit() is not const; the collector only reads (copies) the fields.
    FieldCollector c;
    const_cast<OpAttrs&>(*n.attrs).visit(c);
    std::map<std::string, AttrValue> attrs(c.fields.begin(), c.fields.end());
    onnx::NodeProto* p = graph_->add_node();
    p->set_op_type(op);
    p->set_name(n.name);
    for (ValueId in : n.inputs) p->add_input(in == kNoValue ? std::string() : value(in));
    for (ValueId out : n.outputs) p->add_output(value(out));
    auto take = [&](const char* name) {
      AttrValue v = attrs.at(name);
      attrs.erase(name);
      return v;
    };
    auto take_ints = [&](const char* name) { return std::get<std::vector<int64_t>>(take(name)); };
    auto add_input = [&](const std::string& name) { p->add_input(name); };
    const DType in_type = n.inputs.empty() || n.inputs[0] == kNoValue
                              ? DType::f32
                              : g_.value(n.inputs[0]).type.dtype;

    if (op == "Cast") {
      const auto to = parse_dtype(std::get<std::string>(take("to")));
      if (!to) return absl::InvalidArgumentError(str_cat("openvino: Cast '", n.name, "': bad 'to'"));
      attrs["to"] = static_cast<int64_t>(onnx_import::onnx_type_of(*to));
    } else if (op == "Clip") {
      const float lo = std::get<float>(take("min")), hi = std::get<float>(take("max"));
      const float inf = std::numeric_limits<float>::infinity();
      if (lo != -inf || hi != inf) add_input(lo == -inf ? std::string() : scalar(lo, in_type));
      if (hi != inf) add_input(scalar(hi, in_type));
    } else if (op == "Dropout") {
      add_input(scalar(std::get<float>(take("ratio")), DType::f32));
    } else if (op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax" ||
               op == "Squeeze" || op == "Unsqueeze") {
      if (auto axes = take_ints("axes"); !axes.empty()) add_input(ints(axes));
    } else if (op == "Split") {
      if (auto split = take_ints("split"); !split.empty())
        add_input(ints(split));
      else
        attrs["num_outputs"] = static_cast<int64_t>(n.outputs.size());
    } else if (op == "Slice") {
      auto starts = take_ints("starts"), ends = take_ints("ends"), axes = take_ints("axes"),
           steps = take_ints("steps");
      add_input(ints(starts));
      add_input(ints(ends));
      if (axes.empty() && !steps.empty())
        for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
      if (!axes.empty()) add_input(ints(axes));
      if (!steps.empty()) add_input(ints(steps));
    } else if (op == "Reshape" || op == "Expand") {
      add_input(ints(take_ints("shape")));
    } else if (op == "Tile") {
      add_input(ints(take_ints("repeats")));
    } else if (op == "Pad") {
      add_input(ints(take_ints("pads")));
      const float value = std::get<float>(take("value"));
      if (std::get<std::string>(attrs.at("mode")) == "constant" && value != 0.f)
        add_input(scalar(value, in_type));
    } else if (op == "ConstantOfShape") {
      add_input(ints(take_ints("shape")));
      Tensor value = std::get<Tensor>(take("value"));
      const DType out_type = g_.value(n.outputs[0]).type.dtype;
      attrs["value"] = value.empty() ? Tensor::scalar_f32(0.f).cast(out_type).reshaped({1})
                                     : value.reshaped({1});
    } else if (op == "Resize") {
      auto roi = std::get<std::vector<float>>(take("roi"));
      auto scales = std::get<std::vector<float>>(take("scales"));
      auto sizes = take_ints("sizes");
      attrs.erase("keep_aspect_ratio_policy");  // "stretch": the rules refuse the others
      add_input(roi.empty() ? std::string() : floats(roi));
      add_input(scales.empty() ? std::string() : floats(scales));
      if (!sizes.empty()) add_input(ints(sizes));
    } else if (op == "Shape") {
      if (std::get<int64_t>(attrs.at("end")) == std::numeric_limits<int64_t>::max())
        attrs.erase("end");
    }
    for (auto& [name, v] : attrs) add_attribute(p, name, v);
    return absl::OkStatus();
  }

  // Empty lists are left out: in the IR they stand for ONNX's default.
  void add_attribute(onnx::NodeProto* p, const std::string& name, const AttrValue& v) {
    using onnx::AttributeProto;
    if (const auto* l = std::get_if<std::vector<int64_t>>(&v); l && l->empty()) return;
    if (const auto* l = std::get_if<std::vector<float>>(&v); l && l->empty()) return;
    if (const auto* t = std::get_if<Tensor>(&v); t && t->empty()) return;
    AttributeProto* a = p->add_attribute();
    a->set_name(name);
    if (const auto* i = std::get_if<int64_t>(&v)) {
      a->set_type(AttributeProto::INT);
      a->set_i(*i);
    } else if (const auto* f = std::get_if<float>(&v)) {
      a->set_type(AttributeProto::FLOAT);
      a->set_f(*f);
    } else if (const auto* s = std::get_if<std::string>(&v)) {
      a->set_type(AttributeProto::STRING);
      a->set_s(*s);
    } else if (const auto* is = std::get_if<std::vector<int64_t>>(&v)) {
      a->set_type(AttributeProto::INTS);
      for (int64_t x : *is) a->add_ints(x);
    } else if (const auto* fs = std::get_if<std::vector<float>>(&v)) {
      a->set_type(AttributeProto::FLOATS);
      for (float x : *fs) a->add_floats(x);
    } else if (const auto* t = std::get_if<Tensor>(&v)) {
      a->set_type(AttributeProto::TENSOR);
      fill_tensor(*t, name, a->mutable_t());
    }
  }

  const Graph& g_;
  onnx::ModelProto model_;
  onnx::GraphProto* graph_ = nullptr;
  std::set<ValueId> initialized_;
  int extra_ = 0;
};

}  // namespace

bool has_onnx_form(std::string_view op) {
  return onnx_ops().count(op) > 0;
}

absl::StatusOr<std::string> region_to_onnx(const Graph& group) {
  return Writer(group).write();
}

}  // namespace collage::openvino_backend
