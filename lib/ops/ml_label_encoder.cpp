// LabelEncoder (ai.onnx.ml 2 and 4): a lookup table from keys to values, over strings or numbers.
#include <cmath>
#include <cstring>
#include <map>
#include <unordered_map>

#include "collage/ops/text.h"
#include "core/str_cat.h"
#include "ops/elementwise_common.h"
#include "ops/op_sets.h"

namespace collage::ops {
namespace {

constexpr TypeSet kLabelTypes = kNumericTypes | type_bit(DType::str);

// Element i of t set to element j of src (same dtype).
void copy_element(const Tensor& src, int64_t j, Tensor& t, int64_t i) {
  if (t.dtype() == DType::str) {
    t.data<std::string>()[i] = src.data<std::string>()[j];
    return;
  }
  const size_t size = dtype_size(t.dtype());
  std::memcpy(static_cast<uint8_t*>(t.raw()) + i * size,
              static_cast<const uint8_t*>(src.raw()) + j * size, size);
}

// Where each key is in `keys`; a repeated key is an error. Strings by text, integers exactly,
// floats by value with every NaN one key.
class KeyIndex {
 public:
  static absl::StatusOr<KeyIndex> make(const Tensor& keys) {
    KeyIndex k;
    k.dtype_ = keys.dtype();
    for (int64_t i = 0; i < keys.numel(); ++i) {
      bool fresh = true;
      if (k.dtype_ == DType::str) {
        fresh = k.strings_.emplace(keys.data<std::string>()[i], i).second;
      } else if (is_float(k.dtype_)) {
        const double v = keys.get_as_double(i);
        if (!std::isnan(v)) {
          fresh = k.floats_.emplace(v, i).second;
        } else if (k.nan_ < 0) {
          k.nan_ = i;
        } else {
          fresh = false;
        }
      } else {
        fresh = k.ints_.emplace(keys.get_as_int64(i), i).second;
      }
      if (!fresh) return absl::InvalidArgumentError(str_cat("key ", i, " repeats an earlier key"));
    }
    return k;
  }
  // The place of element i of x among the keys, or -1.
  int64_t find(const Tensor& x, int64_t i) const {
    if (dtype_ == DType::str) {
      auto it = strings_.find(x.data<std::string>()[i]);
      return it == strings_.end() ? -1 : it->second;
    }
    if (is_float(dtype_)) {
      const double v = x.get_as_double(i);
      if (std::isnan(v)) return nan_;
      auto it = floats_.find(v);
      return it == floats_.end() ? -1 : it->second;
    }
    auto it = ints_.find(x.get_as_int64(i));
    return it == ints_.end() ? -1 : it->second;
  }

 private:
  DType dtype_ = DType::str;
  std::unordered_map<std::string, int64_t> strings_;
  std::map<double, int64_t> floats_;
  std::map<int64_t, int64_t> ints_;
  int64_t nan_ = -1;
};

absl::Status infer_label_encoder(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 0, kLabelTypes); !s.ok()) return s;
  const auto& a = ctx.attrs<LabelEncoderAttrs>();
  const TensorType& x = ctx.input(0);
  if (a.keys.empty() || a.values.empty() || a.keys.rank() != 1 || a.values.rank() != 1 ||
      a.keys.numel() != a.values.numel())
    return ctx.error("keys and values must be lists of the same length");
  if (a.keys.dtype() != x.dtype)
    return ctx.error(str_cat("keys are ", dtype_name(a.keys.dtype()), ", X is ",
                             dtype_name(x.dtype)));
  if (!in_set(kLabelTypes, a.values.dtype()))
    return ctx.error(str_cat("values of type ", dtype_name(a.values.dtype()), " are not supported"));
  if (a.default_value.empty() || a.default_value.numel() != 1 ||
      a.default_value.dtype() != a.values.dtype())
    return ctx.error(str_cat("the default must be one ", dtype_name(a.values.dtype()), " value"));
  if (auto index = KeyIndex::make(a.keys); !index.ok())
    return ctx.error(str_cat(index.status().message()));
  ctx.set_output(0, {a.values.dtype(), x.shape});
  return absl::OkStatus();
}

absl::Status run_label_encoder(const KernelArgs& k) {
  const auto& a = k.get<LabelEncoderAttrs>();
  auto index = KeyIndex::make(a.keys);
  if (!index.ok()) return index.status();
  const Tensor& x = k.inputs[0];
  Tensor& y = k.outputs[0];
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t at = index->find(x, i);
    if (at < 0)
      copy_element(a.default_value, 0, y, i);
    else
      copy_element(a.values, at, y, i);
  }
  return absl::OkStatus();
}

}  // namespace

void register_label_encoder_op(OpRegistry& r) {
  OpDef def = make_op<LabelEncoderAttrs>("LabelEncoder", FusionKind::elementwise, 1, 1,
                                         infer_label_encoder, run_label_encoder);
  def.strings = true;
  add_builtin_op(r, std::move(def));
}

}  // namespace collage::ops
