// run_dynamic_step: a kernel whose shapes depend on data, run with its inputs' actual shapes and
// its outputs allocated as the kernel asks for them.
#include <algorithm>
#include <new>

#include "executor.h"

namespace collage::rt {
namespace {

// The largest tensor a kernel may ask for; beyond it an allocation is refused (a damaged or
// hostile input must not exhaust memory).
constexpr uint64_t kMaxBytes = uint64_t{1} << 40;

struct AllocContext {
  const ExecPlan* plan;
  const Frame* frame;
  const Step* step;
  std::string error;  // the first refusal
};

void* allocate_bytes(void* ctx, uint64_t size) {
  auto& c = *static_cast<AllocContext*>(ctx);
  void* p = c.frame->strings ? c.frame->strings->allocate(size) : nullptr;
  if (!p) c.error = cat("no memory for ", size, " bytes of strings");
  return p;
}

void* allocate(void* ctx, int32_t index, const int64_t* shape) {
  auto& c = *static_cast<AllocContext*>(ctx);
  const int32_t outputs = static_cast<int32_t>(c.step->args.size() - c.step->num_inputs);
  if (index < 0 || index >= outputs || !shape) {
    c.error = cat("asked for output ", index, " of ", outputs);
    return nullptr;
  }
  const ArgRef& a = c.step->args[c.step->num_inputs + index];
  const TensorInfo& t = *a.info;
  uint64_t bytes = dtype_size(t.dtype);
  for (size_t d = 0; d < t.shape.size(); ++d) {
    if (shape[d] < 0 || (t.shape[d] >= 0 && shape[d] != t.shape[d])) {
      c.error = cat("output ", index, " '", t.name, "' came out as ",
                    type_string(t.dtype, {shape, t.shape.size()}), ", the plan says ",
                    type_string(t.dtype, t.shape));
      return nullptr;
    }
    if (shape[d] != 0 && bytes > kMaxBytes / static_cast<uint64_t>(shape[d])) {
      c.error = cat("output ", index, " '", t.name, "' would take more than 2^40 bytes");
      return nullptr;
    }
    bytes *= static_cast<uint64_t>(shape[d]);
  }
  if (a.storage != Storage::dynamic) return arg_pointer(*c.plan, *c.frame, a);
  DynamicValue& v = (*c.frame->dynamic)[a.tensor];
  v.shape.assign(shape, shape + t.shape.size());
  // Zero bytes still get a valid pointer; new[] of the type's alignment is enough for kernels
  // that read elements one by one.
  v.data.reset(new (std::nothrow) uint8_t[std::max<uint64_t>(bytes, 1)]);
  if (!v.data) c.error = cat("out of memory for output ", index, " (", bytes, " bytes)");
  return v.data.get();
}

}  // namespace

void* StringBytes::allocate(uint64_t size) {
  if (size > kMaxBytes - total_) return nullptr;
  char* p = new (std::nothrow) char[std::max<uint64_t>(size, 1)];
  if (!p) return nullptr;
  blocks_.emplace_back(p);
  total_ += size;
  return p;
}

Status run_dynamic_step(const ExecPlan& plan, const Frame& frame, const Step& step) {
  std::vector<collage_rt_tensor_t> inputs;
  for (uint32_t i = 0; i < step.num_inputs; ++i) {
    const ArgRef& a = step.args[i];
    const int64_t* shape = a.storage == Storage::dynamic
                               ? (*frame.dynamic)[a.tensor].shape.data()
                               : a.info->shape.data();
    inputs.push_back({arg_pointer(plan, frame, a), shape});
  }
  AllocContext ctx{&plan, &frame, &step, ""};
  const int32_t n = static_cast<int32_t>(inputs.size());
  Status s = step.strings
                 ? step.kernel->run_strings(inputs.data(), n, allocate, allocate_bytes, &ctx)
                 : step.kernel->run_dynamic(inputs.data(), n, allocate, &ctx);
  if (!ctx.error.empty())
    return error(Code::kernel_failed, "kernel ", step.kernel_index, ": ", ctx.error,
                 s.ok() ? "" : cat(" (", s.message(), ")"));
  return s;
}

}  // namespace collage::rt
