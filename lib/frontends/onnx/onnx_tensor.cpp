// Decoding of ONNX TensorProto values: element types, raw and typed data, external data files.
#include "frontends/onnx/onnx_tensor.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <fstream>
#include <limits>
#include <system_error>

#include "core/str_cat.h"

namespace collage::onnx_import {
namespace {

static_assert(std::endian::native == std::endian::little,
              "ONNX raw_data is little-endian; a big-endian host would need byte swapping");

using onnx::TensorProto;

std::string tensor_label(const TensorProto& t) { return str_cat("tensor '", t.name(), "'"); }

// Element count of `dims`, refusing negative sizes and products that overflow.
absl::StatusOr<int64_t> checked_numel(const TensorProto& t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0)
      return absl::InvalidArgumentError(
          str_cat(tensor_label(t), " has a negative dimension (", d, ")"));
    if (__builtin_mul_overflow(n, d, &n) || n > (int64_t{1} << 48))
      return absl::InvalidArgumentError(str_cat(tensor_label(t), " is impossibly large"));
  }
  return n;
}

absl::StatusOr<int64_t> parse_size(const std::string& text, std::string_view key,
                                   const TensorProto& t) {
  int64_t v = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0)
    return absl::InvalidArgumentError(str_cat(tensor_label(t), ": external data '", key, "' is '",
                                              text, "', not a non-negative integer"));
  return v;
}

// Where an EXTERNAL tensor's bytes are.
struct ExternalRegion {
  std::string location;  // as written in the model
  std::filesystem::path file;
  int64_t offset = 0;
};

// Validates the external-data keys of `t` against the file on disk; `need` is the byte size of
// the tensor.
absl::StatusOr<ExternalRegion> locate_external(const TensorProto& t, const TensorSource& source,
                                               int64_t need) {
  ExternalRegion r;
  int64_t length = -1;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") {
      r.location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      auto v = parse_size(kv.value(), kv.key(), t);
      if (!v.ok()) return v.status();
      (kv.key() == "offset" ? r.offset : length) = *v;
    }
  }
  if (r.location.empty())
    return absl::InvalidArgumentError(
        str_cat(tensor_label(t), " is stored externally but has no 'location'"));
  if (source.base_dir.empty())
    return absl::InvalidArgumentError(
        str_cat(tensor_label(t), " refers to external data file '", r.location,
                "', but the model was given in memory without a folder to look in"));
  // Only a lexical check: weight files reached through symbolic links inside the folder (as in
  // model caches that link to a blob store) stay allowed.
  const std::filesystem::path rel = std::filesystem::path(r.location).lexically_normal();
  if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory() || rel.empty() ||
      *rel.begin() == "..")
    return absl::InvalidArgumentError(
        str_cat(tensor_label(t), ": external data location '", r.location,
                "' is outside the model's folder; only relative paths inside it are allowed"));
  r.file = source.base_dir / rel;
  if (length >= 0 && length != need)
    return absl::InvalidArgumentError(str_cat(tensor_label(t), ": external data length is ",
                                              length, " bytes in '", r.location,
                                              "', but its shape and type need ", need));
  std::error_code ec;
  const auto size = std::filesystem::file_size(r.file, ec);
  if (ec)
    return absl::NotFoundError(str_cat(tensor_label(t), ": cannot open external data file '",
                                       r.location, "' (", r.file.string(), "): ", ec.message()));
  if (r.offset > static_cast<int64_t>(size) || need > static_cast<int64_t>(size) - r.offset)
    return absl::InvalidArgumentError(
        str_cat(tensor_label(t), ": external data file '", r.location, "' is too short: it has ",
                static_cast<int64_t>(size), " bytes, the tensor needs bytes ", r.offset, "..",
                r.offset + need));
  return r;
}

