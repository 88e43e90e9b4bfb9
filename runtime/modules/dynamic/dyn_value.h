// Tensors inside the dynamic module and the outputs its operators make, with the helpers the
// operator files share (element sizes, strides, errors).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "collage/runtime_module.h"
#include "dyn_params.h"

namespace collage::rt_dynamic {

// A failure the kernel reports as its error message (bad indices, shapes that do not fit, ...).
struct KernelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Bytes of one element of a collage_dtype_t; throws for a type the module does not know.
size_t element_size(int32_t dtype);
// "f32[3x?]"-style text.
std::string type_text(int32_t dtype, const std::vector<int64_t>& shape);
int64_t numel(const std::vector<int64_t>& shape);
std::vector<int64_t> strides_of(const std::vector<int64_t>& shape);
// An axis in [-rank, rank) mapped into [0, rank); throws naming `what` otherwise.
int64_t axis_in(int64_t axis, int64_t rank, const char* what);

struct Value {
  int32_t dtype = 0;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;
  int64_t numel() const { return rt_dynamic::numel(shape); }
  template <typename T>
  const T* as() const {
    return reinterpret_cast<const T*>(data);
  }
};

// Element i of an i32 or i64 tensor (indices, shape-like inputs); throws for another type.
int64_t int_at(const Value& v, int64_t i);

// The outputs of one run: each buffer asked of the runtime once its shape is known.
class Outputs {
 public:
  // `ranks`: each output's rank in the plan (the runtime's allocator reads that many dimensions).
  Outputs(collage_rt_alloc_fn alloc, void* ctx, std::vector<int32_t> dtypes,
          std::vector<size_t> ranks)
      : alloc_(alloc), ctx_(ctx), dtypes_(std::move(dtypes)), ranks_(std::move(ranks)) {}
  size_t count() const { return dtypes_.size(); }
  int32_t dtype(size_t i) const { return dtypes_[i]; }
  // The buffer of output i of `shape`; throws when `shape` has another rank than the plan's
  // (Squeeze without axes, say, removing a run-time dimension of size 1) or the runtime refuses it.
  uint8_t* make(size_t i, const std::vector<int64_t>& shape);
  template <typename T>
  T* make_as(size_t i, const std::vector<int64_t>& shape) {
    return reinterpret_cast<T*>(make(i, shape));
  }

 private:
  collage_rt_alloc_fn alloc_;
  void* ctx_;
  std::vector<int32_t> dtypes_;
  std::vector<size_t> ranks_;
};

// The operator families (dyn_ops_*.cpp): each runs `p.op` when it is one of its own, and
// returns false otherwise.
bool run_data_dependent_op(const DynParams& p, const std::vector<Value>& in, Outputs& out);
bool run_layout_op(const DynParams& p, const std::vector<Value>& in, Outputs& out);
bool run_math_op(const DynParams& p, const std::vector<Value>& in, Outputs& out);
bool run_reduce_op(const DynParams& p, const std::vector<Value>& in, Outputs& out);
bool run_generate_op(const DynParams& p, const std::vector<Value>& in, Outputs& out);
bool run_pad_split_op(const DynParams& p, const std::vector<Value>& in, Outputs& out);
bool run_resize_op(const DynParams& p, const std::vector<Value>& in, Outputs& out);
bool run_sort_op(const DynParams& p, const std::vector<Value>& in, Outputs& out);
bool run_ml_op(const DynParams& p, const std::vector<Value>& in, Outputs& out);
bool run_value_shaped_op(const DynParams& p, const std::vector<Value>& in, Outputs& out);
bool run_scan_op(const DynParams& p, const std::vector<Value>& in, Outputs& out);
bool run_unpool_tfidf_op(const DynParams& p, const std::vector<Value>& in, Outputs& out);
bool run_recurrent_op(const DynParams& p, const std::vector<Value>& in, Outputs& out);
bool run_matmul_op(const DynParams& p, const std::vector<Value>& in, Outputs& out);

// The scans and scatters (dyn_ops_scan.cpp, is_scan_op), which also run on planned buffers split
// into tasks: how many tasks a kernel on input shape `shape` has (1 for a scatter), and task
// `task` of `tasks` writing into output buffer `y` (a scatter runs as task 0 of 1 only).
int32_t scan_task_count(DynOp op, const std::vector<int64_t>& shape);
void run_scan_task(const DynParams& p, const std::vector<Value>& in, void* y, int32_t task,
                   int32_t tasks);

}  // namespace collage::rt_dynamic
