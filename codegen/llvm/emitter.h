// Emitter: translates one loop-IR PrimFunc into an LLVM function with the collage kernel ABI.
// Vectorized loops are emitted as explicit vector code (one vector iteration of `extent` lanes, a
// lane mask under lane-varying conditions), unrolled loops are repeated, and the outermost
// parallel loop is split into task chunks.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "collage/target.h"
#include "collage/loop_ir.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace collage::codegen::detail {

// A value in the emitter: a scalar, or a vector with one element per lane of the vectorized loop
// being emitted.
struct Val {
  llvm::Value* v = nullptr;
  bool vec = false;
};

class Emitter {
 public:
  Emitter(llvm::Module& module, const TargetSpec& target);

  // Defines `void f.name(void* const* args, int32_t task_id, int32_t task_count)` in the module.
  absl::Status emit_function(const te::PrimFunc& f);

 private:
  // ---- expressions (emit_expr.cpp)
  Val emit(const te::Expr& e);
  llvm::Value* emit_scalar(const te::Expr& e);
  Val emit_binary(te::ExprKind k, const te::BinaryNode& n);
  // Lane masks of the tail-guard form `affine(lane) < bound` as one compare of lane numbers.
  std::optional<Val> emit_lane_compare(te::ExprKind k, const te::BinaryNode& n);
  Val emit_cast(DType to, const te::Expr& value);
  llvm::Value* convert(llvm::Value* v, DType from, DType to);
  // Saturating float-to-integer conversion (emit_convert.cpp); `dst` is `to`'s register type.
  llvm::Value* float_to_int(llvm::Value* v, DType to, llvm::Type* dst);
  Val emit_load(const te::LoadNode& n);
  Val emit_select(const te::SelectNode& n);
  llvm::Value* int_div(llvm::Value* a, llvm::Value* b, const te::Expr& divisor, bool floor);
  llvm::Value* int_mod(llvm::Value* a, llvm::Value* b, const te::Expr& divisor, bool floor);
  // Unsigned quotient (or remainder); division by 0 gives 0.
  llvm::Value* uint_div(llvm::Value* a, llvm::Value* b, bool remainder);

  // ---- memory (emit_memory.cpp)
  // strided: lanes a constant number of elements apart other than 1 (a transpose's reads);
  // gather: anything else that varies across lanes.
  enum class Access { uniform, contiguous, strided, gather };
  te::Expr flat_index(const te::Buffer& b, const std::vector<te::Expr>& indices) const;
  // The access at `flat`; for a strided one, its distance between lanes in `stride`.
  Access classify(const te::Expr& flat, int64_t* stride = nullptr) const;
  llvm::Value* element_ptr(const te::Buffer& b, llvm::Value* flat);
  // The contiguous vector access at `flat`: the address of lane 0.
  llvm::Value* lane0_ptr(const te::Buffer& b, const te::Expr& flat);
  llvm::Value* vector_ptrs(const te::Buffer& b, const te::Expr& flat);
  // The address of lane `lane` of a strided access whose lane 0 is at `lane0`.
  llvm::Value* lane_ptr(const te::Buffer& b, llvm::Value* lane0, int64_t stride, unsigned lane);
  Val load_buffer(const te::Buffer& b, const std::vector<te::Expr>& indices);
  void store_buffer(const te::Buffer& b, const std::vector<te::Expr>& indices, Val value);
  llvm::Value* to_memory(llvm::Value* v, DType t);
  llvm::Value* from_memory(llvm::Value* v, DType t);
  llvm::Value* buffer_base(const te::Buffer& b);

  // ---- statements (emit_stmt.cpp)
  void emit(const te::Stmt& s);
  void emit_for(const te::ForNode& n);
  // Fills rolled_bodies_ for a kernel's body (the loops LLVM must not unroll).
  void find_rolled_loops(const te::Stmt& body);
  void emit_serial_loop(const te::Var& var, llvm::Value* begin, llvm::Value* end,
                        const te::Stmt& body);
  void emit_vector_loop(const te::ForNode& n);
  void emit_if(const te::IfThenElseNode& n);
  void emit_allocate(const te::AllocateNode& n);
  // The module's pointer variable `name` (kernel_workspace.h), defined on first use with
  // `fallback` (malloc or free, of `type`) as its value.
  llvm::GlobalVariable* workspace_hook(const char* name, const char* fallback,
                                       llvm::FunctionType* type);
  // Runs `emit_body` only when some lane of the current mask is active.
  void when_any_lane(const std::function<void()>& emit_body);

  // ---- math (emit_math.cpp)
  // `f` on `args`, giving a value of type `t` (the call's type).
  llvm::Value* emit_call(te::Intrinsic f, DType t, const std::vector<llvm::Value*>& args);
  // The libm function `name` (f32 or f64 by x's type, e.g. "tan" -> tanf) on each lane of x.
  llvm::Value* libm_call(const char* name, llvm::Value* x);
  // a << n or a >> n (arithmetic for signed t); 0 when n is at least the width.
  llvm::Value* shift(llvm::Value* a, llvm::Value* n, DType t, bool left);
  // e^r (the polynomial) and n (as an integer) of e^xc = 2^n * e^r, for xc already clamped.
  struct ExpParts {
    llvm::Value* y;
    llvm::Value* n;
  };
  ExpParts exp_parts(llvm::Value* xc);
  llvm::Value* math_exp(llvm::Value* x);
  llvm::Value* math_log(llvm::Value* x);
  llvm::Value* math_tanh(llvm::Value* x);
  llvm::Value* math_erf(llvm::Value* x);
  llvm::Value* math_sigmoid(llvm::Value* x);
  llvm::Value* fconst(llvm::Value* like, double v);
  llvm::Value* iconst(llvm::Value* like, int64_t v);
  llvm::Value* poly(llvm::Value* x, std::initializer_list<double> coeffs);

  // ---- types and helpers
  llvm::Type* reg_type(DType t) const;          // type of a value in registers
  llvm::Type* mem_type(DType t) const;          // type of an element in memory
  llvm::Type* with_lanes(llvm::Type* t) const;  // vector of the current lane count
  llvm::Value* broadcast(Val v);                // a vector (splat of a scalar)
  llvm::Value* make_bool(bool v);
  void fail(const std::string& what);

  llvm::Module& module_;
  llvm::LLVMContext& ctx_;
  TargetSpec target_;
  llvm::IRBuilder<> b_;
  std::string func_name_;
  llvm::Function* fn_ = nullptr;
  llvm::BasicBlock* entry_ = nullptr;
  llvm::Value* task_id_ = nullptr;
  llvm::Value* task_count_ = nullptr;
  const te::ForNode* task_loop_ = nullptr;
  std::set<const te::StmtNode*> rolled_bodies_;  // bodies of loops kept rolled (find_rolled_loops)

  std::map<const te::VarNode*, Val> vars_;
  std::map<const te::BufferNode*, llvm::Value*> buffers_;
  std::set<const te::VarNode*> varying_;  // variables whose value differs across lanes
  int lanes_ = 0;                         // lane count inside a vectorized loop, else 0
  te::Var vec_var_;                       // the vectorized loop's variable
  te::Expr vec_base_;                     // the vectorized loop's first value
  llvm::Value* mask_ = nullptr;           // active lanes; null when all are active
  absl::Status status_;
};

}  // namespace collage::codegen::detail
