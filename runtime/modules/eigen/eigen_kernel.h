// Internal interface of the Eigen runtime module: validated kernel descriptors, operand lookup,
// the kernel base class and the factory of each kernel kind.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collage/runtime_module.h"
#include "eigen_params.h"

namespace collage::rt_eigen {

// Shape and element type of one argument or constant.
struct TensorInfo {
  int32_t dtype = COLLAGE_DTYPE_F32;
  std::vector<int64_t> shape;
  int64_t numel = 0;
};

// The argument and constant descriptors of one kernel, checked once: ranks and extents are
// sane, element counts do not overflow, constant pointers are present.
class KernelSetup {
 public:
  // Fills `out` from `desc`; returns the error text, empty on success.
  static std::string from_desc(const collage_kernel_desc_t& desc, KernelSetup& out);

  int32_t num_inputs() const { return num_inputs_; }
  int32_t num_args() const { return static_cast<int32_t>(args_.size()); }
  const TensorInfo& arg(int32_t i) const { return args_[i]; }
  const std::vector<const float*>& constant_data() const { return constant_data_; }

  // Checks that `ref` names an f32 input argument or constant holding at least `extent`
  // elements; `what` names the operand in the message.
  std::string check_operand(const OperandRef& ref, int64_t extent, const char* what) const;
  // Checks that the kernel has exactly one output, f32, of `numel` elements.
  std::string check_single_output(int64_t numel) const;

 private:
  int32_t num_inputs_ = 0;
  std::vector<TensorInfo> args_;
  std::vector<TensorInfo> constants_;
  std::vector<const float*> constant_data_;
};

// Resolves operand references to buffers at run time.
class OperandTable {
 public:
  explicit OperandTable(std::vector<const float*> constants) : constants_(std::move(constants)) {}
  const float* get(const OperandRef& ref, void* const* args) const {
    return ref.source == OperandSource::arg ? static_cast<const float*>(args[ref.index])
                                            : constants_[ref.index];
  }

 private:
  std::vector<const float*> constants_;
};

// A kernel's work is cut into a fixed number of units when it is created, from the shapes alone.
// A task runs a contiguous range of units, and each unit computes the same way whatever range it
// is in, so outputs are bitwise identical for every task count. run() may be called from several
// threads at once on disjoint unit ranges.
class EigenKernel {
 public:
  virtual ~EigenKernel() = default;
  int64_t units() const { return units_; }
  // The output is args[num_inputs]; the unit range is within [0, units()).
  virtual void run(void* const* args, int64_t unit_begin, int64_t unit_end) const = 0;

 protected:
  int64_t units_ = 0;
};

using KernelPtr = std::unique_ptr<EigenKernel>;

// Each creates a kernel from its parameters; returns the error text, empty on success.
std::string create_matmul_kernel(const KernelSetup& s, const uint8_t* params, size_t size,
                                 KernelPtr& out);
std::string create_conv_kernel(const KernelSetup& s, const uint8_t* params, size_t size,
                               KernelPtr& out);
std::string create_elementwise_kernel(const KernelSetup& s, const uint8_t* params, size_t size,
                                      KernelPtr& out);
std::string create_reduce_kernel(const KernelSetup& s, const uint8_t* params, size_t size,
                                 KernelPtr& out);
std::string create_softmax_kernel(const KernelSetup& s, const uint8_t* params, size_t size,
                                  KernelPtr& out);

// Largest extent of one dimension and of any element count a kernel accepts (2^40), so that
// products of a few of them cannot overflow int64 before they are checked.
inline constexpr int64_t kMaxExtent = int64_t{1} << 40;

// a * b, or -1 when either is negative or the product exceeds kMaxExtent.
int64_t checked_mul(int64_t a, int64_t b);
// Product of `dims`, or -1 when a dimension is negative or the product exceeds kMaxExtent.
int64_t checked_numel(const std::vector<int64_t>& dims);
inline int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}
inline int64_t round_up(int64_t a, int64_t b) {
  return ceil_div(a, b) * b;
}

// How finely work is cut into units: about this many multiply-adds (or element operations) per
// unit, and at most kMaxUnits units, enough to keep a many-core machine busy without paying a
// task's overhead for a few microseconds of work.
inline constexpr double kUnitWork = 1 << 20;
inline constexpr int64_t kMaxUnits = 64;
// The number of units worth cutting `work` into, in [1, kMaxUnits].
int64_t units_for_work(double work);

}  // namespace collage::rt_eigen
