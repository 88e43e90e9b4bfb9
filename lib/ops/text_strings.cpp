// The string operators: StringConcat, StringEqual (ONNX Equal on strings), StringSplit and
// StringNormalizer: the reference kernels (the strings backend's runtime module runs them in
// compiled models, sharing runtime/algorithms/text_algorithms.h).
#include <algorithm>
#include <cstdint>
#include <set>

#include "collage/ops/text.h"
#include "core/str_cat.h"
#include "ops/elementwise_common.h"
#include "ops/op_sets.h"
#include "text_algorithms.h"

namespace collage::ops {
namespace {

constexpr TypeSet kStringType = type_bit(DType::str);

// An element codec for broadcast_binary over str tensors.
struct StringCodec {
  using Storage = std::string;
  using Compute = std::string;
  static const std::string& load(const std::string& v) { return v; }
  static std::string store(std::string v) { return v; }
};

absl::Status infer_string_binary(InferContext& ctx, DType out) {
  if (absl::Status s = check_dtype(ctx, 0, kStringType); !s.ok()) return s;
  return infer_binary(ctx, kStringType, &out);
}

absl::Status run_concat(const KernelArgs& k) {
  broadcast_binary<StringCodec, StringCodec, StringCodec>(
      k.inputs[0], k.inputs[1], k.outputs[0],
      [](const std::string& a, const std::string& b) { return a + b; });
  return absl::OkStatus();
}

absl::Status run_equal(const KernelArgs& k) {
  broadcast_binary<StringCodec, StringCodec, BoolCodec>(
      k.inputs[0], k.inputs[1], k.outputs[0],
      [](const std::string& a, const std::string& b) { return a == b; });
  return absl::OkStatus();
}

// --- StringSplit ---

// Python's str.split, as ONNX's reference implementation splits (runtime/algorithms/text_algorithms.h).
std::vector<std::string> split(const std::string& s, const std::string& delimiter,
                               int64_t maxsplit) {
  const auto pieces = text::split(s, delimiter, maxsplit);
  return std::vector<std::string>(pieces.begin(), pieces.end());
}

absl::Status infer_split(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 2); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 0, kStringType); !s.ok()) return s;
  const auto& a = ctx.attrs<StringSplitAttrs>();
  if (a.maxsplit < -1) return ctx.error(str_cat("maxsplit is ", a.maxsplit, "; it must be >= 0"));
  const TensorType& x = ctx.input(0);
  int64_t most = kDynamicDim;
  if (const Tensor* c = ctx.constant(0)) {
    most = 0;
    for (int64_t i = 0; i < c->numel(); ++i)
      most = std::max<int64_t>(
          most, static_cast<int64_t>(split(c->data<std::string>()[i], a.delimiter, a.maxsplit).size()));
  }
  Shape y = x.shape;
  y.push_back(most);
  ctx.set_output(0, {DType::str, y});
  ctx.set_output(1, {DType::i64, x.shape});
  return absl::OkStatus();
}

absl::Status run_split(const KernelArgs& k) {
  const auto& a = k.get<StringSplitAttrs>();
  const Tensor& x = k.inputs[0];
  Tensor& y = k.outputs[0];
  const int64_t width = y.shape().back();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const auto pieces = split(x.data<std::string>()[i], a.delimiter, a.maxsplit);
    if (static_cast<int64_t>(pieces.size()) > width)
      return absl::InternalError(str_cat(pieces.size(), " pieces for an output of ", width));
    std::copy(pieces.begin(), pieces.end(), y.data<std::string>() + i * width);
    k.outputs[1].data<int64_t>()[i] = static_cast<int64_t>(pieces.size());
  }
  return absl::OkStatus();
}

// --- StringNormalizer ---