absl::Status read_region(const TensorProto& t, const ExternalRegion& r, Tensor& out) {
  std::ifstream in(r.file, std::ios::binary);
  in.seekg(r.offset);
  in.read(static_cast<char*>(out.raw()), static_cast<std::streamsize>(out.bytes()));
  if (!in)
    return absl::DataLossError(str_cat(tensor_label(t), ": reading ", out.bytes(),
                                       " bytes at offset ", r.offset, " of external data file '",
                                       r.location, "' failed"));
  return absl::OkStatus();
}

// The typed repeated field that holds elements of `dtype`, and its length. int32_data carries
// every narrower type, one element per entry (16-bit floats as bit patterns).
std::pair<const char*, int64_t> typed_field(const TensorProto& t, DType dtype) {
  switch (dtype) {
    case DType::f32: return {"float_data", t.float_data_size()};
    case DType::i64: return {"int64_data", t.int64_data_size()};
    case DType::f64: return {"double_data", t.double_data_size()};
    case DType::u32:
    case DType::u64: return {"uint64_data", t.uint64_data_size()};
    default: break;
  }
  return {"int32_data", t.int32_data_size()};
}

// Copies the typed field into `out` (its length was checked by typed_field's caller).
void read_typed(const TensorProto& t, Tensor& out) {
  const int64_t n = out.numel();
  if (n == 0) return;  // an empty field's data() may be null, which memcpy must not get
  switch (out.dtype()) {
    case DType::f32: std::memcpy(out.raw(), t.float_data().data(), out.bytes()); return;
    case DType::i64: std::memcpy(out.raw(), t.int64_data().data(), out.bytes()); return;
    case DType::f64: std::memcpy(out.raw(), t.double_data().data(), out.bytes()); return;
    case DType::u64: std::memcpy(out.raw(), t.uint64_data().data(), out.bytes()); return;
    case DType::u32:
      for (int64_t i = 0; i < n; ++i)
        out.data<uint32_t>()[i] = static_cast<uint32_t>(t.uint64_data()[static_cast<int>(i)]);
      return;
    default: break;
  }
  const auto& src = t.int32_data();
  for (int64_t i = 0; i < n; ++i) {
    const int32_t v = src[static_cast<int>(i)];
    switch (out.dtype()) {
      case DType::i32: out.data<int32_t>()[i] = v; break;
      case DType::i8: out.data<int8_t>()[i] = static_cast<int8_t>(v); break;
      case DType::i16: out.data<int16_t>()[i] = static_cast<int16_t>(v); break;
      case DType::u8: out.data<uint8_t>()[i] = static_cast<uint8_t>(v); break;
      case DType::f16:
      case DType::bf16:
      case DType::u16: out.data<uint16_t>()[i] = static_cast<uint16_t>(v); break;
      case DType::boolean: out.data<uint8_t>()[i] = v != 0; break;
      default: break;  // the types above read other fields
    }
  }
}

}  // namespace

std::string onnx_type_name(int32_t elem_type) {
  if (onnx::TensorProto_DataType_IsValid(elem_type))
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elem_type));
  return str_cat("type ", elem_type);
}

absl::StatusOr<DType> dtype_from_onnx(int32_t elem_type, std::string_view what) {
  switch (elem_type) {
    case TensorProto::FLOAT: return DType::f32;
    case TensorProto::FLOAT16: return DType::f16;
    case TensorProto::BFLOAT16: return DType::bf16;
    case TensorProto::INT8: return DType::i8;
    case TensorProto::INT32: return DType::i32;
    case TensorProto::INT64: return DType::i64;
    case TensorProto::BOOL: return DType::boolean;
    case TensorProto::DOUBLE: return DType::f64;
    case TensorProto::INT16: return DType::i16;
    case TensorProto::UINT8: return DType::u8;
    case TensorProto::UINT16: return DType::u16;
    case TensorProto::UINT32: return DType::u32;
    case TensorProto::UINT64: return DType::u64;
    case TensorProto::STRING: return DType::str;
    case TensorProto::UNDEFINED:
      return absl::InvalidArgumentError(str_cat(what, " has no element type"));
    default:
      return absl::UnimplementedError(
          str_cat(what, " has element type ", onnx_type_name(elem_type),
                  ", which collage does not support (supported: FLOAT, FLOAT16, BFLOAT16, DOUBLE, "
                  "INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64, BOOL, STRING)"));
  }
}

