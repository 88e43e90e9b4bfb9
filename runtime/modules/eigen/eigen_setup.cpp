// Validation of kernel descriptors and operand references for the Eigen runtime module.
#include "eigen_kernel.h"

namespace collage::rt_eigen {
namespace {

constexpr int32_t kMaxRank = 16;
constexpr int32_t kMaxTensors = 1 << 16;

std::string read_tensor(const collage_tensor_desc_t& d, const std::string& what, TensorInfo& t) {
  if (d.dtype < COLLAGE_DTYPE_F32 || d.dtype > COLLAGE_DTYPE_BOOL)
    return what + " has unknown dtype " + std::to_string(d.dtype);
  if (d.rank < 0 || d.rank > kMaxRank)
    return what + " has rank " + std::to_string(d.rank) + " (at most " + std::to_string(kMaxRank) +
           " supported)";
  if (d.rank > 0 && d.shape == nullptr)
    return what + " has rank " + std::to_string(d.rank) + " but no shape";
  t.dtype = d.dtype;
  t.shape.assign(d.shape, d.shape + d.rank);
  t.numel = checked_numel(t.shape);
  if (t.numel < 0) return what + " has a negative or oversized shape";
  return {};
}

std::string shape_text(const std::vector<int64_t>& shape) {
  if (shape.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += 'x';
    s += std::to_string(shape[i]);
  }
  return s;
}

}  // namespace

int64_t checked_mul(int64_t a, int64_t b) {
  if (a < 0 || b < 0) return -1;
  if (a == 0 || b == 0) return 0;
  if (a > kMaxExtent / b) return -1;
  return a * b;
}

int64_t checked_numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    n = checked_mul(n, d);
    if (n < 0) return -1;
  }
  return n;
}

int64_t units_for_work(double work) {
  const double units = work / kUnitWork;
  if (!(units > 1)) return 1;
  return units >= static_cast<double>(kMaxUnits) ? kMaxUnits : static_cast<int64_t>(units);
}

std::string KernelSetup::from_desc(const collage_kernel_desc_t& desc, KernelSetup& out) {
  if (desc.num_args < 0 || desc.num_args > kMaxTensors || desc.num_inputs < 0 ||
      desc.num_inputs > desc.num_args)
    return "bad argument counts (" + std::to_string(desc.num_inputs) + " inputs of " +
           std::to_string(desc.num_args) + " arguments)";
  if (desc.num_args > 0 && desc.args == nullptr) return "argument descriptors are missing";
  if (desc.num_constants < 0 || desc.num_constants > kMaxTensors)
    return "bad constant count " + std::to_string(desc.num_constants);
  if (desc.num_constants > 0 && (desc.constant_descs == nullptr || desc.constants == nullptr))
    return "constant descriptors or data are missing";
  out.num_inputs_ = desc.num_inputs;
  out.args_.assign(desc.num_args, {});
  for (int32_t i = 0; i < desc.num_args; ++i)
    if (std::string e = read_tensor(desc.args[i], "argument " + std::to_string(i), out.args_[i]);
        !e.empty())
      return e;
  out.constants_.assign(desc.num_constants, {});
  out.constant_data_.assign(desc.num_constants, nullptr);
  for (int32_t i = 0; i < desc.num_constants; ++i) {
    const std::string what = "constant " + std::to_string(i);
    if (std::string e = read_tensor(desc.constant_descs[i], what, out.constants_[i]); !e.empty())
      return e;
    if (desc.constants[i] == nullptr && out.constants_[i].numel > 0) return what + " has no data";
    out.constant_data_[i] = static_cast<const float*>(desc.constants[i]);
  }
  return {};
}

std::string KernelSetup::check_operand(const OperandRef& ref, int64_t extent,
                                       const char* what) const {
  const TensorInfo* t = nullptr;
  std::string name;
  if (ref.source == OperandSource::arg) {
    name = "argument " + std::to_string(ref.index);
    if (ref.index >= static_cast<uint32_t>(num_inputs_))
      return std::string(what) + ": " + name + " is not an input (the kernel has " +
             std::to_string(num_inputs_) + ")";
    t = &args_[ref.index];
  } else {
    name = "constant " + std::to_string(ref.index);
    if (ref.index >= constants_.size())
      return std::string(what) + ": " + name + " does not exist (the kernel has " +
             std::to_string(constants_.size()) + ")";
    t = &constants_[ref.index];
  }
  if (t->dtype != COLLAGE_DTYPE_F32)
    return std::string(what) + ": " + name + " has dtype " + std::to_string(t->dtype) +
           ", only f32 is supported";
  if (t->numel < extent)
    return std::string(what) + ": " + name + " of shape " + shape_text(t->shape) + " holds " +
           std::to_string(t->numel) + " elements, " + std::to_string(extent) + " are read";
  return {};
}

std::string KernelSetup::check_single_output(int64_t numel) const {
  if (num_args() != num_inputs_ + 1)
    return "expected exactly one output, got " + std::to_string(num_args() - num_inputs_);
  const TensorInfo& o = args_[num_inputs_];
  if (o.dtype != COLLAGE_DTYPE_F32)
    return "output has dtype " + std::to_string(o.dtype) + ", only f32 is supported";
  if (o.numel != numel)
    return "output of shape " + shape_text(o.shape) + " has " + std::to_string(o.numel) +
           " elements, the parameters describe " + std::to_string(numel);
  return {};
}

}  // namespace collage::rt_eigen
