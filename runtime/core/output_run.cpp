// LoadedModule::run_outputs: a run whose outputs the module allocates, so that outputs of a size
// only the run decides (data-dependent shapes, a dynamic batch) can be returned.
#include <algorithm>
#include <cstring>
#include <new>

#include "loaded_module.h"
#include "row_copy.h"

namespace collage::rt {
namespace {

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

// `o`, a padded plan's output, cut to its first `rows` rows along `axis` (str elements keep
// pointing at the run's bytes).
Status keep_rows(LoadedModule::Output& o, int32_t axis, int64_t rows) {
  std::vector<int64_t> shape = o.shape;
  shape[axis] = rows;
  std::unique_ptr<uint8_t[]> kept(new (std::nothrow)
                                      uint8_t[std::max<uint64_t>(bytes_of(o.dtype, shape), 1)]);
  if (!kept) return error(Code::internal, "run: out of memory for an output");
  copy_rows(o.shape, axis, rows, dtype_size(o.dtype), o.data.get(), kept.get(),
            /*to_large=*/false);
  o.shape = std::move(shape);
  o.data = std::move(kept);
  return Status();
}

}  // namespace

Status LoadedModule::run_outputs(const DLTensor* inputs, int32_t num_inputs,
                                 std::vector<Output>* outputs) const {
  const Program& root = program_;
  if (num_inputs != static_cast<int32_t>(root.inputs.size()))
    return error(Code::invalid_argument, "run: the model takes ", root.inputs.size(),
                 " inputs, got ", num_inputs);
  if (num_inputs && !inputs) return error(Code::invalid_argument, "run: null tensor array");
  // A dynamic-batch artifact runs the plan of its inputs' batch, or the next larger one on
  // inputs padded with zero rows (never for a plan with data-dependent shapes: the loader
  // checks it), whose outputs' first rows are kept.
  const DynamicBatch& d = root.dynamic_batch;
  int64_t batch = -1;
  if (d.max) COLLAGE_RT_RETURN_IF_ERROR(batch_of(inputs, &batch));
  const PlanRun& r = d.max ? run_for(batch) : *runs_.back();
  const Program& p = *r.program;
  const bool padded = d.max && p.batch != batch;
  outputs->clear();
  outputs->resize(p.outputs.size());

  std::vector<void*> in(p.inputs.size()), out(p.outputs.size(), nullptr);
  std::vector<RowBuffer> pads;
  pads.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const int32_t axis = d.max ? d.input_axes[i] : -1;
    const TensorInfo& plan = p.tensors[p.inputs[i]];
    COLLAGE_RT_RETURN_IF_ERROR(
        check_tensor("input", i, with_batch(plan, axis, batch), inputs[i], &in[i]));
    if (!padded || axis < 0) continue;
    RowBuffer& b = pads.emplace_back(plan.bytes);
    if (!b.data) return error(Code::internal, "run: out of memory padding input ", i);
    copy_rows(plan.shape, axis, batch, dtype_size(plan.dtype), b.data,
              static_cast<uint8_t*>(in[i]), /*to_large=*/true);
    in[i] = b.data;
  }
  std::shared_ptr<StringBytes> strings;
  if (p.has_strings) strings = std::make_shared<StringBytes>();
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    const TensorInfo& t = p.tensors[p.outputs[i]];
    Output& o = (*outputs)[i];
    o.dtype = t.dtype;
    if (o.dtype == kStringDType) o.strings = strings;
    if (t.storage == Storage::dynamic) continue;  // sized by the run
    o.shape = t.shape;
    o.data.reset(new (std::nothrow) uint8_t[std::max<uint64_t>(bytes_of(t.dtype, o.shape), 1)]);
    if (!o.data) return error(Code::internal, "run: out of memory for output ", i);
    out[i] = o.data.get();
  }
  DynamicValues dynamic;
  COLLAGE_RT_RETURN_IF_ERROR(execute(r, in, out, &dynamic, strings.get()));
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    const TensorInfo& t = p.tensors[p.outputs[i]];
    if (t.dtype == kStringDType &&
        (t.storage == Storage::input || t.storage == Storage::constant))
      COLLAGE_RT_RETURN_IF_ERROR(own_strings((*outputs)[i], *strings));
  }
  for (size_t i = 0; padded && i < p.outputs.size(); ++i) {
    const int32_t axis = d.output_axes[i];
    if (axis < 0) continue;
    COLLAGE_RT_RETURN_IF_ERROR(keep_rows((*outputs)[i], axis, batch));
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
