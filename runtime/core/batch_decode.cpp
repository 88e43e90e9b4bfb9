// decode_dynamic_batch: the batch range of a dynamic-batch artifact and the plans of its smaller
// batches, each checked against the root plan.
#include "artifact_generated.h"
#include "plan_decode.h"

namespace collage::rt {
namespace {

namespace fb = collage::artifact::fb;

Status corrupt(const std::string& what) {
  return Status(Code::corrupt, "corrupt artifact plan: dynamic batch: " + what);
}

Status decode_axes(const char* role, const flatbuffers::Vector<int32_t>* axes,
                   const std::vector<uint32_t>& ids, const Program& root,
                   std::vector<int32_t>* out) {
  const uint32_t n = axes ? axes->size() : 0;
  if (n != ids.size()) return corrupt(cat(n, " ", role, " axes for ", ids.size(), " ", role, "s"));
  for (uint32_t i = 0; i < n; ++i) {
    const int32_t a = axes->Get(i);
    const TensorInfo& t = root.tensors[ids[i]];
    if (a < -1 || a >= static_cast<int32_t>(t.shape.size()) ||
        (a >= 0 && t.shape[a] != root.batch))
      return corrupt(cat(role, " ", i, " '", t.name, "': batch axis ", a, " of ",
                         type_string(t.dtype, t.shape), " at batch ", root.batch));
    out->push_back(a);
  }
  return Status();
}

// `v`'s graph inputs or outputs (`ids`) are the root's but for the batch axis.
Status check_like_root(const char* role, const Program& v, const std::vector<uint32_t>& ids,
                       const Program& root, const std::vector<uint32_t>& root_ids,
                       const std::vector<int32_t>& axes) {
  if (ids.size() != root_ids.size())
    return corrupt(cat("the plan of batch ", v.batch, " has ", ids.size(), " ", role, "s, the "
                       "root ", root_ids.size()));
  for (size_t i = 0; i < ids.size(); ++i) {
    const TensorInfo& t = v.tensors[ids[i]];
    const TensorInfo& r = root.tensors[root_ids[i]];
    bool same = t.dtype == r.dtype && t.shape.size() == r.shape.size();
    for (size_t d = 0; same && d < t.shape.size(); ++d)
      same = static_cast<int32_t>(d) == axes[i] ? t.shape[d] == v.batch : t.shape[d] == r.shape[d];
    if (!same)
      return corrupt(cat("the plan of batch ", v.batch, ": ", role, " ", i, " is ",
                         type_string(t.dtype, t.shape), ", the root's ",
                         type_string(r.dtype, r.shape)));
  }
  return Status();
}

}  // namespace

Status decode_dynamic_batch(const fb::Plan& plan, std::span<const uint8_t> constants,
                            Program* p) {
  const fb::DynamicBatch* d = plan.dynamic_batch();
  const uint32_t variants = plan.variants() ? plan.variants()->size() : 0;
  if (!d) {
    if (variants) return corrupt(cat(variants, " variant plans without a batch range"));
    return Status();
  }
  DynamicBatch& out = p->dynamic_batch;
  out.min = d->min();
  out.max = d->max();
  out.padded = d->padded();
  if (out.min < 1 || out.max < out.min || out.max != p->batch)
    return corrupt(cat("range ", out.min, "..", out.max, " with a root plan of batch ",
                       p->batch));
  if (p->has_dynamic && out.padded)
    return corrupt("a root plan with data-dependent shapes in a padded range (such a plan runs "
                   "its own batch only)");
  COLLAGE_RT_RETURN_IF_ERROR(decode_axes("input", d->input_axes(), p->inputs, *p,
                                         &out.input_axes));
  COLLAGE_RT_RETURN_IF_ERROR(decode_axes("output", d->output_axes(), p->outputs, *p,
                                         &out.output_axes));
  bool batched = false;
  for (int32_t a : out.input_axes) batched = batched || a >= 0;
  if (!batched) return corrupt("no input is batched");
  int64_t previous = out.min - 1;
  for (uint32_t i = 0; i < variants; ++i) {
    const fb::Plan& fv = *plan.variants()->Get(i);
    if (fv.dynamic_batch() || fv.variants())
      return corrupt(cat("variant ", i, " has variants of its own"));
    Program& v = p->variants.emplace_back();
    v.format_version = p->format_version;
    COLLAGE_RT_RETURN_IF_ERROR(decode_plan_table(fv, constants, &v));
    if (v.has_dynamic && out.padded)
      return corrupt(cat("variant ", i, " has data-dependent shapes in a padded range (such a "
                         "plan runs its own batch only)"));
    if (v.batch <= previous || v.batch >= out.max)
      return corrupt(cat("variant ", i, " runs batch ", v.batch, ", not between ", previous,
                         " and ", out.max));
    previous = v.batch;
    COLLAGE_RT_RETURN_IF_ERROR(
        check_like_root("input", v, v.inputs, *p, p->inputs, out.input_axes));
    COLLAGE_RT_RETURN_IF_ERROR(
        check_like_root("output", v, v.outputs, *p, p->outputs, out.output_axes));
  }
  if (!out.padded && static_cast<int64_t>(variants) != out.max - out.min)
    return corrupt(cat("unpadded range ", out.min, "..", out.max, " with ", variants + 1,
                       " plans: some batch has none"));
  return Status();
}

}  // namespace collage::rt
