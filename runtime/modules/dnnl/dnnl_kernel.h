// A dnnl kernel instance: the oneDNN primitives of one kernel, created once from its parameters,
// and run as a list of steps over the caller's buffers with per-call scratch taken from a small
// lock-free pool, so that one instance can run on several threads at once.
#pragma once

#include <atomic>
#include <functional>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "collage/runtime_module.h"
#include "dnnl_params.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace collage::rt_dnnl {

// Invalid kernel parameters. Only thrown while a kernel is created, and caught at the module's C
// boundary, where it becomes the error message (as do oneDNN's own dnnl::error exceptions).
struct ParamError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Where a step argument lives: a kernel argument (bound on every run), a constant (bound once),
// or a region of the per-call scratch block; `offset` bytes into it (a part of an argument or
// constant, e.g. one direction's slice of a recurrent layer's weights).
struct BufRef {
  enum class Kind : uint8_t { arg, constant, scratch };
  Kind kind = Kind::arg;
  int32_t index = 0;  // arg or constant index
  size_t offset = 0;  // byte offset
};

struct StepArg {
  int dnnl_arg = 0;
  dnnl::memory::desc md;
  BufRef buf;
};

// The memory objects of one step's arguments, by DNNL_ARG_*.
using StepMemory = std::unordered_map<int, dnnl::memory>;

// A oneDNN primitive, or (host set) a loop of our own over the step's arguments, or (lanes set)
// independent primitives run side by side, one OpenMP thread each; the arguments of lane `i`
// are those whose dnnl_arg is lane_arg(i, DNNL_ARG_*).
struct Step {
  dnnl::primitive prim;
  std::vector<StepArg> args;
  std::function<void(const StepMemory&)> host;
  std::vector<dnnl::primitive> lanes;
};

// The key of argument `dnnl_arg` of lane `lane` in a side-by-side step's arguments (DNNL_ARG_*
// values stay below 2^24).
constexpr int lane_arg(int lane, int dnnl_arg) { return (lane << 24) | dnnl_arg; }

// A constant that the kernel had to reorder at creation into the layout its primitive prefers
// (the compiler stores these instead, so that a kernel loaded from an artifact reorders nothing).
struct RepackedConstant {
  int32_t index = 0;
  Layout layout;
  const void* data = nullptr;
  size_t bytes = 0;
};

// An output whose primitive writes a layout other than the plain one of the kernel argument: the
// primitive writes `buf` (scratch) and a final reorder copies it to the argument.
struct OutputBinding {
  BufRef buf;
  dnnl::memory::desc md;
  bool reorder = false;
  BufRef arg;
  dnnl::memory::desc arg_md;
};

// Post-ops attached to a primitive's attributes, with the operands they read.
struct PostOpPlan {
  dnnl::post_ops ops;
  std::vector<std::pair<int, const Operand*>> binary;  // (post-op index, operand)
  const Operand* sum = nullptr;                        // the addend of the sum post-op
};

class DnnlKernel {
 public:
  // Validates `desc` and its parameters and creates every primitive, for `max_threads` OpenMP
  // threads when it is positive, else for the thread count the parameters ask for (else the
  // calling thread's). Throws ParamError or dnnl::error.
  explicit DnnlKernel(const collage_kernel_desc_t& desc, int32_t max_threads = 0);
  ~DnnlKernel();
  DnnlKernel(const DnnlKernel&) = delete;
  DnnlKernel& operator=(const DnnlKernel&) = delete;

  // Runs every step on `args` (num_args pointers, inputs then outputs). Thread-safe. Throws
  // dnnl::error.
  void run(void* const* args);

  // The OpenMP threads the primitives were created for, which is how many a run uses.
  int32_t threads() const { return created_threads_; }

  const std::vector<RepackedConstant>& repacked() const { return repacked_; }
  // The oneDNN implementation of each primitive, e.g. "jit:avx512_core" (for tests and reports).
  const std::vector<std::string>& implementations() const { return impls_; }

