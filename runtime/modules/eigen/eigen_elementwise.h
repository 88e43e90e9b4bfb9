// The elementwise program engine of the Eigen module: runs an EwProgram in place on a range of a
// dense output, as the epilogue of matmul/conv kernels and as the elementwise kernel itself.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "eigen_kernel.h"

namespace collage::rt_eigen {

class EwEngine {
 public:
  // Validates `program` for an output of `numel` elements against the kernel's operands, and
  // merges dimensions along which every operand is laid out contiguously (or broadcast), so that
  // most programs run over long rows. Returns the error text, empty on success.
  std::string init(const EwProgram& program, const KernelSetup& setup, int64_t numel);

  bool empty() const { return steps_.empty(); }
  // Runs the program on elements [begin, end) of `out` (row-major flat indices). Each element is
  // computed the same way whatever range it is part of.
  void apply(float* out, void* const* args, int64_t begin, int64_t end) const;

 private:
  struct Operand {
    OperandRef ref;
    std::vector<int64_t> strides;  // one per entry of dims_
  };
  std::vector<int64_t> dims_;  // merged dimensions, innermost last (never empty)
  std::vector<Operand> operands_;
  std::vector<EwStep> steps_;
  std::vector<const float*> constants_;
};

}  // namespace collage::rt_eigen
