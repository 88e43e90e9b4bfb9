// CastString: ONNX Cast to or from STRING (the importer turns such a Cast into it), numbers
// printed and read as ONNX Runtime does (runtime/algorithms/number_text.h): floats "%.8g" with
// NaN, INF and -INF, integers and bool in decimal; text read as std::stod / stoll / stoull and
// converted with C++'s casts. Text that begins with no number is an error naming the element.
#include "collage/ops/elementwise.h"
#include "core/str_cat.h"
#include "number_text.h"
#include "ops/elementwise_common.h"
#include "ops/op_sets_ml.h"

namespace collage::ops {
namespace {

absl::Status infer_cast_string(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  const std::string& to = ctx.attrs<CastAttrs>().to;
  const std::optional<DType> t = parse_dtype(to);
  if (!t) return ctx.error(str_cat("attribute 'to' is \"", to, "\", which is no dtype"));
  const DType from = ctx.input(0).dtype;
  const bool to_text = *t == DType::str && in_set(kAllTypes, from);
  const bool from_text = from == DType::str && in_set(kAllTypes, *t);
  if (!to_text && !from_text && !(from == DType::str && *t == DType::str))
    return ctx.error(str_cat("casts ", dtype_name(from), " to ", dtype_name(*t),
                             "; it casts numbers or bool to str and str to them"));
  ctx.set_output(0, TensorType{*t, ctx.input(0).shape});
  return absl::OkStatus();
}

std::string text_of(const Tensor& x, int64_t i) {
  const DType t = x.dtype();
  if (is_float(t)) return algorithms::float_to_text(x.get_as_double(i));
  if (t == DType::u64) return std::to_string(x.data<uint64_t>()[i]);
  return std::to_string(x.get_as_int64(i));
}

template <typename T>
void put(Tensor& y, int64_t i, T v) {
  y.data<T>()[i] = v;
}

// Element i of y (a number or bool) from `text`; false when no number begins it.
bool read_text(const std::string& text, Tensor& y, int64_t i) {
  const DType t = y.dtype();
  if (is_float(t)) {
    double v = 0;
    if (!algorithms::text_to_double(text, &v)) return false;
    const auto f = static_cast<float>(v);
    switch (t) {
      case DType::f64: put<double>(y, i, v); break;
      case DType::f16: put<uint16_t>(y, i, float_to_half(f)); break;
      case DType::bf16: put<uint16_t>(y, i, float_to_bfloat16(f)); break;
      default: put<float>(y, i, f); break;
    }
    return true;
  }
  if (is_unsigned(t) || t == DType::boolean) {
    uint64_t v = 0;
    if (!algorithms::text_to_uint64(text, &v)) return false;
    switch (t) {
      case DType::boolean: put<uint8_t>(y, i, v != 0); break;
      case DType::u8: put<uint8_t>(y, i, static_cast<uint8_t>(v)); break;
      case DType::u16: put<uint16_t>(y, i, static_cast<uint16_t>(v)); break;
      case DType::u32: put<uint32_t>(y, i, static_cast<uint32_t>(v)); break;
      default: put<uint64_t>(y, i, v); break;
    }
    return true;
  }
  int64_t v = 0;
  if (!algorithms::text_to_int64(text, &v)) return false;
  switch (t) {
    case DType::i8: put<int8_t>(y, i, static_cast<int8_t>(v)); break;
    case DType::i16: put<int16_t>(y, i, static_cast<int16_t>(v)); break;
    case DType::i32: put<int32_t>(y, i, static_cast<int32_t>(v)); break;
    default: put<int64_t>(y, i, v); break;
  }
  return true;
}

absl::Status run_cast_string(const KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (y.dtype() == DType::str) {
      y.data<std::string>()[i] = x.dtype() == DType::str ? x.data<std::string>()[i] : text_of(x, i);
    } else if (!read_text(x.data<std::string>()[i], y, i)) {
      return absl::InvalidArgumentError(str_cat("element ", i, " '", x.data<std::string>()[i],
                                                "' is not a number of type ",
                                                dtype_name(y.dtype()), " (or is out of range)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

void register_cast_string_op(OpRegistry& r) {
  OpDef def = make_op<CastAttrs>("CastString", FusionKind::opaque, 1, 1, infer_cast_string,
                                 run_cast_string);
  def.strings = true;
  add_builtin_op(r, std::move(def));
}

}  // namespace collage::ops
