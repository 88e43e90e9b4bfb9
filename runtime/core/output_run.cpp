// LoadedModule::run_outputs: a run whose outputs the module allocates, so that outputs of a size
// only the run decides (data-dependent shapes, a dynamic batch) can be returned.
#include <algorithm>
#include <cstring>
#include <new>

#include "loaded_module.h"

namespace collage::rt {
namespace {

DLTensor view_of(LoadedModule::Output& o) {
  DLTensor t{};
  t.data = o.data.get();
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(o.shape.size());
  t.dtype = dlpack_dtype(o.dtype);
  t.shape = o.shape.data();
  return t;
}

// A string output copied from a graph input or a constant points at the caller's or the
// module's bytes: copied into the run's, which the output keeps.
Status own_strings(LoadedModule::Output& o, StringBytes& strings) {
  auto* s = reinterpret_cast<collage_string_t*>(o.data.get());
  uint64_t n = 1;
  for (int64_t d : o.shape) n *= static_cast<uint64_t>(d);
  for (uint64_t i = 0; i < n; ++i) {
    if (!s[i].size) continue;
    char* bytes = static_cast<char*>(strings.allocate(s[i].size));
    if (!bytes) return error(Code::internal, "run: out of memory for a string output");
    std::memcpy(bytes, s[i].data, s[i].size);
    s[i].data = bytes;
  }
  return Status();
}

uint64_t bytes_of(int32_t dtype, const std::vector<int64_t>& shape) {
  uint64_t n = dtype_size(dtype);
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

}  // namespace

Status LoadedModule::run_outputs(const DLTensor* inputs, int32_t num_inputs,
                                 std::vector<Output>* outputs) const {
  const Program& p = program_;
  if (num_inputs != static_cast<int32_t>(p.inputs.size()))
    return error(Code::invalid_argument, "run: the model takes ", p.inputs.size(), " inputs, got ",
                 num_inputs);
  if (num_inputs && !inputs) return error(Code::invalid_argument, "run: null tensor array");
  outputs->clear();
  outputs->resize(p.outputs.size());
  // A dynamic-batch artifact's outputs take the batch of its inputs (run_batch checks it).
  int64_t batch = -1;
  for (size_t i = 0; p.dynamic_batch.max && i < p.inputs.size(); ++i) {
    const int32_t axis = p.dynamic_batch.input_axes[i];
    if (axis >= 0 && inputs[i].shape && inputs[i].ndim > axis) batch = inputs[i].shape[axis];
  }
  std::vector<DLTensor> views(p.outputs.size());
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    const TensorInfo& t = p.tensors[p.outputs[i]];
    Output& o = (*outputs)[i];
    o.dtype = t.dtype;
    if (t.storage == Storage::dynamic) continue;  // sized by the run
    o.shape = t.shape;
    if (batch >= 0 && p.dynamic_batch.output_axes[i] >= 0)
      o.shape[p.dynamic_batch.output_axes[i]] = batch;
    o.data.reset(new (std::nothrow) uint8_t[std::max<uint64_t>(bytes_of(t.dtype, o.shape), 1)]);
    if (!o.data) return error(Code::internal, "run: out of memory for output ", i);
    views[i] = view_of(o);
  }
  if (p.dynamic_batch.max) {
    if (p.has_strings)
      return error(Code::unsupported, "run: a model with strings and a batch range");
    return run_batch(inputs, views.data());
  }

  std::vector<void*> in(p.inputs.size()), out(p.outputs.size(), nullptr);
  for (size_t i = 0; i < in.size(); ++i)
    COLLAGE_RT_RETURN_IF_ERROR(check_tensor("input", i, p.tensors[p.inputs[i]], inputs[i], &in[i]));
  for (size_t i = 0; i < out.size(); ++i) out[i] = (*outputs)[i].data.get();
  DynamicValues dynamic;
  std::shared_ptr<StringBytes> strings;
  if (p.has_strings) {
    strings = std::make_shared<StringBytes>();
    for (Output& o : *outputs)
      if (o.dtype == kStringDType) o.strings = strings;
  }
  COLLAGE_RT_RETURN_IF_ERROR(execute(*runs_.back(), in, out, &dynamic, strings.get()));
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    const TensorInfo& t = p.tensors[p.outputs[i]];
    if (t.dtype == kStringDType &&
        (t.storage == Storage::input || t.storage == Storage::constant))
      COLLAGE_RT_RETURN_IF_ERROR(own_strings((*outputs)[i], *strings));
  }
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    const uint32_t id = p.outputs[i];
    if (p.tensors[id].storage != Storage::dynamic) continue;
    DynamicValue& v = dynamic[id];
    Output& o = (*outputs)[i];
    o.shape = v.shape;
    if (v.data) {
      o.data = std::move(v.data);
      continue;
    }
    // The same tensor listed again: the first listing took its buffer.
    for (size_t j = 0; j < i && !o.data; ++j)
      if (p.outputs[j] == id) {
        const uint64_t n = bytes_of(o.dtype, o.shape);
        o.data.reset(new (std::nothrow) uint8_t[std::max<uint64_t>(n, 1)]);
        if (!o.data) return error(Code::internal, "run: out of memory for output ", i);
        std::memcpy(o.data.get(), (*outputs)[j].data.get(), n);
      }
    if (!o.data) return error(Code::internal, "run: output ", i, " was not written");
  }
  return Status();
}

}  // namespace collage::rt