  // ---- Used by the operation builders (dnnl_ops_*.cpp) while the kernel is created. ----
  const dnnl::engine& engine() const { return engine_; }
  // The element type (collage_dtype_t) of an argument or constant operand.
  int32_t source_dtype(const Operand& op) const;
  // The operand's memory descriptor: plain, transposed or channel-blocked for arguments, the
  // stored layout for constants. Checks the index, the kind (an output must be an output argument), the element
  // type (`dtype` as collage_dtype_t) and that the dims fit the buffer.
  dnnl::memory::desc input_md(const Operand& op, int32_t dtype = COLLAGE_DTYPE_F32) const;
  dnnl::memory::desc output_md(const Operand& op, int32_t dtype = COLLAGE_DTYPE_F32) const;
  // The same dims with format_tag::any, for primitive creation.
  static dnnl::memory::desc any_md(const dnnl::memory::desc& md);
  // What a primitive that picks its own layout is created with for the argument operand `op` of
  // descriptor `md`: `md` itself when the argument is channel-blocked (the caller passes a
  // blocked value, which the primitive then reads or writes in place), else any_md(md).
  static dnnl::memory::desc create_md(const Operand& op, const dnnl::memory::desc& md);
  // A buffer holding the operand in layout `want`: the operand itself when the layouts agree; for
  // a constant, a copy reordered now; for an argument, a scratch copy reordered by a new step.
  BufRef bind_input(const Operand& op, const dnnl::memory::desc& want);
  // Where a primitive producing layout `produced` writes the output `op`; call finish_output
  // after the primitive's step.
  OutputBinding bind_output(const Operand& op, const dnnl::memory::desc& produced);
  void finish_output(const OutputBinding& out);
  // A region of the per-call scratch block.
  BufRef scratch(const dnnl::memory::desc& md);
  // Attributes every primitive is created with (user-managed scratchpad), plus `post_ops`.
  dnnl::primitive_attr attr(const PostOpPlan* post_ops = nullptr) const;
  PostOpPlan plan_post_ops(const std::vector<PostOp>& ops, const std::vector<int64_t>& dst_dims,
                           bool allow_sum) const;
  // Adds the post-op operands to `args`; a sum addend is first copied into `dst`.
  void bind_post_ops(const PostOpPlan& plan, const OutputBinding& dst, std::vector<StepArg>& args);
  // Adds a step for `pd`'s primitive; appends the scratchpad argument when it needs one.
  void add_step(const dnnl::primitive_desc_base& pd, dnnl::primitive prim,
                std::vector<StepArg> args);
  void add_reorder(BufRef from, const dnnl::memory::desc& from_md, BufRef to,
                   const dnnl::memory::desc& to_md);
  // Adds a step that runs `fn` on the CPU (after the steps before it finished); `name` is its
  // entry in implementations().
  void add_host_step(std::string name, std::vector<StepArg> args,
                     std::function<void(const StepMemory&)> fn);
  // Adds a step that runs the primitives of `pds` side by side, each on one thread of an OpenMP
  // team (so each must have been created for one thread), or one after the other where the
  // team is smaller. `args[i]` are primitive i's arguments (by plain DNNL_ARG_*); each gets its
  // own scratchpad.
  void add_side_by_side_step(const std::vector<dnnl::primitive_desc>& pds,
                             std::vector<dnnl::primitive> prims,
                             std::vector<std::vector<StepArg>> args);

 private:
  struct Slot;
  void build(ParamReader& r, OpKind kind);
  dnnl::memory::desc constant_md(int32_t index) const;
  dnnl::memory::desc operand_md(const Operand& op, int32_t dtype, bool output) const;
  void init_slot(Slot& slot) const;
  void run_on(Slot& slot, void* const* args);
  void run_lanes(Slot& slot, size_t step);

  int32_t num_args_ = 0, num_inputs_ = 0;
  std::vector<size_t> arg_bytes_;
  std::vector<int32_t> arg_dtypes_;
  std::vector<int32_t> const_dtypes_;
  std::vector<size_t> const_bytes_;
  std::vector<Layout> layouts_;
  int32_t num_threads_ = 0;
  int32_t created_threads_ = 0;

  dnnl::engine engine_;
  std::vector<const void*> constants_;  // resolved pointers (borrowed or owned)
  std::vector<std::shared_ptr<void>> owned_;
  std::vector<RepackedConstant> repacked_;
  std::vector<bool> const_bound_;                              // constants some step already reads
  // Memory objects of the constants (or parts of them) that steps read, made once.
  struct ConstantMemory {
    BufRef buf;
    dnnl::memory::desc md;
    dnnl::memory memory;
  };
  std::vector<ConstantMemory> constant_memory_;
  const dnnl::memory& constant_memory(const BufRef& buf, const dnnl::memory::desc& md) const;
  std::vector<Step> steps_;
  std::vector<std::string> impls_;
  size_t scratch_bytes_ = 0;

  static constexpr int kSlots = 8;
  std::unique_ptr<Slot[]> slots_;
};

// Sets the calling thread's OpenMP thread count (its nthreads-var, which is per thread) to
// `threads` for the scope's lifetime when it is positive, and puts the previous one back.
class OmpThreadScope {
 public:
  explicit OmpThreadScope(int32_t threads);
  ~OmpThreadScope();
  OmpThreadScope(const OmpThreadScope&) = delete;
  OmpThreadScope& operator=(const OmpThreadScope&) = delete;