absl::StatusOr<std::vector<std::string>> normalize(const StringNormalizerAttrs& a,
                                                   const Tensor& x) {
  std::string unavailable;
  auto mapper = text::CaseMapper::make(&unavailable);
  if (!mapper) return absl::FailedPreconditionError(unavailable);
  const bool sensitive = a.is_case_sensitive != 0;
  auto fold = [&](const std::string& s) -> absl::StatusOr<std::string> {
    if (sensitive) return s;
    auto lower = mapper->map(s, false);
    if (!lower) return absl::InvalidArgumentError(str_cat("'", s, "' is not valid UTF-8"));
    return *lower;
  };
  std::set<std::string> stop;
  for (int64_t i = 0; i < (a.stopwords.empty() ? 0 : a.stopwords.numel()); ++i) {
    auto w = fold(a.stopwords.data<std::string>()[i]);
    if (!w.ok()) return absl::InvalidArgumentError(str_cat("stopword ", w.status().message()));
    stop.insert(*w);
  }
  std::vector<std::string> kept;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const std::string& s = x.data<std::string>()[i];
    auto key = fold(s);
    if (!key.ok()) return absl::InvalidArgumentError(str_cat("X ", key.status().message()));
    if (stop.count(*key)) continue;
    if (a.case_change_action == "NONE") {
      kept.push_back(s);
      continue;
    }
    auto changed = mapper->map(s, a.case_change_action == "UPPER");
    if (!changed) return absl::InvalidArgumentError(str_cat("X '", s, "' is not valid UTF-8"));
    kept.push_back(*std::move(changed));
  }
  if (kept.empty()) kept.emplace_back();
  return kept;
}

absl::Status infer_normalizer(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 0, kStringType); !s.ok()) return s;
  const auto& a = ctx.attrs<StringNormalizerAttrs>();
  if (a.case_change_action != "NONE" && a.case_change_action != "LOWER" &&
      a.case_change_action != "UPPER")
    return ctx.error(str_cat("case_change_action '", a.case_change_action,
                             "' is not NONE, LOWER or UPPER"));
  if (!a.stopwords.empty() && (a.stopwords.dtype() != DType::str || a.stopwords.rank() != 1))
    return ctx.error("stopwords must be a list of strings");
  const Shape& x = ctx.input(0).shape;
  if (!(x.size() == 1 || (x.size() == 2 && x[0] == 1)))
    return ctx.error(str_cat("X must be [C] or [1, C], got ", shape_to_string(x)));
  int64_t kept = kDynamicDim;
  if (const Tensor* c = ctx.constant(0)) {
    auto out = normalize(a, *c);
    if (!out.ok()) return ctx.error(str_cat(out.status().message()));
    kept = static_cast<int64_t>(out->size());
  }
  ctx.set_output(0, {DType::str, x.size() == 1 ? Shape{kept} : Shape{1, kept}});
  return absl::OkStatus();
}

absl::Status run_normalizer(const KernelArgs& k) {
  auto out = normalize(k.get<StringNormalizerAttrs>(), k.inputs[0]);
  if (!out.ok()) return out.status();
  Tensor& y = k.outputs[0];
  if (static_cast<int64_t>(out->size()) != y.numel())
    return absl::InternalError(str_cat(out->size(), " strings kept for an output of ", y.numel()));
  std::copy(out->begin(), out->end(), y.data<std::string>());
  return absl::OkStatus();
}

void add_string_op(OpRegistry& r, OpDef def) {
  def.strings = true;
  add_builtin_op(r, std::move(def));
}

}  // namespace

void register_string_ops(OpRegistry& r) {
  add_string_op(r, make_op<NoAttrs>(
                       "StringConcat", FusionKind::broadcast, 2, 2,
                       [](InferContext& c) { return infer_string_binary(c, DType::str); },
                       run_concat));
  add_string_op(r, make_op<NoAttrs>(
                       "StringEqual", FusionKind::broadcast, 2, 2,
                       [](InferContext& c) { return infer_string_binary(c, DType::boolean); },
                       run_equal));
  add_string_op(r, make_op<StringSplitAttrs>("StringSplit", FusionKind::opaque, 1, 1, infer_split,
                                             run_split));
  add_string_op(r, make_op<StringNormalizerAttrs>("StringNormalizer", FusionKind::opaque, 1, 1,
                                                  infer_normalizer, run_normalizer));
}

}  // namespace collage::ops
