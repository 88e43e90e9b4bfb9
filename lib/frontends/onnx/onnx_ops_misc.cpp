// ONNX conversions of the remaining operators: the window functions, MelWeightMatrix, AffineGrid,
// CenterCropPad, Upsample, DeformConv, ConvInteger, QLinearConv,
// MaxUnpool and Col2Im.
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

// output_datatype (an ONNX element type number, default float) becomes `dtype`.
Result with_output_dtype(NodeContext& n) {
  int64_t onnx_type = 1;
  if (auto t = n.take_attr("output_datatype")) {
    const auto* v = std::get_if<int64_t>(&*t);
    if (!v) return n.error("'output_datatype' must be an integer");
    onnx_type = *v;
  }
  auto dtype = dtype_from_onnx(static_cast<int32_t>(onnx_type),
                               str_cat(n.op_type(), " '", n.name(), "': output_datatype"));
  if (!dtype.ok()) return dtype.status();
  n.attrs()["dtype"] = std::string(dtype_name(*dtype));
  return generic(n);
}

// Upsample (versions 7 and 9, removed at 10) is Resize with asymmetric coordinates: `scales` is
// an attribute at 7 and an input at 9; nearest takes the floor, linear interpolates.
Result upsample(NodeContext& n) {
  std::string mode = "nearest";
  if (auto m = n.take_attr("mode")) {
    const auto* v = std::get_if<std::string>(&*m);
    if (!v) return n.error("'mode' must be a string");
    mode = *v;
  }
  if (mode == "bilinear") mode = "linear";
  if (mode != "nearest" && mode != "linear")
    return n.error(str_cat("mode '", mode, "' is not nearest or linear"));
  // Scales computed at run time (version 9) stay an input: Resize's attribute input 2.
  Ref* runtime_scales = nullptr;
  if (n.version() >= 9) {
    if (absl::Status s = n.check_inputs(2, 2); !s.ok()) return s;
    runtime_scales = n.runtime_input(1);
    if (!runtime_scales) {
      auto scales = n.constant_input(1, "scales");
      if (!scales.ok()) return scales.status();
      std::vector<float> v;
      for (int64_t i = 0; i < scales->numel(); ++i)
        v.push_back(static_cast<float>(scales->get_as_double(i)));
      n.attrs()["scales"] = v;
    }
  } else if (absl::Status s = n.check_inputs(1, 1); !s.ok()) {
    return s;
  } else if (!n.attrs().count("scales")) {
    return n.error("needs the attribute 'scales'");
  }
  n.attrs()["mode"] = mode;
  n.attrs()["coordinate_transformation_mode"] = std::string("asymmetric");
  n.attrs()["nearest_mode"] = std::string("floor");
  if (runtime_scales) return n.emit("Resize", {n.input(0), nullptr, runtime_scales, nullptr});
  return n.emit("Resize", {n.input(0)});
}

struct Entry {
  std::string_view op_type;
  OpConversion conversion;
};

constexpr Entry kConversions[] = {
    {"HannWindow", {with_output_dtype, 17, true}},
    {"HammingWindow", {with_output_dtype, 17, true}},
    {"BlackmanWindow", {with_output_dtype, 17, true}},
    {"MelWeightMatrix", {with_output_dtype, 17, true}},
    {"CenterCropPad", {generic, 18, true}},
    {"AffineGrid", {generic, 20, true}},
    {"Upsample", {upsample, 7, false}},
    {"DeformConv", {generic, 19, true}},
    {"ConvInteger", {generic, 10, true}},
    {"MaxUnpool", {generic, 9, true}},
    {"Col2Im", {generic, 18, true}},
    {"QLinearConv", {generic, 10, true}},
};

}  // namespace

const OpConversion* find_misc_conversion(std::string_view op_type) {
  for (const Entry& e : kConversions)
    if (e.op_type == op_type) return &e.conversion;
  return nullptr;
}

}  // namespace collage::onnx_import