 private:
  int before_ = 0;
  bool set_ = false;
};

// Converts a memory descriptor to the serialisable layout; throws ParamError for layouts that
// cannot be stored (not blocked, with extra flags or offsets).
Layout layout_of(const dnnl::memory::desc& md);
// The memory descriptor of a stored layout, after checking that every element it addresses lies
// inside a buffer of `buffer_bytes` bytes (ParamError otherwise).
dnnl::memory::desc layout_md(const Layout& l, dnnl::memory::data_type dt, size_t buffer_bytes);
// Bytes a buffer in layout `md` must have: what oneDNN may touch, padding included.
size_t layout_bytes(const dnnl::memory::desc& md);
// A dense row-major descriptor; `transposed` swaps the strides of the last two axes.
dnnl::memory::desc plain_md(const std::vector<int64_t>& dims, dnnl::memory::data_type dt,
                            bool transposed = false);
// oneDNN's channel-blocked descriptor (nCw8c, nChw16c, nCdhw8c, ...) of `dims`, rank 3 to 5, for
// a block of 8 or 16 channels that divides dims[1]; ParamError otherwise.
dnnl::memory::desc blocked_md(const std::vector<int64_t>& dims, dnnl::memory::data_type dt,
                              int64_t c_block);
// oneDNN element type of a collage dtype; throws ParamError for types oneDNN lacks.
dnnl::memory::data_type dnnl_type(int32_t dtype);
size_t dtype_bytes(int32_t dtype);

// The operation builders, one per OpKind; each reads its parameter struct from `r`.
void build_conv(DnnlKernel& k, ParamReader& r, bool deconv);
void build_matmul(DnnlKernel& k, ParamReader& r);
void build_pool(DnnlKernel& k, ParamReader& r);
void build_softmax(DnnlKernel& k, ParamReader& r);
void build_layer_norm(DnnlKernel& k, ParamReader& r);
void build_eltwise(DnnlKernel& k, ParamReader& r);
void build_binary(DnnlKernel& k, ParamReader& r);
void build_concat(DnnlKernel& k, ParamReader& r);
void build_qconv(DnnlKernel& k, ParamReader& r);
void build_qmatmul(DnnlKernel& k, ParamReader& r);
void build_rnn(DnnlKernel& k, ParamReader& r);          // dnnl_ops_rnn.cpp
void build_deform_conv(DnnlKernel& k, ParamReader& r);  // dnnl_ops_deform.cpp
// QLinearMatMul's form of qmatmul (an 8-bit dst): the i32 sums from oneDNN into scratch, then
// requantised on the host in f64 as the reference executor does (oneDNN's f32 output scale
// would round some halves the other way).
void add_requantized_matmul(DnnlKernel& k, const MatMulParams& p, const QuantParams& q);

// The contractions behind build_conv / build_qconv and build_matmul / build_qmatmul; `quant`
// null: f32 with the post-ops of the params.
void add_conv(DnnlKernel& k, const ConvParams& p, bool deconv, const QuantParams* quant);
void add_matmul(DnnlKernel& k, const MatMulParams& p, const QuantParams* quant);

// Element types (collage_dtype_t) of an integer contraction's operands, checked: src u8 or s8,
// weights s8, bias (when present) s32, dst u8, s8 or s32. ParamError otherwise.
struct QuantTypes {
  int32_t src = COLLAGE_DTYPE_F32, weights = COLLAGE_DTYPE_F32, bias = COLLAGE_DTYPE_F32,
          dst = COLLAGE_DTYPE_F32;
};
QuantTypes quant_types(const DnnlKernel& k, const Operand& src, const Operand& weights,
                       const Operand& bias, const Operand& dst);
// The post-ops that requantise an 8-bit dst (round half to even, add the dst zero point); none
// for an s32 dst.
PostOpPlan quant_post_ops(const QuantParams& q, int32_t dst_dtype);
// Output scales (per channel along dst axis `channel_axis` when there are several) and the src
// zero point. ParamError when the scales do not fit the dst.
void set_quant_attr(dnnl::primitive_attr& attr, const QuantParams& q,
                    const std::vector<int64_t>& dst_dims, int channel_axis);

// Shared by the builders: the dnnl algorithm of our enumerations (ParamError when unknown).
dnnl::algorithm eltwise_algorithm(EltwiseAlg alg);
dnnl::algorithm binary_algorithm(BinaryAlg alg);
// Checks that the reader consumed its struct without error.
void check_reader(const ParamReader& r);

}  // namespace collage::rt_dnnl
