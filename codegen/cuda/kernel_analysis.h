// What the CUDA printer needs to know about a kernel before printing it: the launch configuration
// its bindings imply, which allocations are __shared__, which parameters are both read and
// written, after checking that the loop IR is one a GPU kernel can have.
#pragma once

#include <set>

#include "absl/status/statusor.h"
#include "codegen/cuda/cuda_codegen.h"
#include "collage/loop_ir.h"

namespace collage::codegen::cuda::detail {

struct KernelInfo {
  LaunchConfig launch;
  std::set<const te::BufferNode*> shared;      // allocations written by the threads together
  std::set<const te::BufferNode*> read_write;  // parameters the kernel both loads and stores
  // i64 values can be computed as 32-bit ints: no i64 buffers, no conversions to i64 from
  // floating point, and every buffer size, loop extent and i64 constant below 2^30 (so index
  // sums and products of a loop variable with a stride stay below 2^31).
  bool index32 = false;
};

// Index 0..2 of "x"/"y"/"z" in a "blockIdx.x"-style tag, and whether it names a block index.
struct ThreadTag {
  bool block = false;
  int dim = 0;
};
ThreadTag parse_thread_tag(const std::string& tag);

// Checks `f` (see generate_cuda for the errors) and analyses it.
absl::StatusOr<KernelInfo> analyse_kernel(const te::PrimFunc& f);

// True when `s` mentions variable `v` anywhere (expressions, bounds, indices).
bool stmt_uses_var(const te::Stmt& s, const te::VarNode* v);

}  // namespace collage::codegen::cuda::detail