int32_t onnx_type_of(DType t) {
  switch (t) {
    case DType::f32: return TensorProto::FLOAT;
    case DType::f16: return TensorProto::FLOAT16;
    case DType::bf16: return TensorProto::BFLOAT16;
    case DType::i8: return TensorProto::INT8;
    case DType::i32: return TensorProto::INT32;
    case DType::i64: return TensorProto::INT64;
    case DType::boolean: return TensorProto::BOOL;
    case DType::f64: return TensorProto::DOUBLE;
    case DType::i16: return TensorProto::INT16;
    case DType::u8: return TensorProto::UINT8;
    case DType::u16: return TensorProto::UINT16;
    case DType::u32: return TensorProto::UINT32;
    case DType::u64: return TensorProto::UINT64;
    case DType::str: return TensorProto::STRING;
  }
  return TensorProto::UNDEFINED;
}

absl::StatusOr<Tensor> tensor_from_proto(const TensorProto& t, const TensorSource& source) {
  auto dtype = dtype_from_onnx(t.data_type(), tensor_label(t));
  if (!dtype.ok()) return dtype.status();
  if (t.has_segment())
    return absl::UnimplementedError(str_cat(tensor_label(t), " is segmented; not supported"));
  auto numel = checked_numel(t);
  if (!numel.ok()) return numel.status();
  const Shape shape(t.dims().begin(), t.dims().end());
  if (*dtype == DType::str) {
    // ONNX keeps strings in string_data only (never raw_data or external files).
    if (t.data_location() == TensorProto::EXTERNAL || t.has_raw_data())
      return absl::InvalidArgumentError(
          str_cat(tensor_label(t), " is a STRING tensor with raw or external data; ONNX keeps "
                                   "strings in string_data"));
    if (t.string_data_size() != *numel)
      return absl::InvalidArgumentError(str_cat(tensor_label(t), " has ", t.string_data_size(),
                                                " values in string_data, its shape ",
                                                shape_to_string(shape), " needs ", *numel));
    Tensor out(DType::str, shape);
    std::copy(t.string_data().begin(), t.string_data().end(), out.data<std::string>());
    return out;
  }
  const auto need = static_cast<int64_t>(*numel * static_cast<int64_t>(dtype_size(*dtype)));

  // Every size is checked against the data actually present before anything is allocated, so a
  // model that claims a huge tensor fails cleanly.
  if (t.data_location() == TensorProto::EXTERNAL) {
    auto region = locate_external(t, source, need);
    if (!region.ok()) return region.status();
    Tensor out(*dtype, shape);
    if (absl::Status s = read_region(t, *region, out); !s.ok()) return s;
    return out;
  }
  if (t.has_raw_data()) {
    if (static_cast<int64_t>(t.raw_data().size()) != need)
      return absl::InvalidArgumentError(
          str_cat(tensor_label(t), " has ", t.raw_data().size(), " bytes of raw_data, its type ",
                  type_to_string(TensorType{*dtype, shape}), " needs ", need));
    Tensor out(*dtype, shape);
    std::memcpy(out.raw(), t.raw_data().data(), static_cast<size_t>(need));
    if (*dtype == DType::boolean)
      for (int64_t i = 0; i < out.numel(); ++i) out.data<uint8_t>()[i] = out.data<uint8_t>()[i] != 0;
    return out;
  }
  const auto [field, count] = typed_field(t, *dtype);
  if (count != *numel)
    return absl::InvalidArgumentError(str_cat(tensor_label(t), " has ", count, " values in ",
                                              field, ", its shape ", shape_to_string(shape),
                                              " needs ", *numel));
  Tensor out(*dtype, shape);
  read_typed(t, out);
  return out;
}

}  // namespace collage::onnx_import
