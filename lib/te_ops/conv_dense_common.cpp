// Shared by the conv and dense schedules: lanes, signatures, epilogue inlining, knob lookup.
#include "te_ops/conv_dense_common.h"

#include <algorithm>

#include "core/str_cat.h"
#include "collage/tuning_log.h"

namespace collage::te_ops::detail {
namespace {

bool contains(const std::vector<te::Tensor>& v, const te::Tensor& t) {
  return std::any_of(v.begin(), v.end(), [&](const te::Tensor& x) { return x.same_as(t); });
}

}  // namespace

int f32_lanes(const codegen::TargetSpec& target) {
  return std::max(target.vector_bytes() / 4, 4);
}

int accumulator_budget(const codegen::TargetSpec& target) {
  return target.vector_registers() * 3 / 4;
}

std::string type_signature(DType dtype, const Shape& shape) {
  std::string s = str_cat(dtype_name(dtype), "[");
  for (size_t i = 0; i < shape.size(); ++i) s += str_cat(i ? "," : "", shape[i]);
  return s + "]";
}

std::string target_signature(const codegen::TargetSpec& target) {
  return str_cat("|target=", target.cpu);
}

bool is_constant_input(const AnchorGroup& g, const te::Tensor& t) {
  for (size_t i = 0; i < g.inputs.size(); ++i)
    if (g.inputs[i].same_as(t)) return i < g.input_is_constant.size() && g.input_is_constant[i];
  return false;
}

Epilogue plan_epilogue(te::Schedule& s, const AnchorGroup& g, const te::Tensor& reduction,
                       const std::vector<te::Tensor>& producers) {
  Epilogue e;
  if (g.outputs.size() == 1 && g.outputs[0].same_as(reduction)) {
    e.out = reduction;
    e.acc = s.cache_write(reduction);
    return e;
  }
  for (const te::Tensor& t : s.stage_tensors()) {
    if (t.op_kind() != te::OpKind::compute || t.same_as(reduction) || contains(producers, t) ||
        contains(g.outputs, t))
      continue;
    s[t].compute_inline();
  }
  e.acc = reduction;
  if (g.outputs.size() == 1) e.out = g.outputs[0];
  return e;
}

tune::Knobs knobs_for(const AnchorGroup& g, const tune::ScheduleTemplate& t) {
  tune::Knobs k = t.defaults;
  if (g.tuning)
    if (const tune::Knobs* tuned = g.tuning->find(t.signature))
      for (const auto& [name, value] : *tuned) k[name] = value;
  return k;
}

int64_t pick_at_most(const std::vector<int64_t>& candidates, int64_t want) {
  int64_t best = -1;
  for (int64_t c : candidates)
    if (c <= want && c > best) best = c;
  if (best > 0) return best;
  return *std::min_element(candidates.begin(), candidates.end());
}

std::vector<int64_t> divisors(int64_t n, int64_t limit) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= std::min(n, limit); ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

std::vector<int64_t> at_most(std::vector<int64_t> values, int64_t limit) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  std::vector<int64_t> out;
  for (int64_t v : values)
    if (v <= limit) out.push_back(v);
  if (out.empty()) out.push_back(values.front());
  return out;
}

}  // namespace collage::te_ops::detail
