// RegexFullMatch (ONNX 20): whether each string matches a pattern as a whole, with RE2 (the
// library ONNX Runtime uses, so both accept the same patterns).
#include <re2/re2.h>

#include "collage/ops/text.h"
#include "core/str_cat.h"
#include "ops/elementwise_common.h"
#include "ops/op_sets.h"

namespace collage::ops {
namespace {

// The compiled pattern, or an error with RE2's reason.
absl::StatusOr<std::unique_ptr<RE2>> compile(const std::string& pattern) {
  RE2::Options options;
  options.set_log_errors(false);  // RE2 would print to stderr; the error is returned instead
  auto re = std::make_unique<RE2>(pattern, options);
  if (!re->ok())
    return absl::InvalidArgumentError(
        str_cat("pattern '", pattern, "' is not a valid RE2 regular expression: ", re->error()));
  return re;
}

absl::Status infer_regex(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 0, type_bit(DType::str)); !s.ok()) return s;
  auto re = compile(ctx.attrs<RegexFullMatchAttrs>().pattern);
  if (!re.ok()) return ctx.error(str_cat(re.status().message()));
  ctx.set_output(0, {DType::boolean, ctx.input(0).shape});
  return absl::OkStatus();
}

absl::Status run_regex(const KernelArgs& k) {
  auto re = compile(k.get<RegexFullMatchAttrs>().pattern);
  if (!re.ok()) return re.status();
  const Tensor& x = k.inputs[0];
  for (int64_t i = 0; i < x.numel(); ++i)
    k.outputs[0].data<uint8_t>()[i] = RE2::FullMatch(x.data<std::string>()[i], **re) ? 1 : 0;
  return absl::OkStatus();
}

}  // namespace

void register_regex_full_match_op(OpRegistry& r) {
  OpDef def = make_op<RegexFullMatchAttrs>("RegexFullMatch", FusionKind::elementwise, 1, 1,
                                           infer_regex, run_regex);
  def.strings = true;
  add_builtin_op(r, std::move(def));
}

}  // namespace collage::ops
