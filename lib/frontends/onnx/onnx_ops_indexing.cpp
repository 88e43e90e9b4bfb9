// ONNX conversions of the indexing operators added for ONNX coverage.
#include <string_view>

#include "core/str_cat.h"
#include "frontends/onnx/onnx_node.h"
#include "frontends/onnx/onnx_tensor.h"

namespace collage::onnx_import {
namespace {

using Result = absl::StatusOr<std::vector<Ref>>;

Result generic(NodeContext& n) {
  return n.emit(n.op_type(), n.inputs(), n.num_outputs() > 0 ? n.num_outputs() : -1);
}

// Scatter (versions 9 and 10) is ScatterElements under its old name.
Result scatter(NodeContext& n) { return n.emit("ScatterElements", n.inputs(), -1); }

// QuantizeLinear / DequantizeLinear: output_dtype is an ONNX element type number (0: none);
// precision (23) only matters for float8 and 4-bit targets.
Result quantize(NodeContext& n) {
  n.take_attr("precision");
  if (auto t = n.take_attr("output_dtype")) {
    const auto* v = std::get_if<int64_t>(&*t);
    if (!v) return n.error("'output_dtype' must be an integer");
    if (*v != 0) {
      auto dtype = dtype_from_onnx(static_cast<int32_t>(*v),
                                   str_cat(n.op_type(), " '", n.name(), "': output_dtype"));
      if (!dtype.ok()) return dtype.status();
      n.attrs()["output_dtype"] = std::string(dtype_name(*dtype));
    }
  }
  return generic(n);
}

// GridSample 16 names its modes bilinear and bicubic.
Result grid_sample(NodeContext& n) {
  if (auto it = n.attrs().find("mode"); it != n.attrs().end()) {
    if (auto* m = std::get_if<std::string>(&it->second)) {
      if (*m == "bilinear") *m = "linear";
      if (*m == "bicubic") *m = "cubic";
    }
  }
  return generic(n);
}

// EyeLike: `dtype` is an ONNX element type number.
Result eye_like(NodeContext& n) {
  if (auto t = n.take_attr("dtype")) {
    const auto* v = std::get_if<int64_t>(&*t);
    if (!v) return n.error("'dtype' must be an integer");
    auto dtype = dtype_from_onnx(static_cast<int32_t>(*v), str_cat(n.op_type(), " '", n.name(),
                                                                   "': dtype"));
    if (!dtype.ok()) return dtype.status();
    n.attrs()["dtype"] = std::string(dtype_name(*dtype));
  }
  return generic(n);
}

struct Entry {
  std::string_view op_type;
  OpConversion conversion;
};

constexpr Entry kConversions[] = {
    {"Trilu", {generic, 14, true}},
    {"CumSum", {generic, 11, true}},
    {"CumProd", {generic, 26, true}},
    {"GatherND", {generic, 11, true}},
    {"ScatterElements", {generic, 11, true}},
    {"ScatterND", {generic, 11, true}},
    {"Scatter", {scatter, 9, false}},
    {"EyeLike", {eye_like, 9, true}},
    {"TensorScatter", {generic, 24, true}},
    {"GridSample", {grid_sample, 16, true}},
    {"LpPool", {generic, 2, true}},
    {"QuantizeLinear", {quantize, 10, true}},
    {"DequantizeLinear", {quantize, 10, true}},
    {"DynamicQuantizeLinear", {generic, 11, true}},
    {"MatMulInteger", {generic, 10, true}},
    {"QLinearMatMul", {generic, 10, true}},
    {"RNN", {generic, 7, true}},
    {"GRU", {generic, 7, true}},
    {"LSTM", {generic, 7, true}},
    {"TfIdfVectorizer", {generic, 9, true}},
};

}  // namespace

const OpConversion* find_indexing_conversion(std::string_view op_type) {
  for (const Entry& e : kConversions)
    if (e.op_type == op_type) return &e.conversion;
  return nullptr;
}

}  // namespace collage::onnx_import
