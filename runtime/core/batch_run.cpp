// LoadedModule::run_batch: a run of a dynamic-batch artifact. The batch is read off the inputs;
// the plan compiled for it runs on the caller's buffers, or the next larger plan runs on copies
// padded with zero rows and the first rows of its outputs are copied out.
#include <cstdlib>
#include <cstring>

#include "loaded_module.h"

namespace collage::rt {
namespace {

// A byte buffer released with free(); 64-byte aligned like an arena.
struct Buffer {
  explicit Buffer(uint64_t bytes)
      : data(static_cast<uint8_t*>(std::aligned_alloc(64, (bytes + 127) / 64 * 64))) {
    if (data) std::memset(data, 0, (bytes + 127) / 64 * 64);
  }
  ~Buffer() { std::free(data); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept : data(o.data) { o.data = nullptr; }
  uint8_t* data;
};

// `info` with `batch` rows on `axis` (-1: unchanged).
TensorInfo with_batch(const TensorInfo& info, int32_t axis, int64_t batch) {
  TensorInfo t = info;
  if (axis < 0 || info.shape[axis] == batch) return t;
  t.bytes = t.bytes / static_cast<uint64_t>(info.shape[axis]) * static_cast<uint64_t>(batch);
  t.shape[axis] = batch;
  return t;
}

// Copies the first `rows` rows along `axis` between a tensor with `rows` of them (`small`) and
// one of shape `shape` (`large`), in either direction.
void copy_rows(const std::vector<int64_t>& shape, int32_t axis, int64_t rows, size_t esize,
               uint8_t* large, uint8_t* small, bool to_large) {
  uint64_t outer = 1, inner = esize;
  for (int32_t d = 0; d < static_cast<int32_t>(shape.size()); ++d) {
    if (d < axis) outer *= static_cast<uint64_t>(shape[d]);
    if (d > axis) inner *= static_cast<uint64_t>(shape[d]);
  }
  const uint64_t block = static_cast<uint64_t>(rows) * inner;
  const uint64_t stride = static_cast<uint64_t>(shape[axis]) * inner;
  for (uint64_t o = 0; o < outer; ++o) {
    if (to_large) std::memcpy(large + o * stride, small + o * block, block);
    else std::memcpy(small + o * block, large + o * stride, block);
  }
}

}  // namespace

Status LoadedModule::run_batch(const DLTensor* inputs, const DLTensor* outputs) const {
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
  const PlanRun& r = run_for(batch);
  const Program& p = *r.program;
  const bool padded = p.batch != batch;
  std::vector<void*> in(p.inputs.size()), out(p.outputs.size());
  std::vector<Buffer> buffers;
  buffers.reserve(in.size() + out.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const int32_t axis = d.input_axes[i];
    const TensorInfo& plan = p.tensors[p.inputs[i]];
    COLLAGE_RT_RETURN_IF_ERROR(
        check_tensor("input", i, with_batch(plan, axis, batch), inputs[i], &in[i]));
    if (!padded || axis < 0) continue;
    Buffer& b = buffers.emplace_back(plan.bytes);
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
    Buffer& b = buffers.emplace_back(plan.bytes);
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
