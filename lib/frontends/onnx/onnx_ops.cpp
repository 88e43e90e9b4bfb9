// Per-operator ONNX conversions: shape-like inputs become IR attributes, opset differences are
// resolved, unsupported variants are refused. Operators not listed here are not imported.
#include <algorithm>
#include <string_view>

#include "core/str_cat.h"
#include "frontends/onnx/onnx_node.h"

namespace collage::onnx_import {
namespace {

using Result = absl::StatusOr<std::vector<Ref>>;

// Operators whose ONNX form is the IR form: inputs and attributes carry over.
Result generic(NodeContext& n) {
  return n.emit(n.op_type(), n.inputs(), n.num_outputs() > 0 ? n.num_outputs() : -1);
}

// Generic, after moving the constant input `index` into integer-list attribute `attr`; one
// computed at run time stays an input (the IR operator's attribute input).
template <int kIndex, const char* kRole, const char* kAttr>
Result input_as_ints(NodeContext& n) {
  if (absl::Status s = n.check_inputs(kIndex + 1, kIndex + 1); !s.ok()) return s;
  if (Ref* r = n.runtime_input(kIndex)) return n.emit(n.op_type(), {n.input(0), r});
  if (absl::Status s = n.input_to_ints(kIndex, kRole, kAttr); !s.ok()) return s;
  return n.emit(n.op_type(), {n.input(0)});
}
constexpr char kShape[] = "shape", kRepeats[] = "repeats";

Result constant(NodeContext& n) {
  if (absl::Status s = n.check_inputs(0, 0); !s.ok()) return s;
  if (n.attrs().size() != 1)
    return n.error("needs exactly one of value, value_float(s), value_int(s)");
  const auto& [key, v] = *n.attrs().begin();
  Tensor t;
  if (key == "value" && std::holds_alternative<Tensor>(v)) {
    t = std::get<Tensor>(v);
  } else if (key == "value_float" && std::holds_alternative<float>(v)) {
    t = Tensor::scalar_f32(std::get<float>(v));
  } else if (key == "value_int" && std::holds_alternative<int64_t>(v)) {
    t = Tensor::scalar_i64(std::get<int64_t>(v));
  } else if (key == "value_floats" && std::holds_alternative<std::vector<float>>(v)) {
    const auto& f = std::get<std::vector<float>>(v);
    t = Tensor::from_f32({static_cast<int64_t>(f.size())}, f);
  } else if (key == "value_ints" && std::holds_alternative<std::vector<int64_t>>(v)) {
    const auto& i = std::get<std::vector<int64_t>>(v);
    t = Tensor::from_i64({static_cast<int64_t>(i.size())}, i);
  } else {
    return n.unsupported(str_cat("attribute '", key, "' is not supported"));
  }
  TensorType type = t.type();
  return std::vector<Ref>{Ref{kNoValue, std::move(t), std::move(type), n.name()}};
}

// Identity of a constant shares the constant's buffer (exporters route tied weights through
// Identity; folding would copy them).
Result identity(NodeContext& n) {
  if (absl::Status s = n.check_inputs(1, 1); !s.ok()) return s;
  const Ref* in = n.input(0);
  if (!in) return n.error("input 0 is missing");
  if (!in->is_constant()) return generic(n);
  return std::vector<Ref>{Ref{kNoValue, in->constant, in->type, n.name()}};
}

Result cast(NodeContext& n) {
  auto to = n.take_attr("to");
  if (!to || !std::holds_alternative<int64_t>(*to)) return n.error("needs an integer 'to'");
  auto dtype = dtype_from_onnx(static_cast<int32_t>(std::get<int64_t>(*to)),
                               str_cat(n.op_type(), " '", n.name(), "': target type"));
  if (!dtype.ok()) return dtype.status();
  n.attrs()["to"] = std::string(dtype_name(*dtype));
  n.take_attr("saturate");  // opset 19: only affects float8 targets
  // To or from STRING: numbers printed or read as text (the strings backend runs it).
  if (*dtype == DType::str || (n.input(0) && n.input(0)->type.dtype == DType::str))
    return n.emit("CastString", {n.input(0)});
  return generic(n);
}

// Clip: min and max are inputs from opset 11 on. Constant bounds become attributes; bounds
// computed at run time make it Min(Max(x, min), max), which has Clip's meaning (max wins when
// min > max, NaN stays NaN).
Result clip(NodeContext& n) {
  if (absl::Status s = n.check_inputs(1, 3); !s.ok()) return s;
  Ref* x = n.input(0);
  const bool runtime_min = n.input(1) && !n.input(1)->is_constant();
  const bool runtime_max = n.input(2) && !n.input(2)->is_constant();
  if (!runtime_min && !runtime_max) {
    if (absl::Status s = n.input_to_float(1, "min", "min"); !s.ok()) return s;
    if (absl::Status s = n.input_to_float(2, "max", "max"); !s.ok()) return s;
    return n.emit("Clip", {x});
  }
  std::vector<Ref> lower;
  if (n.input(1)) {
    auto r = n.emit_helper("Max", {x, n.input(1)}, {}, "min");
    if (!r.ok()) return r.status();
    lower = *std::move(r);
    x = &lower.front();
  }
  if (!n.input(2)) return lower;
  n.attrs().clear();
  return n.emit("Min", {x, n.input(2)});
}

// Dropout: ratio and training_mode are inputs from opset 12 on; only inference (or training with
// ratio 0, the same function) is supported. Either input computed at run time stays an
// attribute input, checked when the node runs.
Result dropout(NodeContext& n) {
  if (n.opset() >= 12) {
    if (absl::Status s = n.check_inputs(1, 3); !s.ok()) return s;
    Ref* const ratio = n.runtime_input(1);
    Ref* const training = n.runtime_input(2);
    float constant_ratio = 0.5f;
    if (n.input(1) && !ratio) {
      auto r = n.constant_input(1, "ratio");
      if (!r.ok()) return r.status();
      if (r->numel() != 1) return n.error("ratio must be a single value");
      constant_ratio = static_cast<float>(r->get_as_double(0));
      n.attrs()["ratio"] = constant_ratio;
    }
    if (n.input(2) && !training) {
      auto mode = n.constant_input(2, "training_mode");
      if (!mode.ok()) return mode.status();
      if (mode->numel() != 1) return n.error("training_mode must be a single value");
      // Training mode with a ratio of 0 keeps every element at scale 1/(1 - 0): the inference
      // output and an all-true mask. torchvision's Swin exports it (F.dropout(p=0.0), which
      // defaults to training=True, inside the attention).
      if (mode->get_as_int64(0) != 0 && (ratio || constant_ratio != 0.f))
        return n.unsupported("training_mode is true with a ratio other than 0 (random); "
                             "collage runs inference only");
    }
    if (ratio || training)
      return n.emit("Dropout", {n.input(0), ratio, training}, n.num_outputs());
  } else if (absl::Status s = n.check_inputs(1, 1); !s.ok()) {
    return s;
  }
  return n.emit("Dropout", {n.input(0)}, n.num_outputs());
}

// Softmax and LogSoftmax before opset 13 flatten the input to 2-D at `axis` (default 1) and
// normalise over the second dimension.
Result softmax(NodeContext& n) {
  if (n.opset() >= 13) return generic(n);
  if (absl::Status s = n.check_inputs(1, 1); !s.ok()) return s;
  const Shape shape = n.input(0)->type.shape;
  const auto rank = static_cast<int64_t>(shape.size());
  int64_t axis = 1;
  if (auto a = n.take_attr("axis")) {
    if (!std::holds_alternative<int64_t>(*a)) return n.error("'axis' must be an integer");
    axis = std::get<int64_t>(*a);
  }
  if (axis < -rank || axis > std::max<int64_t>(rank - 1, 0))
    return n.error(str_cat("axis ", axis, " is out of range for rank ", rank));
  if (axis < 0) axis += rank;
  n.attrs()["axis"] = int64_t{-1};
  if (rank == 0 || axis == rank - 1) return n.emit(n.op_type(), {n.input(0)});
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= shape[i];
  AttrMap to2d{{"shape", std::vector<int64_t>{outer, inner}}, {"allowzero", int64_t{1}}};
  auto flat = n.emit_helper("Reshape", {n.input(0)}, to2d, "to_2d");
  if (!flat.ok()) return flat.status();
  auto norm = n.emit_helper(n.op_type(), {&flat->front()}, {{"axis", int64_t{1}}}, "2d");
  if (!norm.ok()) return norm.status();
  n.attrs() = AttrMap{{"shape", shape}, {"allowzero", int64_t{1}}};
  return n.emit("Reshape", {&norm->front()});
}

// BatchNormalization: training_mode = 1 (version 14 on) is BatchNormalizationTraining, which
// also gives the running statistics; older versions' training outputs are refused.
Result batch_norm(NodeContext& n) {
  if (auto it = n.attrs().find("training_mode"); it != n.attrs().end() && n.version() >= 14) {
    const auto* v = std::get_if<int64_t>(&it->second);
    if (!v) return n.error("'training_mode' must be an integer");
    if (*v != 0) {
      if (absl::Status s = n.check_inputs(5, 5); !s.ok()) return s;
      int outputs = 1;
      for (int i = 1; i < n.num_outputs(); ++i)
        if (n.output_used(i)) outputs = i + 1;
      return n.emit("BatchNormalizationTraining", n.inputs(), outputs);
    }
  }
  if (absl::Status s = n.refuse_outputs_from(1, "training statistics"); !s.ok()) return s;
  n.take_attr("is_test");  // version 6: inference is all collage runs
  if (auto spatial = n.take_attr("spatial")) {  // versions 6 and 7
    const auto* v = std::get_if<int64_t>(&*spatial);
    if (!v || *v != 1)
      return n.unsupported("spatial is 0 (statistics per element); only per-channel is supported");
  }
  if (auto it = n.attrs().find("training_mode"); it != n.attrs().end()) {
    const auto* v = std::get_if<int64_t>(&it->second);
    if (v && *v != 0) return n.unsupported("training_mode is 1; collage runs inference only");
  }
  return n.emit("BatchNormalization", n.inputs(), 1);
}

// LayerNormalization: Mean and InvStdDev are produced only when used (the fast kernels give Y).
Result layer_norm(NodeContext& n) {
  int outputs = 1;
  for (int i = 1; i < n.num_outputs(); ++i)
    if (n.output_used(i)) outputs = i + 1;
  return n.emit("LayerNormalization", n.inputs(), outputs);
}

// MaxPool: Indices is produced only when used (the fast kernels give Y).
Result max_pool(NodeContext& n) {
  return n.emit("MaxPool", n.inputs(), n.output_used(1) ? 2 : 1);
}

// Reduce*: axes moved from attribute to input at opset 13 (ReduceSum) or 18 (the others).
Result reduce(NodeContext& n) {
  const int axes_input_since = n.op_type() == "ReduceSum" ? 13 : 18;
  if (n.opset() >= axes_input_since) {
    if (absl::Status s = n.check_inputs(1, 2); !s.ok()) return s;
    if (Ref* axes = n.runtime_input(1)) return n.emit(n.op_type(), {n.input(0), axes});
    if (absl::Status s = n.input_to_ints(1, "axes", "axes"); !s.ok()) return s;
  } else if (absl::Status s = n.check_inputs(1, 1); !s.ok()) {
    return s;
  }
  return n.emit(n.op_type(), {n.input(0)});
}

// Squeeze / Unsqueeze: axes is an input from opset 13 on (required for Unsqueeze).
Result squeeze(NodeContext& n) {
  if (n.opset() >= 13) {
    const int min = n.op_type() == "Unsqueeze" ? 2 : 1;
    if (absl::Status s = n.check_inputs(min, 2); !s.ok()) return s;
    if (Ref* axes = n.runtime_input(1)) return n.emit(n.op_type(), {n.input(0), axes});
    if (absl::Status s = n.input_to_ints(1, "axes", "axes"); !s.ok()) return s;
  } else if (absl::Status s = n.check_inputs(1, 1); !s.ok()) {
    return s;
  }
  return n.emit(n.op_type(), {n.input(0)});
}

// Split: `split` is an input from opset 13; opset 18 adds num_outputs.
Result split(NodeContext& n) {
  Ref* runtime_split = nullptr;
  if (n.opset() >= 13) {
    if (absl::Status s = n.check_inputs(1, 2); !s.ok()) return s;
    runtime_split = n.runtime_input(1);
    if (!runtime_split)
      if (absl::Status s = n.input_to_ints(1, "split", "split"); !s.ok()) return s;
  } else if (absl::Status s = n.check_inputs(1, 1); !s.ok()) {
    return s;
  }
  const int outputs = n.num_outputs();
  if (auto k = n.take_attr("num_outputs")) {
    const auto* v = std::get_if<int64_t>(&*k);
    if (!v || *v != outputs)
      return n.error(str_cat("num_outputs does not match the ", outputs, " outputs of the node"));
    if (n.attrs().count("split")) return n.error("has both 'split' and num_outputs");
  }
  return n.emit("Split", {n.input(0), runtime_split}, outputs);
}

Result slice(NodeContext& n) {
  if (n.version() < 10) {  // starts, ends and axes are attributes
    if (absl::Status s = n.check_inputs(1, 1); !s.ok()) return s;
    return n.emit("Slice", {n.input(0)});
  }
  if (absl::Status s = n.check_inputs(3, 5); !s.ok()) return s;
  static const char* const kNames[] = {"starts", "ends", "axes", "steps"};
  // Each one computed at run time stays an input (Slice's attribute inputs 1 to 4).
  std::vector<Ref*> inputs = {n.input(0)};
  for (int i = 1; i <= 4; ++i) {
    inputs.push_back(n.runtime_input(i));
    if (inputs.back()) continue;
    if (absl::Status s = n.input_to_ints(i, kNames[i - 1], kNames[i - 1]); !s.ok()) return s;
  }
  return n.emit("Slice", inputs);
}

// Pad: pads and constant_value are inputs from version 11 (attributes before); 18 adds axes.
Result pad(NodeContext& n) {
  if (n.version() < 11) {  // pads, mode and value are attributes
    if (absl::Status s = n.check_inputs(1, 1); !s.ok()) return s;
    return n.emit("Pad", {n.input(0)});
  }
  if (absl::Status s = n.check_inputs(2, n.opset() >= 18 ? 4 : 3); !s.ok()) return s;
  // pads, constant_value and axes computed at run time stay inputs (Pad's attribute inputs 1 to
  // 3); with pads or axes at run time, constant axes stay an attribute that Pad spreads itself.
  Ref* const runtime_pads = n.runtime_input(1);
  Ref* const runtime_value = n.runtime_input(2);
  Ref* const runtime_axes = n.runtime_input(3);
  if (!runtime_pads)
    if (absl::Status s = n.input_to_ints(1, "pads", "pads"); !s.ok()) return s;
  if (n.input(2) && !runtime_value) {
    auto v = n.constant_input(2, "constant_value");
    if (!v.ok()) return v.status();
    if (v->numel() > 1) return n.error("constant_value must be a single value");
    if (v->numel() == 1) n.attrs()["value"] = static_cast<float>(v->get_as_double(0));
  }
  if (runtime_pads || runtime_axes) {
    if (n.input(3) && !runtime_axes)
      if (absl::Status s = n.input_to_ints(3, "axes", "axes"); !s.ok()) return s;
    return n.emit("Pad", {n.input(0), runtime_pads, runtime_value, runtime_axes});
  }
  if (n.input(3)) {
    auto axes = n.constant_input(3, "axes");
    if (!axes.ok()) return axes.status();
    const auto rank = static_cast<int64_t>(n.input(0)->type.shape.size());
    const auto ax = axes->to_int64_vector();
    const auto& given = std::get<std::vector<int64_t>>(n.attrs()["pads"]);
    if (given.size() != 2 * ax.size())
      return n.error(str_cat("pads has ", given.size(), " values for ", ax.size(), " axes"));
    std::vector<int64_t> full(2 * rank, 0);
    for (size_t i = 0; i < ax.size(); ++i) {
      const int64_t a = ax[i] < 0 ? ax[i] + rank : ax[i];
      if (a < 0 || a >= rank) return n.error(str_cat("axis ", ax[i], " is out of range"));
      full[a] = given[i];
      full[a + rank] = given[i + ax.size()];
    }
    n.attrs()["pads"] = full;
  }
  return n.emit("Pad", {n.input(0), runtime_pads, runtime_value});
}

Result constant_of_shape(NodeContext& n) {
  if (absl::Status s = n.check_inputs(1, 1); !s.ok()) return s;
  if (Ref* shape = n.runtime_input(0)) return n.emit("ConstantOfShape", {shape});
  if (absl::Status s = n.input_to_ints(0, "shape", "shape"); !s.ok()) return s;
  return n.emit("ConstantOfShape", {});
}

// Float values of constant input i (empty when absent or empty).
absl::StatusOr<std::vector<float>> float_list(NodeContext& n, int i, std::string_view role) {
  std::vector<float> out;
  if (!n.input(i)) return out;
  auto t = n.constant_input(i, role);
  if (!t.ok()) return t.status();
  for (int64_t k = 0; k < t->numel(); ++k) out.push_back(static_cast<float>(t->get_as_double(k)));
  return out;
}

// Resize (opset 11+): X, roi, scales, sizes. roi only matters for tf_crop_and_resize. Opset 18's
// `axes` is resolved here by spreading per-axis values over every axis when every value is known
// and the aspect ratio is not kept; otherwise `axes` and keep_aspect_ratio_policy stay attributes
// and the operator spreads the values it is given.
Result resize(NodeContext& n) {
  if (absl::Status s = n.check_inputs(1, 4); !s.ok()) return s;
  bool crop = false;
  if (auto it = n.attrs().find("coordinate_transformation_mode"); it != n.attrs().end()) {
    const auto* m = std::get_if<std::string>(&it->second);
    crop = m && *m == "tf_crop_and_resize";
  }
  if (!n.input(0)) return n.error("input 0 (X) is missing");
  const Shape& in = n.input(0)->type.shape;
  const auto rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes;
  if (auto a = n.take_attr("axes")) {
    const auto* v = std::get_if<std::vector<int64_t>>(&*a);
    if (!v) return n.error("'axes' must be a list of integers");
    for (int64_t x : *v) {
      if (x < -rank || x >= rank) return n.error(str_cat("axis ", x, " is out of range"));
      axes.push_back(x < 0 ? x + rank : x);
    }
  }
  std::string policy = "stretch";
  if (auto p = n.take_attr("keep_aspect_ratio_policy")) {
    const auto* v = std::get_if<std::string>(&*p);
    if (!v) return n.error("'keep_aspect_ratio_policy' must be a string");
    policy = *v;
  }
  // roi, scales and sizes computed at run time stay inputs (Resize's attribute inputs 1 to 3);
  // roi is read only by tf_crop_and_resize.
  Ref* const runtime[] = {crop ? n.runtime_input(1) : nullptr, n.runtime_input(2),
                          n.runtime_input(3)};
  if (runtime[0] || runtime[1] || runtime[2] || policy != "stretch") {
    if (!axes.empty()) n.attrs()["axes"] = axes;
    if (policy != "stretch") n.attrs()["keep_aspect_ratio_policy"] = policy;
    if (crop && !runtime[0]) {
      auto roi = float_list(n, 1, "roi");
      if (!roi.ok()) return roi.status();
      if (!roi->empty()) n.attrs()["roi"] = *roi;
    }
    if (!runtime[1]) {
      auto scales = float_list(n, 2, "scales");
      if (!scales.ok()) return scales.status();
      if (!scales->empty()) n.attrs()["scales"] = *scales;
    }
    if (!runtime[2] && n.input(3)) {
      auto t = n.constant_input(3, "sizes");
      if (!t.ok()) return t.status();
      if (t->numel() > 0) n.attrs()["sizes"] = t->to_int64_vector();
    }
    std::vector<Ref*> inputs = {n.input(0), runtime[0], runtime[1], runtime[2]};
    return n.emit("Resize", inputs);
  }
  auto roi = crop ? float_list(n, 1, "roi") : std::vector<float>();
  if (!roi.ok()) return roi.status();
  auto scales = float_list(n, 2, "scales");
  if (!scales.ok()) return scales.status();
  std::vector<int64_t> sizes;
  if (n.input(3)) {
    auto t = n.constant_input(3, "sizes");
    if (!t.ok()) return t.status();
    sizes = t->to_int64_vector();
  }
  if (!axes.empty()) {
    const size_t k = axes.size();
    if ((!scales->empty() && scales->size() != k) || (!sizes.empty() && sizes.size() != k) ||
        (!roi->empty() && roi->size() != 2 * k))
      return n.error("roi, scales and sizes must match the length of 'axes'");
    std::vector<float> full_scales(rank, 1.f), full_roi(2 * rank, 0.f);
    std::vector<int64_t> full_sizes(in.begin(), in.end());
    for (int64_t i = 0; i < rank; ++i) full_roi[rank + i] = 1.f;
    for (size_t i = 0; i < k; ++i) {
      if (!scales->empty()) full_scales[axes[i]] = (*scales)[i];
      if (!sizes.empty()) full_sizes[axes[i]] = sizes[i];
      if (!roi->empty()) {
        full_roi[axes[i]] = (*roi)[i];
        full_roi[rank + axes[i]] = (*roi)[k + i];
      }
    }
    if (!scales->empty()) *scales = full_scales;
    if (!sizes.empty()) sizes = full_sizes;
    if (!roi->empty()) *roi = full_roi;
  }
  if (!roi->empty()) n.attrs()["roi"] = *roi;
  if (!scales->empty()) n.attrs()["scales"] = *scales;
  if (!sizes.empty()) n.attrs()["sizes"] = sizes;
  return n.emit("Resize", {n.input(0)});
}

struct Entry {
  std::string_view op_type;
  OpConversion conversion;
};

constexpr Entry kConversions[] = {
    // nn
    {"Conv", {generic, 1, true}},
    {"ConvTranspose", {generic, 1, true}},
    {"MaxPool", {max_pool, 1, true}},
    {"AveragePool", {generic, 1, true}},
    {"GlobalAveragePool", {generic, 1, true}},
    {"BatchNormalization", {batch_norm, 6, true}},
    {"InstanceNormalization", {generic, 6, true}},
    {"LayerNormalization", {layer_norm, 17, true}},
    {"Softmax", {softmax, 1, true}},
    {"LogSoftmax", {softmax, 1, true}},
    {"MatMul", {generic, 1, true}},
    {"Gemm", {generic, 7, true}},
    // elementwise
    {"Add", {generic, 7, true}},
    {"Sub", {generic, 7, true}},
    {"Mul", {generic, 7, true}},
    {"Div", {generic, 7, true}},
    {"Pow", {generic, 7, true}},
    {"Relu", {generic, 6, true}},
    {"Sigmoid", {generic, 6, true}},
    {"Tanh", {generic, 6, true}},
    {"Erf", {generic, 9, true}},
    {"Exp", {generic, 6, true}},
    {"Log", {generic, 6, true}},
    {"Sqrt", {generic, 6, true}},
    {"Reciprocal", {generic, 6, true}},
    {"Neg", {generic, 6, true}},
    {"Abs", {generic, 6, true}},
    {"LeakyRelu", {generic, 6, true}},
    {"PRelu", {generic, 7, true}},
    {"HardSigmoid", {generic, 6, true}},
    {"HardSwish", {generic, 14, true}},
    {"Gelu", {generic, 20, true}},
    {"Clip", {clip, 6, true}},
    {"Where", {generic, 9, true}},
    {"Less", {generic, 7, true}},
    {"Greater", {generic, 7, true}},
    {"Cast", {cast, 6, true}},
    {"Identity", {identity, 1, true}},
    {"Dropout", {dropout, 7, true}},
    // reduction
    {"ReduceMean", {reduce, 1, true}},
    {"ReduceSum", {reduce, 1, true}},
    {"ReduceMax", {reduce, 1, true}},
    // tensor
    {"Concat", {generic, 4, true}},
    {"Split", {split, 2, true}},
    {"Slice", {slice, 1, true}},
    {"Gather", {generic, 1, true}},
    {"GatherElements", {generic, 11, true}},
    {"Reshape", {input_as_ints<1, kShape, kShape>, 5, true}},
    {"Flatten", {generic, 1, true}},
    {"Transpose", {generic, 1, true}},
    {"Squeeze", {squeeze, 1, true}},
    {"Unsqueeze", {squeeze, 1, true}},
    {"Pad", {pad, 2, true}},
    {"Shape", {generic, 1, true}},
    {"ConstantOfShape", {constant_of_shape, 9, true}},
    {"Expand", {input_as_ints<1, kShape, kShape>, 8, true}},
    {"Tile", {input_as_ints<1, kRepeats, kRepeats>, 6, true}},
    {"Range", {generic, 11, true}},
    {"Resize", {resize, 11, true}},
    // data-dependent output shapes
    {"NonZero", {generic, 9, true}},
    {"NonMaxSuppression", {generic, 10, true}},
    {"Unique", {generic, 11, true}},
    // no IR operator: becomes a constant
    {"Constant", {constant, 1, false}},
};

}  // namespace

const OpConversion* find_conversion(std::string_view op_type) {
  for (const Entry& e : kConversions)
    if (e.op_type == op_type) return &e.conversion;
  if (const OpConversion* c = find_elementwise_conversion(op_type)) return c;
  if (const OpConversion* c = find_indexing_conversion(op_type)) return c;
  if (const OpConversion* c = find_text_conversion(op_type)) return c;
  return find_misc_conversion(op_type);
}

}  // namespace collage::onnx_import
