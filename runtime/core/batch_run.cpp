// LoadedModule::batch_of and run_batch: a run of a dynamic-batch artifact. The batch is read off
// the inputs; the plan compiled for it runs on the caller's buffers, or the next larger plan runs
// on copies padded with zero rows and the first rows of its outputs are copied out.
#include "loaded_module.h"
#include "row_copy.h"

namespace collage::rt {

Status LoadedModule::batch_of(const DLTensor* inputs, int64_t* out) const {
  const Program& root = program_;
  const DynamicBatch& d = root.dynamic_batch;
  int64_t batch = -1;
  size_t first = 0;
  void* unused = nullptr;
  for (size_t i = 0; i < root.inputs.size(); ++i) {
    const int32_t axis = d.input_axes[i];
    const DLTensor& t = inputs[i];
    if (axis < 0) continue;
    if (t.ndim != static_cast<int32_t>(root.tensors[root.inputs[i]].shape.size()) || !t.shape)
      return check_tensor("input", i, root.tensors[root.inputs[i]], t, &unused);
    if (batch >= 0 && t.shape[axis] != batch)
      return error(Code::invalid_argument, "input ", i, " '", root.tensors[root.inputs[i]].name,
                   "' has a batch of ", t.shape[axis], ", input ", first, " one of ", batch,
                   ": every batched input must have the same");
    if (batch < 0) first = i;
    batch = t.shape[axis];
  }
  if (batch < d.min || batch > d.max)
    return error(Code::invalid_argument, "input ", first, " '",
                 root.tensors[root.inputs[first]].name, "' has a batch of ", batch,
                 "; the artifact was compiled for batches ", d.min, " to ", d.max);
  *out = batch;
  return Status();
}

Status LoadedModule::run_batch(const DLTensor* inputs, const DLTensor* outputs) const {
  const DynamicBatch& d = program_.dynamic_batch;
  int64_t batch = -1;
  COLLAGE_RT_RETURN_IF_ERROR(batch_of(inputs, &batch));
  const PlanRun& r = run_for(batch);
  const Program& p = *r.program;
  COLLAGE_RT_RETURN_IF_ERROR(check_caller_outputs(p));
  const bool padded = p.batch != batch;
  std::vector<void*> in(p.inputs.size()), out(p.outputs.size());
  std::vector<RowBuffer> buffers;
  buffers.reserve(in.size() + out.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const int32_t axis = d.input_axes[i];
    const TensorInfo& plan = p.tensors[p.inputs[i]];
    COLLAGE_RT_RETURN_IF_ERROR(
        check_tensor("input", i, with_batch(plan, axis, batch), inputs[i], &in[i]));
    if (!padded || axis < 0) continue;
    RowBuffer& b = buffers.emplace_back(plan.bytes);
    if (!b.data) return error(Code::internal, "run: out of memory padding input ", i);
    copy_rows(plan.shape, axis, batch, dtype_size(plan.dtype), b.data,
              static_cast<uint8_t*>(in[i]), /*to_large=*/true);
    in[i] = b.data;
  }
  std::vector<void*> caller(out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const TensorInfo& plan = p.tensors[p.outputs[i]];
    COLLAGE_RT_RETURN_IF_ERROR(check_tensor(
        "output", i, with_batch(plan, d.output_axes[i], batch), outputs[i], &caller[i]));
    out[i] = caller[i];
    if (!padded || d.output_axes[i] < 0) continue;
    RowBuffer& b = buffers.emplace_back(plan.bytes);
    if (!b.data) return error(Code::internal, "run: out of memory for padded output ", i);
    out[i] = b.data;
  }
  COLLAGE_RT_RETURN_IF_ERROR(execute(r, in, out));
  for (size_t i = 0; padded && i < out.size(); ++i) {
    const int32_t axis = d.output_axes[i];
    if (axis < 0) continue;
    const TensorInfo& plan = p.tensors[p.outputs[i]];
    copy_rows(plan.shape, axis, batch, dtype_size(plan.dtype), static_cast<uint8_t*>(out[i]),
              static_cast<uint8_t*>(caller[i]), /*to_large=*/false);
  }
  return Status();
}

}  // namespace collage::rt
